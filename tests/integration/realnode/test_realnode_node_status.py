"""A real node's Node status comes from its own containerd (``Sandbox(runtime="containerd")``):
``nodeInfo.containerRuntimeVersion`` is the installed containerd's version as the kubelet prints it, and
``status.images`` lists what the node's containerd holds (digests then tags, sizes), a pulled image
appearing there after its pull.

Needs root and the Debian packages of the real nodes; skipped with the apt-get line otherwise.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.simulator.client import Client, resource_path
from kruise.sandbox.simulator.cri_status import kubelet_version
from tests.kit.polling import until_fetched

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

IMAGE = "busybox:1.35.0"


async def installed_containerd_version() -> str:
    process = await asyncio.create_subprocess_exec(
        shutil.which("containerd") or "containerd", "--version", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    return out.decode().split()[2]  # containerd github.com/containerd/containerd <version> <revision>


def names_of(node: dict) -> list[list[str]]:
    return [image["names"] for image in (node.get("status") or {}).get("images") or []]


async def test_node_status_reports_the_real_containerd() -> None:
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))
    async with Sandbox(nodes=1, speed=20, crd_dir=None, runtime="containerd") as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            node_path = resource_path("v1", "nodes", name="node-1")
            node = await client.get(node_path)
            version = node["status"]["nodeInfo"]["containerRuntimeVersion"]
            assert version == f"containerd://{kubelet_version(await installed_containerd_version())}"

            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "puller", "namespace": "default"},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "main", "image": IMAGE, "command": ["sleep", "3600"]}],
                },
            }
            await client.create(resource_path("v1", "pods", "default"), pod)
            node = await until_fetched(
                lambda: client.get(node_path),
                lambda n: any(any(IMAGE in name for name in names) for names in names_of(n)),
                timeout=90,
                interval=0.2,
                message="the pulled image in status.images",
            )
            async with CriClient(sandbox.simulator.real.nodes["node-1"].paths.socket) as cri:
                listed = (await cri.ListImages(messages.ListImagesRequest())).images
            held = {int(i.size): [*i.repo_digests, *i.repo_tags][:5] for i in listed}
            reported = node["status"]["images"]
            assert reported, node["status"]
            for image in reported:
                assert held.get(image["sizeBytes"]) == image["names"], (image, held)
            sizes = [image["sizeBytes"] for image in reported]
            assert sizes == sorted(sizes, reverse=True)
            (busybox,) = [i for i in reported if any(IMAGE in n for n in i["names"])]
            assert any("@sha256:" in name for name in busybox["names"]), busybox
        finally:
            await client.close()
