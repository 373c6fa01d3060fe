"""The sandbox upstream's SidecarSet e2e cases run on: kruise-py with the feature gates upstream's e2e
deployment sets (`config/manager/manager.yaml`). Some cases depend on an
alpha gate without saying so — "sidecarSet patch pod metadata" writes a whitelist whose rules use a key
kruise does not read (`annotationKeyExprs`), so the SidecarSet is admitted only through
SidecarSetPatchPodMetadataDefaultsAllowed. Upstream's `InvalidImage` registry fails every pull
(`--fail-image`), as an unreachable registry does on kind."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from harness import Cluster, SandboxProcess, ready_kubeconfig

# as upstream's kruise-manager flag (EnableExternalCerts off: the webhook makes its own certificate)
UPSTREAM_E2E_GATES = "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false"


@pytest.fixture(scope="session")
def kruise_sandbox_all_gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up`; KUBECONFIG points at another cluster")
    kubeconfig = tmp_path_factory.mktemp("kruise-sandbox-all-gates") / "kubeconfig"
    sandbox = SandboxProcess.start(
        "--nodes", "3", "--speed", "20", "--kubeconfig", str(kubeconfig),
        "--feature-gates", UPSTREAM_E2E_GATES, "--host-processes",
        "--fail-image", "invalid.registry.k8s.io/*",
    )  # fmt: skip
    try:
        yield Cluster(ready_kubeconfig(sandbox.wait_for("ready", 120)), is_sandbox=True, nodes=3)
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output
