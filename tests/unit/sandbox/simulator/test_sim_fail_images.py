"""The simulator's ``fail_images``: every node's runtime refuses the pull, as from an unreachable registry."""

from __future__ import annotations

import pytest

from kruise.sandbox.cri.errors import ImagePullError
from kruise.sandbox.simulator import Simulator


async def test_every_node_fails_a_matching_pull_and_serves_the_rest(tmp_path):
    sim = Simulator(tmp_path / "kubeconfig", nodes=2, fail_images=["invalid.registry.k8s.io/*"])
    for runtime in sim.runtimes.values():
        with pytest.raises(ImagePullError, match="not found"):
            await runtime.pull_image("invalid.registry.k8s.io/invalid/alpine:3.1")
        assert await runtime.pull_image("registry.k8s.io/e2e-test-images/nginx:1.15-4")
