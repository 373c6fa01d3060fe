"""The real-node cluster the containerd e2e modules share the shape of: `kruise sandbox up --runtime
containerd` (two real containerd nodes, kruise-py as host processes, kruise-daemon on each node's
socket). One sandbox per module: starting one costs about a minute, stopping one removes every
container, netns and the bridge, so a module leaves nothing behind. Skipped with the apt-get line
when not root or a package is missing, and when KUBECONFIG points at another cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from harness import Cluster, SandboxProcess, ready_kubeconfig

from kruise.sandbox.realnode import prereqs


@pytest.fixture(scope="module")
def real_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up --runtime containerd`; KUBECONFIG points at another cluster")
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))
    kubeconfig = tmp_path_factory.mktemp("containerd-sandbox") / "kubeconfig"
    sandbox = SandboxProcess.start(
        "--runtime", "containerd", "--nodes", "2", "--speed", "20", "--kubeconfig", str(kubeconfig),
        *getattr(request.module, "SANDBOX_ARGS", ()),
    )  # fmt: skip
    try:
        yield Cluster(ready_kubeconfig(sandbox.wait_for("ready", 240)), is_sandbox=True, nodes=2)
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output
