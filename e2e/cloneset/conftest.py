"""The sandbox upstream's CloneSet e2e cases run on: kruise-py with the feature gates upstream's e2e
deployment sets (`AllAlpha=true,AllBeta=true`). Some cases depend on an alpha gate without saying so:
"CloneSet regard preparing-update pod as update when scaling" on PreparingUpdateAsUpdate, "pre-download
for new image" on PreDownloadImageForInPlaceUpdate (and ImagePullJobGate it needs)."""

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
    )  # fmt: skip
    try:
        yield Cluster(ready_kubeconfig(sandbox.wait_for("ready", 120)), is_sandbox=True, nodes=3)
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output
