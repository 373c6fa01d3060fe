"""ServiceAccount admission and the per-namespace objects of kube-controller-manager, checked
against what a kube-apiserver 1.36 cluster shows `kubectl get pod -o json` after `kubectl run`:
`serviceAccountName: default`, a `kube-api-access-<5 random>` projected volume (bound token,
`kube-root-ca.crt`, namespace) mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount
in every container and init container."""

from __future__ import annotations

import asyncio
import base64
import json
import re

import yaml

from tests.kit.pods import pod

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_NAME = re.compile(r"^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$")
PROJECTED = {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {
            "downwardAPI": {
                "items": [
                    {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                ]
            }
        },
    ],
}


def pod_manifest(name: str, namespace: str, spec: dict | None = None, **extra_spec) -> str:
    """The pod as JSON for `kubectl create -f -`: `spec` (default: one nginx container), `extra_spec`."""
    body = {**(spec or {"containers": [{"name": "app", "image": "nginx:1.25"}]}), **extra_spec}
    return json.dumps(pod(name, namespace=namespace, typed=True, **body))


async def get_json(kubectl, *args: str) -> dict:
    return (await kubectl(*args, "-o", "json")).json()


async def test_every_namespace_has_default_account_and_root_ca(kubectl, emulator):
    await kubectl("create", "namespace", "sa1")
    ca = yaml.safe_load(emulator.kubeconfig.read_text())["clusters"][0]["cluster"][
        "certificate-authority-data"
    ]
    for namespace in ("sa1", "default", "kube-system", "kube-public", "kube-node-lease"):
        account = await get_json(kubectl, "-n", namespace, "get", "serviceaccount", "default")
        assert "secrets" not in account  # no legacy token Secrets since 1.24
        cm = await get_json(kubectl, "-n", namespace, "get", "configmap", "kube-root-ca.crt")
        assert cm["data"]["ca.crt"] == base64.b64decode(ca).decode()
        assert "kube-apiserver" in cm["metadata"]["annotations"]["kubernetes.io/description"]
    listed = (await kubectl("-n", "sa1", "get", "sa")).out.splitlines()
    assert listed[0].split() == ["NAME", "SECRETS", "AGE"] and listed[1].split()[:2] == ["default", "0"]


async def test_kubectl_run_pod_gets_the_token_volume(kubectl):
    await kubectl("create", "namespace", "sa2")  # and a pod at once: the account is already there
    await kubectl("-n", "sa2", "run", "web", "--image=nginx:1.25")
    got = await get_json(kubectl, "-n", "sa2", "get", "pod", "web")
    spec = got["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert VOLUME_NAME.match(volume["name"]), volume["name"]
    assert volume["projected"] == PROJECTED
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": MOUNT}
    ]


async def test_every_container_and_init_container_mounts_one_volume(kubectl):
    await kubectl("create", "namespace", "sa3")
    spec = {
        "initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [
            {"name": "a", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
            {"name": "b", "image": "nginx"},
            # its own mount at the token path keeps the token out of this container
            {"name": "own", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": MOUNT}]},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }
    await kubectl("create", "-f", "-", stdin=pod_manifest("multi", "sa3", spec))
    got = (await get_json(kubectl, "-n", "sa3", "get", "pod", "multi"))["spec"]
    assert len(got["volumes"]) == 2 and got["volumes"][0]["name"] == "data"
    token = got["volumes"][1]["name"]
    assert VOLUME_NAME.match(token)
    mount = {"name": token, "readOnly": True, "mountPath": MOUNT}
    assert got["initContainers"][0]["volumeMounts"] == [mount]
    by_name = {c["name"]: c["volumeMounts"] for c in got["containers"]}
    assert by_name["a"] == [{"name": "data", "mountPath": "/data"}, mount]
    assert by_name["b"] == [mount]
    assert by_name["own"] == [{"name": "data", "mountPath": MOUNT}]


async def test_automount_opt_out_pod_first_then_account(kubectl):
    await kubectl("create", "namespace", "sa4")
    await kubectl("create", "-f", "-", stdin=pod_manifest("off", "sa4", automountServiceAccountToken=False))
    off = (await get_json(kubectl, "-n", "sa4", "get", "pod", "off"))["spec"]
    assert off["serviceAccountName"] == "default" and "volumes" not in off
    assert "volumeMounts" not in off["containers"][0]

    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "quiet", "namespace": "sa4"},
        "automountServiceAccountToken": False,
        "imagePullSecrets": [{"name": "registry"}],
    }
    await kubectl("create", "-f", "-", stdin=json.dumps(account))
    await kubectl("create", "-f", "-", stdin=pod_manifest("quiet", "sa4", serviceAccountName="quiet"))
    quiet = (await get_json(kubectl, "-n", "sa4", "get", "pod", "quiet"))["spec"]
    assert "volumes" not in quiet
    assert quiet["imagePullSecrets"] == [{"name": "registry"}]  # copied from the account
    await kubectl(
        "create",
        "-f",
        "-",
        stdin=pod_manifest("loud", "sa4", serviceAccountName="quiet", automountServiceAccountToken=True),
    )
    loud = (await get_json(kubectl, "-n", "sa4", "get", "pod", "loud"))["spec"]
    assert VOLUME_NAME.match(loud["volumes"][0]["name"])


async def test_missing_service_account_is_forbidden(kubectl):
    await kubectl("create", "namespace", "sa5")
    result = await kubectl(
        "create", "-f", "-", stdin=pod_manifest("p", "sa5", serviceAccountName="nobody"), check=False
    )
    assert result.code != 0
    expected = 'pods "p" is forbidden: error looking up service account sa5/nobody: serviceaccount "nobody"'
    assert f"{expected} not found" in result.err


async def test_mirror_pods_are_left_alone(kubectl):
    await kubectl("create", "namespace", "sa6")
    mirror = json.loads(pod_manifest("static-node1", "sa6"))
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    await kubectl("create", "-f", "-", stdin=json.dumps(mirror))
    got = (await get_json(kubectl, "-n", "sa6", "get", "pod", "static-node1"))["spec"]
    assert "volumes" not in got and not got.get("serviceAccountName")


async def test_deleted_defaults_come_back(kubectl):
    await kubectl("create", "namespace", "sa7")
    await kubectl("-n", "sa7", "delete", "serviceaccount", "default")
    await kubectl("-n", "sa7", "delete", "configmap", "kube-root-ca.crt")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while True:
        sa = await kubectl("-n", "sa7", "get", "sa", "default", check=False)
        cm = await kubectl("-n", "sa7", "get", "cm", "kube-root-ca.crt", check=False)
        if sa.code == 0 and cm.code == 0:
            break
        assert loop.time() < deadline, "default ServiceAccount / kube-root-ca.crt were not recreated"
        await asyncio.sleep(0.1)


async def test_namespace_deletion_takes_the_defaults_along(kubectl):
    await kubectl("create", "namespace", "sa8")
    await kubectl("delete", "namespace", "sa8", "--wait=true", timeout=60)
    gone = await kubectl("-n", "sa8", "get", "sa", "default", check=False)
    assert gone.code != 0 and "NotFound" in gone.err
