"""The sandbox as a newcomer meets it: real processes, real kubectl, a real HTTPS webhook."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from harness import Cluster, SandboxProcess, ready_kubeconfig

from tests.kit.webhook_server import WebhookServer, make_certificates

pytestmark = pytest.mark.e2e

CRD_DIR = Path(__file__).resolve().parent.parent / "crds"


async def test_nodes_are_listed(cluster: Cluster):
    _, out = await cluster.kubectl("get", "nodes", "-o", "json")
    nodes = json.loads(out)["items"]
    if cluster.nodes is not None:
        assert len(nodes) == cluster.nodes
    assert nodes, "a cluster without nodes"
    for node in nodes:
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"


def repository_crds() -> list[str]:
    names = []
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
    return names


async def test_crds_are_established(sandbox_only: Cluster):
    names = repository_crds()
    if not names:
        pytest.skip("crds/ holds no CustomResourceDefinitions yet")
    await sandbox_only.kubectl(
        "wait", "--for=condition=Established", "--timeout=30s", *(f"crd/{n}" for n in names)
    )
    _, out = await sandbox_only.kubectl("api-resources", "--api-group=apps.kruise.io", "-o", "name")
    assert out.strip(), "no apps.kruise.io resources are served"


def configmap(name: str, namespace: str) -> str:
    # kubectl apply sends JSON; `kubectl create configmap` sends protobuf, which the emulator refuses (415).
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"a": "b"},
        }
    )


async def test_webhook_by_url_is_called_over_https(sandbox_only: Cluster):
    certificates = make_certificates(["localhost"])
    server = await WebhookServer(certificates).start()
    namespace = f"e2e-{uuid.uuid4().hex[:8]}"
    config = f"e2e-deny-{namespace}"
    server.routes["/deny"] = lambda request: {
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": f"no {request['kind']['kind']} here"},
    }
    webhook = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": config},
        "webhooks": [
            {
                "name": "deny.e2e.kruise.io",
                "clientConfig": {"url": server.url("/deny"), "caBundle": certificates.ca_bundle},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["configmaps"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
            }
        ],
    }
    try:
        namespace_object = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        await sandbox_only.kubectl("apply", "-f", "-", stdin=json.dumps(namespace_object))
        await sandbox_only.kubectl("apply", "-f", "-", stdin=json.dumps(webhook))
        code, out = await sandbox_only.kubectl(
            "apply", "-f", "-", stdin=configmap("blocked", namespace), check=False
        )
        assert code != 0
        assert 'admission webhook "deny.e2e.kruise.io" denied the request: no ConfigMap here' in out
        (review,) = server.received["/deny"]
        assert review["request"]["namespace"] == namespace and review["request"]["operation"] == "CREATE"
        # outside the selected namespace nothing is called
        await sandbox_only.kubectl("apply", "-f", "-", stdin=configmap(f"free-{namespace}", "default"))
        assert len(server.received["/deny"]) == 1
    finally:
        await sandbox_only.kubectl(
            "delete", "validatingwebhookconfiguration", config, "--ignore-not-found", check=False
        )
        await sandbox_only.kubectl(
            "delete", "namespace", namespace, "--wait=false", "--ignore-not-found", check=False
        )
        await sandbox_only.kubectl("delete", "configmap", f"free-{namespace}", "-n", "default", check=False)
        await server.stop()


def test_sandbox_stops_cleanly_on_sigterm(tmp_path: Path):
    sandbox = SandboxProcess.start("--nodes", "0", "--kubeconfig", str(tmp_path / "kubeconfig"))
    try:
        kubeconfig = ready_kubeconfig(sandbox.wait_for("ready", 60))
        assert kubeconfig == tmp_path / "kubeconfig" and kubeconfig.exists()
    finally:
        code = sandbox.terminate()
    assert code == 0, sandbox.output


def running_pods(output: list[str]) -> dict[str, int]:
    """How many `kubectl get pods` rows the demo printed as Running, by name prefix."""
    prefixes = (
        "sandbox-demo-",
        "kruise-controller-manager-",
        "kruise-webhook-",
        "kruise-daemon-",
        "demo-cloneset-",
    )
    counts: dict[str, int] = {}
    for line in output:
        if " Running " not in line:
            continue
        name = line.split()[0]
        prefix = next((p for p in prefixes if name.startswith(p)), name)
        counts[prefix] = counts.get(prefix, 0) + 1
    return counts


def test_demo_runs_with_real_kubectl(tmp_path: Path):
    """The default `kruise sandbox up --demo`: kruise-py installed by its Helm chart, its pods in
    kruise-system read with `kubectl logs`, then the Deployment and CloneSet tours."""
    logs = tmp_path / "logs"
    sandbox = SandboxProcess.start(
        "--nodes",
        "1",
        "--speed",
        "20",
        "--demo",
        "--kubeconfig",
        str(tmp_path / "kc"),
        "--log-dir",
        str(logs),
    )
    try:
        sandbox.wait_for("ready", 150)
        sandbox.wait_for("demo finished", 150)
    finally:
        code = sandbox.terminate()
    assert code == 0, sandbox.output
    assert any("successfully rolled out" in line for line in sandbox.output), sandbox.output
    # the Deployment's one pod; kruise-system's two managers, two webhooks and the node's daemon;
    # then demo-cloneset's three pods twice: before and after the in-place update
    assert running_pods(sandbox.output) == {
        "sandbox-demo-": 1,
        "kruise-controller-manager-": 2,
        "kruise-webhook-": 2,
        "kruise-daemon-": 1,
        "demo-cloneset-": 6,
    }, sandbox.output
    assert sum("successfully update pod demo-cloneset-" in line for line in sandbox.output) == 3, (
        sandbox.output
    )
    # kruise-py logs like any cluster's pods: the CLI says how to read them, the demo does it
    hint = "logs of kruise-py: kubectl get pods -n kruise-system; kubectl logs -n kruise-system <pod>"
    assert any(hint in line for line in sandbox.output), sandbox.output
    (at,) = [i for i, line in enumerate(sandbox.output) if line.startswith("$ kubectl logs -n kruise-system")]
    assert sandbox.output[at + 1].strip() and not sandbox.output[at + 1].startswith("$ "), sandbox.output
    assert not any(f"{logs}" in line for line in sandbox.output), "no host process logs on the Helm path"
    assert not logs.exists()


def test_host_processes_log_to_the_log_dir(tmp_path: Path):
    """`--host-processes`: kruise-webhook, kruise-manager and a kruise-daemon per node run on the host,
    each saying where it logs, and the file holds its output."""
    logs = tmp_path / "logs"
    sandbox = SandboxProcess.start(
        "--nodes",
        "1",
        "--speed",
        "20",
        "--host-processes",
        "--kubeconfig",
        str(tmp_path / "kc"),
        "--log-dir",
        str(logs),
    )
    try:
        sandbox.wait_for("ready", 90)
        sandbox.wait_for("  logs of kruise-daemon/node-1", 30)
    finally:
        code = sandbox.terminate()
    assert code == 0, sandbox.output
    assert not any("kubectl logs -n kruise-system" in line for line in sandbox.output), sandbox.output
    for name in ("kruise-webhook", "kruise-manager", "kruise-daemon-node-1"):
        assert any(f"{logs / name}.log" in line for line in sandbox.output), sandbox.output
        assert (logs / f"{name}.log").read_text().strip()


INVALID_CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "bad", "namespace": "default"},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "a"}},
        "template": {
            "metadata": {"labels": {"app": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:alpine"}]},
        },
    },
}


async def test_sandbox_up_runs_kruise_webhook_in_the_admission_path(tmp_path: Path):
    """`kruise sandbox up` (without --no-kruise) answers admission with the real kruise-webhook."""
    sandbox = SandboxProcess.start("--nodes", "0", "--kubeconfig", str(tmp_path / "kc"))
    try:
        cluster = Cluster(ready_kubeconfig(sandbox.wait_for("ready", 90)), is_sandbox=True, nodes=0)
        code, out = await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(INVALID_CLONESET), check=False)
        assert code != 0
        assert 'admission webhook "vcloneset.kb.io" denied the request' in out
        assert "spec.template.metadata.labels" in out
        valid = json.loads(json.dumps(INVALID_CLONESET))
        valid["metadata"]["name"] = "good"
        valid["spec"]["template"]["metadata"]["labels"] = {"app": "a"}
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(valid))
        # v1alpha1 named: on the 2.0 API set kubectl's preferred v1beta1 has rollingUpdate.podUpdatePolicy
        _, out = await cluster.kubectl("get", "clonesets.v1alpha1.apps.kruise.io", "good", "-o", "json")
        spec = json.loads(out)["spec"]
        assert spec["updateStrategy"]["type"] == "ReCreate"  # defaulted by kruise-webhook
        assert spec["revisionHistoryLimit"] == 10
    finally:
        code = sandbox.terminate()
    assert code == 0, sandbox.output
