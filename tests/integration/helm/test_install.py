"""`helm install` / `helm uninstall` of the project's chart against the in-process API emulator:
every kind the chart renders is served and accepted (RBAC included), and uninstall removes it all.

The release lives in `default`, as with upstream's `helm install kruise openkruise/kruise`; the
chart creates `kruise-system` itself. Nothing runs the pods here (no simulator): this is about the
API accepting and removing the objects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHART = Path(__file__).resolve().parents[3] / "helm" / "kruise"
HELM = Path(sys.executable).parent / "helm"
KUBECTL = Path(sys.executable).parent / "kubectl"

pytestmark = [
    pytest.mark.skipif(not HELM.exists(), reason="no helm binary"),
    pytest.mark.skipif(not KUBECTL.exists(), reason="no kubectl binary"),
]

# (kind for kubectl, namespace or "" for cluster-scoped, name)
EXPECTED = [
    ("namespace", "", "kruise-system"),
    ("serviceaccount", "kruise-system", "kruise-manager"),
    ("serviceaccount", "kruise-system", "kruise-webhook"),
    ("serviceaccount", "kruise-system", "kruise-daemon"),
    ("clusterrole", "", "kruise-manager-role"),
    ("clusterrole", "", "kruise-webhook-role"),
    ("clusterrole", "", "kruise-daemon-role"),
    ("clusterrolebinding", "", "kruise-manager-rolebinding"),
    ("role", "kruise-system", "kruise-leader-election-role"),
    ("rolebinding", "kruise-system", "kruise-leader-election-rolebinding"),
    ("deployment", "kruise-system", "kruise-controller-manager"),
    ("deployment", "kruise-system", "kruise-webhook"),
    ("daemonset", "kruise-system", "kruise-daemon"),
    ("service", "kruise-system", "kruise-webhook-service"),
    ("mutatingwebhookconfiguration", "", "kruise-mutating-webhook-configuration"),
    ("validatingwebhookconfiguration", "", "kruise-validating-webhook-configuration"),
]


@pytest.fixture
def tools(emulator, tmp_path):
    env = {
        **os.environ,
        "KUBECONFIG": str(emulator.kubeconfig),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }

    def run(binary: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise AssertionError(f"{binary.name} {' '.join(args)}: {result.stderr}\n{result.stdout}")
        return result

    return run


def _get(tools, kind: str, namespace: str, name: str) -> subprocess.CompletedProcess:
    ns = ["-n", namespace] if namespace else []
    return tools(KUBECTL, "get", kind, name, *ns, "-o", "json", check=False)


def test_install_then_uninstall(tools, tmp_path):
    # the chart's own object names, so the list above cannot drift from what it renders
    rendered = tools(HELM, "template", "kruise", str(CHART)).stdout
    for kind, _, name in EXPECTED:
        assert f"name: {name}" in rendered, f"{kind} {name} is not in the chart"

    tools(HELM, "install", "kruise", str(CHART), "--set", "image.pullPolicy=Never")
    status = json.loads(tools(HELM, "status", "kruise", "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"

    for kind, namespace, name in EXPECTED:
        got = _get(tools, kind, namespace, name)
        assert got.returncode == 0, f"{kind} {name} was not created: {got.stderr}"
        meta = json.loads(got.stdout)["metadata"]
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert meta["annotations"]["meta.helm.sh/release-name"] == "kruise"
    binding = json.loads(_get(tools, "clusterrolebinding", "", "kruise-manager-rolebinding").stdout)
    assert binding["roleRef"]["name"] == "kruise-manager-role"
    assert {"kind": "ServiceAccount", "name": "kruise-manager", "namespace": "kruise-system"} in binding[
        "subjects"
    ]
    roles = json.loads(
        tools(KUBECTL, "get", "roles,rolebindings", "-n", "kruise-system", "-o", "json").stdout
    )
    assert {item["kind"] for item in roles["items"]} == {"Role", "RoleBinding"}

    # upgrading with a changed value is accepted too (helm computes a three-way patch per object)
    tools(HELM, "upgrade", "kruise", str(CHART), "--set", "manager.replicas=3")
    manager = json.loads(_get(tools, "deployment", "kruise-system", "kruise-controller-manager").stdout)
    assert manager["spec"]["replicas"] == 3

    # Uninstall safety (upstream's chart guards it since 1.7.3 with a pre-delete hook that refuses while
    # workloads exist, because it renders its CRDs as templates): here Helm never owns the crds/ CRDs, so
    # uninstall cannot cascade into Kruise objects and the pods they own.
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "keep-me", "namespace": "default"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "keep-me"}},
            "template": {
                "metadata": {"labels": {"app": "keep-me"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
    (tmp_path / "cloneset.json").write_text(json.dumps(cloneset))
    tools(KUBECTL, "create", "-f", str(tmp_path / "cloneset.json"))
    tools(HELM, "uninstall", "kruise", "--wait", "--timeout", "60s")
    for kind, namespace, name in EXPECTED:
        got = _get(tools, kind, namespace, name)
        assert got.returncode != 0 and "NotFound" in got.stderr, f"{kind} {name} survived uninstall"
    assert _get(tools, "customresourcedefinition", "", "clonesets.apps.kruise.io").returncode == 0
    assert _get(tools, "cloneset", "default", "keep-me").returncode == 0
    assert "kruise" not in tools(HELM, "list", "-A", "-q").stdout.split()
    secrets = json.loads(tools(KUBECTL, "get", "secrets", "-n", "default", "-o", "json").stdout)
    assert not [s for s in secrets["items"] if s["type"] == "helm.sh/release.v1"]


def test_external_certs_install_annotates_the_conversion_crds_and_uninstall_keeps_them(tools):
    """Helm creates crds/ unowned, then (with --take-ownership) adopts the conversion CRDs the chart
    renders again for `externalCerts.annotations`; their keep policy leaves them, and the Kruise objects,
    on uninstall."""
    inject = "kruise-system/kruise-webhook-certs"
    tools(
        HELM, "install", "kruise", str(CHART), "--take-ownership",
        "--set", "featureGates=EnableExternalCerts=true",
        "--set", f"externalCerts.annotations.cert-manager\\.io/inject-ca-from={inject}",
    )  # fmt: skip
    for kind, name in (
        ("customresourcedefinition", "daemonsets.apps.kruise.io"),
        ("customresourcedefinition", "statefulsets.apps.kruise.io"),
        ("validatingwebhookconfiguration", "kruise-validating-webhook-configuration"),
    ):
        meta = json.loads(_get(tools, kind, "", name).stdout)["metadata"]
        assert meta["annotations"]["cert-manager.io/inject-ca-from"] == inject, name
    plain = json.loads(_get(tools, "customresourcedefinition", "", "nodepodprobes.apps.kruise.io").stdout)
    assert "cert-manager.io/inject-ca-from" not in plain["metadata"].get("annotations", {})
    secrets = json.loads(tools(KUBECTL, "get", "secrets", "-n", "kruise-system", "-o", "json").stdout)
    assert not secrets["items"]  # the issuer's Secret: the chart renders none

    tools(HELM, "uninstall", "kruise", "--wait", "--timeout", "60s")
    assert _get(tools, "customresourcedefinition", "", "clonesets.apps.kruise.io").returncode == 0
    got = _get(tools, "validatingwebhookconfiguration", "", "kruise-validating-webhook-configuration")
    assert got.returncode != 0 and "NotFound" in got.stderr


def _served(tools, crd: str) -> list[str]:
    got = json.loads(_get(tools, "customresourcedefinition", "", crd).stdout)
    return [v["name"] for v in got["spec"]["versions"] if v["served"]]


def test_api_set_2_0_first_install_with_skip_crds_then_upgrade_from_1_9_takes_ownership(tools):
    """A 2.0 install gets master's CRDs from the chart's templates (crds/ skipped); an existing 1.9
    install upgraded to apiSet 2.0 adopts the CRDs Helm created unowned from crds/."""
    tools(HELM, "install", "kruise", str(CHART), "--skip-crds", "--set", "apiSet=2.0")
    assert _served(tools, "clonesets.apps.kruise.io") == ["v1alpha1", "v1beta1"]
    tools(HELM, "uninstall", "kruise", "--wait", "--timeout", "60s")
    # `helm.sh/resource-policy: keep`: the CRDs (and every Kruise object) stay
    assert _served(tools, "clonesets.apps.kruise.io") == ["v1alpha1", "v1beta1"]
    tools(KUBECTL, "delete", "customresourcedefinitions", "--all")

    tools(HELM, "install", "kruise", str(CHART))
    assert _served(tools, "clonesets.apps.kruise.io") == ["v1alpha1"]
    refused = tools(HELM, "upgrade", "kruise", str(CHART), "--set", "apiSet=2.0", check=False)
    assert refused.returncode != 0 and "cannot be imported into the current release" in refused.stderr
    tools(HELM, "upgrade", "kruise", str(CHART), "--set", "apiSet=2.0", "--take-ownership")
    assert _served(tools, "clonesets.apps.kruise.io") == ["v1alpha1", "v1beta1"]
    assert _served(tools, "podunavailablebudgets.policy.kruise.io") == ["v1alpha1", "v1beta1"]
