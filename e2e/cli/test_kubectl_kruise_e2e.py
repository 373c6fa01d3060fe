"""`kubectl kruise ...` for real: kubectl finds the installed `kubectl-kruise` on PATH and runs it,
the plugin reads the kubeconfig from KUBECONFIG, and the cluster's own Deployment controller (the
sandbox simulator's, or a real one) drives the rollout the plugin watches."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from harness import Cluster, kubectl_kruise

pytestmark = pytest.mark.e2e

# This cluster runs no kruise-webhook, so nothing answers the CRDs' conversion webhook: on the 2.0 API
# set kubectl's preferred version (v1beta1) would fail; v1alpha1, served by both sets, needs no conversion.
ALPHA_CLONESETS = "clonesets.v1alpha1.apps.kruise.io"


async def kruise(
    cluster: Cluster, *args: str, check: bool = True, timeout: float = 90.0
) -> tuple[int, str, str]:
    return await kubectl_kruise(cluster, *args, check=check, timeout=timeout)


async def apply(cluster: Cluster, obj: dict) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


def deployment(ns: str, image: str) -> dict:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


@pytest.fixture
async def namespace(cluster: Cluster):
    name = f"e2e-kk-{uuid.uuid4().hex[:6]}"
    await apply(cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    await cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


async def test_plugin_is_found_by_kubectl(cluster: Cluster):
    code, out, _ = await kruise(cluster, "--help")
    assert code == 0
    assert "rollout" in out and "scaledown" in out and "\n    scale  " in out


async def test_deployment_rollout_status_history_and_undo(cluster: Cluster, namespace: str):
    await apply(cluster, deployment(namespace, "nginx:1.25"))
    _, out, _ = await kruise(cluster, "rollout", "status", "deploy/web", "-n", namespace, "--timeout=60s")
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'

    await apply(cluster, deployment(namespace, "nginx:1.26"))
    _, out, _ = await kruise(cluster, "rollout", "status", "deployment/web", "-n", namespace, "--timeout=60s")
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'

    _, out, _ = await kruise(cluster, "rollout", "history", "deployment/web", "-n", namespace)
    assert out == "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    _, out, _ = await kruise(cluster, "rollout", "history", "deployment/web", "--revision=1", "-n", namespace)
    assert "    Image:\tnginx:1.25\n" in out

    _, out, _ = await kruise(cluster, "rollout", "undo", "deployment/web", "-n", namespace)
    assert out == "deployment.apps/web rolled back\n"
    await kruise(cluster, "rollout", "status", "deployment/web", "-n", namespace, "--timeout=60s")
    _, image = await cluster.kubectl(
        "get",
        "deployment",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    )
    assert image == "nginx:1.25"


async def test_cloneset_pause_resume_status_and_set_image(cluster: Cluster, namespace: str):
    labels = {"app": "demo"}
    await apply(cluster, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _, out, _ = await kruise(cluster, "rollout", "pause", "cloneset/demo", "-n", namespace)
    assert out == "cloneset.apps.kruise.io/demo paused\n"
    _, paused = await cluster.kubectl(
        "get", ALPHA_CLONESETS, "demo", "-n", namespace, "-o", "jsonpath={.spec.updateStrategy.paused}"
    )
    assert paused == "true"
    code, _, err = await kruise(cluster, "rollout", "pause", "clone/demo", "-n", namespace, check=False)
    assert (code, err) == (1, 'error: clonesets.apps.kruise.io "demo" is already paused\n')
    _, out, _ = await kruise(cluster, "rollout", "resume", "clonesets.apps.kruise.io/demo", "-n", namespace)
    assert out == "cloneset.apps.kruise.io/demo resumed\n"

    _, generation = await cluster.kubectl(
        "get", ALPHA_CLONESETS, "demo", "-n", namespace, "-o", "jsonpath={.metadata.generation}"
    )
    status = {"status": {"observedGeneration": int(generation), "replicas": 2, "updatedReplicas": 2,
                         "readyReplicas": 2, "updatedReadyReplicas": 2, "availableReplicas": 2,
                         "updateRevision": "demo-1"}}  # fmt: skip
    await cluster.kubectl(
        "patch",
        ALPHA_CLONESETS,
        "demo",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(status),
    )
    _, out, _ = await kruise(cluster, "rollout", "status", "cloneset/demo", "-n", namespace, "--timeout=30s")
    assert out == "CloneSet rolling update complete 2 pods at revision demo-1...\n"

    code, _, err = await kruise(
        cluster, "rollout", "status", "cloneset/missing", "-n", namespace, check=False
    )
    assert (code, err) == (1, 'Error from server (NotFound): clonesets.apps.kruise.io "missing" not found\n')


async def test_arguments_after_double_dash_reach_the_plugin(cluster: Cluster, namespace: str):
    _, out, _ = await kruise(
        cluster, "create", "job", "once", "--image=busybox", "--dry-run=client", "-o", "json",
        "-n", namespace, "--", "sh", "-c", "echo --flag",
    )  # fmt: skip
    job = json.loads(out)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "-c", "echo --flag"]
    code, _, err = await kruise(cluster, "rollout", "status", "--watch=maybe", "cloneset/x", check=False)
    assert code == 1
    assert err.startswith('error: argument -w/--watch: strconv.ParseBool: parsing "maybe": invalid syntax')


async def test_scale_cloneset_and_deployment_through_the_plugin(cluster: Cluster, namespace: str):
    labels = {"app": "demo"}
    await apply(cluster, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _, out, _ = await kruise(cluster, "scale", "cloneset/demo", "--replicas=4", "-n", namespace)
    assert out == "cloneset.apps.kruise.io/demo scaled\n"
    _, size = await cluster.kubectl(
        "get", ALPHA_CLONESETS, "demo", "-n", namespace, "-o", "jsonpath={.spec.replicas}"
    )
    assert size == "4"
    code, _, err = await kruise(
        cluster,
        "scale",
        "clone",
        "demo",
        "--current-replicas=3",
        "--replicas=1",
        "-n",
        namespace,
        check=False,
    )
    assert (code, err) == (1, "error: Expected replicas to be 3, was 4\n")

    # The Deployment controller moves status.replicas; --timeout waits for it.
    await apply(cluster, deployment(namespace, "nginx:1.25"))
    _, out, _ = await kruise(cluster, "scale", "deploy/web", "--replicas=3", "--timeout=60s", "-n", namespace)
    assert out == "deployment.apps/web scaled\n"
    _, ready = await cluster.kubectl(
        "get", "deployment", "web", "-n", namespace, "-o", "jsonpath={.status.replicas}"
    )
    assert ready == "3"


async def test_set_resources_on_a_cloneset_through_the_plugin(cluster: Cluster, namespace: str):
    labels = {"app": "sized"}
    await apply(cluster, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "sized", "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _, out, _ = await kruise(
        cluster, "set", "resources", "cloneset/sized", "-n", namespace,
        "--limits=cpu=200m,memory=128Mi", "--requests=cpu=0.1",
    )  # fmt: skip
    assert out == "cloneset.apps.kruise.io/sized resource requirements updated\n"
    _, stored = await cluster.kubectl(
        "get",
        ALPHA_CLONESETS,
        "sized",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.containers[0].resources}",
    )
    assert json.loads(stored) == {"limits": {"cpu": "200m", "memory": "128Mi"}, "requests": {"cpu": "100m"}}
    code, _, err = await kruise(
        cluster,
        "set",
        "resources",
        "cloneset/sized",
        "-n",
        namespace,
        "-c",
        "ghost",
        "--limits=cpu=1",
        check=False,
    )
    assert (code, err) == (1, "error: error: unable to find container named ghost\n")


async def test_set_serviceaccount_on_a_cloneset_through_the_plugin(cluster: Cluster, namespace: str):
    labels = {"app": "robot"}
    await apply(cluster, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "robot", "namespace": namespace},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _, out, _ = await kruise(cluster, "set", "serviceaccount", "cloneset/robot", "builder", "-n", namespace)
    assert out == "cloneset.apps.kruise.io/robot serviceaccount updated\n"
    _, account = await cluster.kubectl(
        "get",
        ALPHA_CLONESETS,
        "robot",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.serviceAccountName}",
    )
    assert account == "builder"
    code, _, err = await kruise(
        cluster, "set", "sa", "cloneset/ghost", "builder", "-n", namespace, check=False
    )
    assert (code, err) == (1, 'Error from server (NotFound): clonesets.apps.kruise.io "ghost" not found\n')


async def test_set_selector_on_a_service_through_the_plugin(cluster: Cluster, namespace: str):
    await cluster.kubectl("create", "service", "clusterip", "front", "--tcp=80", "-n", namespace)
    _, out, _ = await kruise(cluster, "set", "selector", "svc/front", "app=shop,env=qa", "-n", namespace)
    assert out == "service/front selector updated\n"
    _, selector = await cluster.kubectl(
        "get", "service", "front", "-n", namespace, "-o", "jsonpath={.spec.selector}"
    )
    assert json.loads(selector) == {"app": "shop", "env": "qa"}


async def test_set_subject_on_a_rolebinding_through_the_plugin(cluster: Cluster, namespace: str):
    await cluster.kubectl(
        "create", "rolebinding", "readers", "--clusterrole=view", "--user=alice", "-n", namespace
    )
    _, out, _ = await kruise(
        cluster,
        "set",
        "subject",
        "rolebinding/readers",
        "--group=ops",
        "--serviceaccount=:robot",
        "-n",
        namespace,
    )
    assert out == "rolebinding.rbac.authorization.k8s.io/readers subjects updated\n"
    _, subjects = await cluster.kubectl(
        "get", "rolebinding", "readers", "-n", namespace, "-o", "jsonpath={.subjects}"
    )
    assert [(s["kind"], s["name"], s.get("namespace")) for s in json.loads(subjects)] == [
        ("User", "alice", None), ("Group", "ops", None), ("ServiceAccount", "robot", namespace)
    ]  # fmt: skip


# A stand-in for Kruise Rollouts' CRD (openkruise/rollouts is not part of kruise-py): enough for kubectl
# and the plugin to serve, read and patch a Rollout's status.
ROLLOUT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "rollouts.rollouts.kruise.io"},
    "spec": {"group": "rollouts.kruise.io", "scope": "Namespaced",
             "names": {"kind": "Rollout", "plural": "rollouts", "singular": "rollout", "shortNames": ["ro"],
                       "listKind": "RolloutList"},
             "versions": [{"name": "v1beta1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}  # fmt: skip


async def test_rollout_approve_through_the_plugin(cluster: Cluster, namespace: str):
    await apply(cluster, ROLLOUT_CRD)
    await cluster.kubectl(
        "wait", "--for=condition=Established", "crd/rollouts.rollouts.kruise.io", "--timeout=30s"
    )
    await apply(cluster, {
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
        "metadata": {"name": "canary", "namespace": namespace},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    })  # fmt: skip
    paused = {"status": {"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}}
    await cluster.kubectl(
        "patch",
        "rollout",
        "canary",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(paused),
    )
    _, out, _ = await kruise(cluster, "rollout", "approve", "rollout/canary", "-n", namespace)
    assert out == "rollout.rollouts.kruise.io/canary approved\n"
    _, state = await cluster.kubectl(
        "get", "rollout", "canary", "-n", namespace, "-o", "jsonpath={.status.canaryStatus.currentStepState}"
    )
    assert state == "StepReady"
    code, _, err = await kruise(cluster, "rollout", "approve", "rollout/canary", "-n", namespace, check=False)
    assert (code, err) == (1, 'error: rollouts.rollouts.kruise.io "canary" does not allow to approve, '
                              "because current canary state is not 'StepPaused'\n")  # fmt: skip


async def web_pods(cluster: Cluster, namespace: str) -> dict[str, str]:
    """The running Deployment's pods: name -> pod-template-hash."""
    await kruise(cluster, "rollout", "status", "deploy/web", "-n", namespace, "--timeout=60s")
    _, out = await cluster.kubectl(
        "get", "pods", "-n", namespace, "-l", "app=web", "-o",
        'jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.pod-template-hash}{"\\n"}{end}',
    )  # fmt: skip
    return dict(line.split() for line in out.splitlines() if line.strip())


