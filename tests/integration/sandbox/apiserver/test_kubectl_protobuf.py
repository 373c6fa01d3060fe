"""kubectl's typed clients send built-in objects as protobuf; the emulator decodes them like
kube-apiserver (``kubectl create ns|configmap|secret|deployment|service|job|cronjob|pdb``)."""

from __future__ import annotations

import base64


async def test_create_generators_send_protobuf(kubectl):
    await kubectl("create", "namespace", "pb")
    ns = (await kubectl("get", "ns", "pb", "-o", "json")).json()
    assert ns["status"]["phase"] == "Active"

    await kubectl("-n", "pb", "create", "configmap", "cm", "--from-literal=a=1", "--from-literal=empty=")
    cm = (await kubectl("-n", "pb", "get", "cm", "cm", "-o", "json")).json()
    assert cm["data"] == {"a": "1", "empty": ""}

    await kubectl("-n", "pb", "create", "secret", "generic", "s", "--from-literal=pw=hunter2")
    secret = (await kubectl("-n", "pb", "get", "secret", "s", "-o", "json")).json()
    assert secret["type"] == "Opaque"
    assert base64.b64decode(secret["data"]["pw"]) == b"hunter2"


async def test_deployment_keeps_explicit_zero_and_gets_defaults(kubectl):
    await kubectl("create", "namespace", "pbd")
    await kubectl("-n", "pbd", "create", "deployment", "web", "--image=nginx", "--replicas=0", "--port=80")
    dep = (await kubectl("-n", "pbd", "get", "deploy", "web", "-o", "json")).json()
    # replicas is a pointer: an explicit 0 survives instead of defaulting to 1
    assert dep["spec"]["replicas"] == 0
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert dep["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": "25%"}
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert "generateName" not in dep["metadata"]
    assert dep["metadata"]["generation"] == 1


async def test_service_job_cronjob_pdb_and_job_from_cronjob(kubectl):
    await kubectl("create", "namespace", "pbj")
    await kubectl("-n", "pbj", "create", "service", "clusterip", "svc", "--tcp=80:8080")
    svc = (await kubectl("-n", "pbj", "get", "svc", "svc", "-o", "json")).json()
    assert svc["spec"]["ports"][0]["port"] == 80
    assert svc["spec"]["ports"][0]["targetPort"] == 8080  # IntOrString, int form

    await kubectl("-n", "pbj", "create", "job", "j", "--image=busybox", "--", "echo", "hi")
    job = (await kubectl("-n", "pbj", "get", "job", "j", "-o", "json")).json()
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]

    await kubectl("-n", "pbj", "create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *")
    await kubectl("-n", "pbj", "create", "job", "manual", "--from=cronjob/cj")
    manual = (await kubectl("-n", "pbj", "get", "job", "manual", "-o", "json")).json()
    owner = manual["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "cj", True)
    assert manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"

    await kubectl("-n", "pbj", "create", "pdb", "pdb", "--selector=app=web", "--min-available=50%")
    pdb = (await kubectl("-n", "pbj", "get", "pdb", "pdb", "-o", "json")).json()
    assert pdb["spec"]["minAvailable"] == "50%"  # IntOrString, string form


async def test_protobuf_errors_are_status_bodies(kubectl):
    await kubectl("create", "namespace", "pbe")
    again = await kubectl("create", "namespace", "pbe", check=False)
    assert again.code != 0
    assert 'namespaces "pbe" already exists' in again.err


async def test_auth_can_i_sends_a_protobuf_access_review(kubectl):
    result = await kubectl("auth", "can-i", "create", "deployments", "-n", "default")
    assert result.out.strip() == "yes"
