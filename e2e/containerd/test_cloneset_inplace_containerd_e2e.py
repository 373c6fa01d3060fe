"""Seed 002's CloneSet in-place update on real nodes: `kruise sandbox up --runtime containerd`.

Each node is a real containerd with runc and a CNI bridge; kruise-webhook, kruise-manager and a
kruise-daemon per node run as host processes. The seed's YAML runs unchanged (nginx:alpine ->
nginx:1.7.9 resolve to the sandbox's stand-in images): after the image change each pod keeps its
UID and its bridge IP while its container is really replaced - new container id, imageID the new
image's digest, restartCount 1 - and `kubectl logs` shows what the new container printed
(`--previous`: the old one). Needs root and the Debian packages; skipped with the apt-get line.
The same flow runs with kruise-py in its own image's containers in test_kruise_image_containerd_e2e.
"""

from __future__ import annotations

import pytest
from harness import Cluster
from seed002_inplace import create_seed_002_cloneset, delete_cloneset, update_in_place

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]


async def test_seed_002_in_place_update_replaces_the_real_container(real_cluster: Cluster) -> None:
    before = await create_seed_002_cloneset(real_cluster)
    await update_in_place(real_cluster, before)
    await delete_cloneset(real_cluster)