async def test_exec_streams_through_kubectl_exec_on_a_pod_of_the_workload(cluster: Cluster, namespace: str):
    await apply(cluster, deployment(namespace, "nginx:1.25"))
    pods = await web_pods(cluster, namespace)
    # kubectl checks the container before any stream opens: its refusal names the pod the plugin chose.
    code, _, err = await kruise(cluster, "exec", "deploy/web", "-n", namespace, "-c", "nope", "--", "true",
                                check=False)  # fmt: skip
    assert code == 1
    chosen = re.search(r"is not valid for pod (\S+)", err)
    assert chosen is not None and chosen.group(1) in pods, err
    code, out, err = await kruise(
        cluster, "exec", "deploy/web", "-n", namespace, "--", "echo", "hi", check=False
    )
    if cluster.is_sandbox:  # the simulator's fake runtime has no process to run: its kubelet says so
        assert code == 1 and "exec is not supported by the fake runtime" in err, err
    else:
        assert (code, out) == (0, "hi\n")


async def test_get_all_lists_a_cloneset_through_the_plugin(cluster: Cluster, namespace: str):
    labels = {"app": "listed"}
    await apply(cluster, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "listed", "namespace": namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _, out, _ = await kruise(cluster, "get", "all", "-n", namespace)
    lines = out.splitlines()
    at = lines.index("clonesets.apps.kruise.io:")
    assert lines[at - 1] == ""
    assert lines[at + 1].startswith("NAME        \tDESIRED \tUPDATED \tUPDATED_READY \tUPDATED_AVAILABLE \t")
    assert lines[at + 2].startswith("listed      \t2       \t")


async def test_describe_rollout_through_the_plugin(cluster: Cluster, namespace: str):
    await apply(cluster, ROLLOUT_CRD)
    await cluster.kubectl(
        "wait", "--for=condition=Established", "crd/rollouts.rollouts.kruise.io", "--timeout=30s"
    )
    await apply(cluster, deployment(namespace, "nginx:1.25"))
    pods = await web_pods(cluster, namespace)
    stable = next(iter(pods.values()))
    await apply(cluster, {
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "strategy": {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}}},
    })  # fmt: skip
    _, generation = await cluster.kubectl(
        "get", "rollout", "web", "-n", namespace, "-o", "jsonpath={.metadata.generation}"
    )
    status = {"status": {"observedGeneration": int(generation), "phase": "Healthy",
                         "canaryStatus": {"stableRevision": stable, "podTemplateHash": stable}}}  # fmt: skip
    await cluster.kubectl(
        "patch",
        "rollout",
        "web",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(status),
    )
    _, out, _ = await kruise(cluster, "describe", "rollout", "web", "-n", namespace, "--no-color")
    head, _, table = out.partition("NAME ")
    assert head == (
        f"Name:              web\nNamespace:         {namespace}\nStatus:             Healthy\n"
        "Strategy:          Canary\n Step:             0/2\n Steps:\n"
        "  -  Replicas:     1\n  -  Replicas:     100%\n"
        f"Images:            nginx:1.25\nCurrent Revision:  {stable}\nUpdate Revision:   \n"
        "Replicas:\n Desired:          2\n Updated:          2\n Current:          2\n"
        " Ready:            2\n Available:        2\n"
    )
    rows = [line.split() for line in table.splitlines()[1:]]
    assert sorted(row[0] for row in rows) == sorted(pods)
    assert all(row[1] == "1/1" and row[2] == stable and row[-1] == "Running" for row in rows), rows
