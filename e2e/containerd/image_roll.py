"""A second kruise-py image for `helm upgrade --set image.tag=...`, and what the roll looked like.

The second image is the built one with one more label in its config: the same layers (the same
kruise-py), but a different config and so a different manifest digest. A new tag on the same digest
would roll the pods too (the pod template's image string changes), but the new containers' imageID
would equal the old ones', so nothing would show that the nodes pulled and ran the new reference;
with a distinct digest the imageID of every new container proves it.

`RollSamples` records, at each poll during the roll, how many pods of each kruise-system role were
Ready (and not being deleted) and how many ready addresses `kruise-webhook-service` had: the
chart's rollout strategies (Deployments' RollingUpdate 25 %/25 %, i.e. surge 1 and none unavailable
for 2 replicas; the DaemonSet's maxUnavailable 1) are judged on those minima."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kruise.sandbox.realnode import oci
from kruise.sandbox.realnode.push import push_image

ROLL_LABEL = "io.kruise-py.e2e.roll"


def relabelled(image: oci.Image, value: str) -> oci.Image:
    """``image`` with ``ROLL_LABEL=value`` added to its config; layers untouched."""
    config = json.loads(image.config.data)
    labels = config.setdefault("config", {}).setdefault("Labels", {}) or {}
    config["config"]["Labels"] = {**labels, ROLL_LABEL: value}
    config_blob = oci.Blob(image.config.media_type, oci.canonical_json(config))
    manifest = json.loads(image.manifest.data)
    manifest["config"] = config_blob.descriptor()
    return oci.Image(
        config_blob, image.layers, oci.Blob(image.manifest.media_type, oci.canonical_json(manifest))
    )


def registry_url(node_socket: Path) -> str:
    """The sandbox registry a node resolves docker.io at (its containerd's certs.d/docker.io/hosts.toml)."""
    hosts = (node_socket.parent / "certs.d" / "docker.io" / "hosts.toml").read_text()
    found = re.search(r'^server = "([^"]+)"', hosts, re.MULTILINE)
    assert found, hosts
    return found.group(1)


async def push_tag(url: str, repository: str, tag: str, image: oci.Image) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120.0, trust_env=False) as client:
        await push_image(client, repository, [tag], image)


@dataclass
class RollSamples:
    ready: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    endpoints: list[int] = field(default_factory=list)

    def add(self, pods: list[dict], endpoints: dict) -> None:
        counts: dict[str, int] = defaultdict(int)
        for pod in pods:
            conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
            if not pod["metadata"].get("deletionTimestamp") and conditions.get("Ready") == "True":
                counts[pod["metadata"]["labels"]["control-plane"]] += 1
        for role in ("controller-manager", "webhook", "daemon"):
            self.ready[role].append(counts[role])
        self.endpoints.append(
            sum(len(subset.get("addresses") or []) for subset in endpoints.get("subsets") or [])
        )

    def minimum(self, role: str) -> int:
        return min(self.ready[role])
