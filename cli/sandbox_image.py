"""`kruise sandbox up --runtime containerd --kruise-image PATH`: kruise-py's built image on the real nodes.

`make image` writes kruise-py's OCI image as a layout (`build/image/oci`, or the archive
`build/image/kruise-py.oci.tar`). This component pushes it into the real-node sandbox's registry as
`kruise-py:<the layout's tag>` (docker.io's `library/kruise-py`, where containerd resolves the chart's
`kruise-py:<tag>`), before the chart is installed: the kubelets then pull and run kruise-manager,
kruise-webhook and kruise-daemon from that image as real containers, not as host processes.
"""

from __future__ import annotations

from pathlib import Path

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.realnode.ocilayout import LayoutImage, load

REPOSITORY = "kruise-py"  # the chart's image.repository


class KruiseImage:
    """Pushes a loaded layout's image into the sandbox's registry when the cluster is up."""

    def __init__(self, layout: LayoutImage, source: Path) -> None:
        self.layout = layout
        self.source = source
        self.reference = f"{REPOSITORY}:{layout.tag}"
        self.name = f"image/{self.reference}"
        self.pushed = ""

    @classmethod
    def from_path(cls, path: Path) -> KruiseImage:
        """Read and check the layout now (``LayoutError``), before any cluster starts."""
        return cls(load(path), path)

    @property
    def tag(self) -> str:
        return self.layout.tag

    async def start(self, sandbox: Sandbox) -> None:
        real = sandbox.simulator.real if sandbox.simulator is not None else None
        if real is None:
            raise RuntimeError(f"{self.name}: needs real nodes (--runtime containerd) to push to")
        self.pushed = await real.push(self.layout.image, self.reference)

    @property
    def log_hint(self) -> str:
        return f"image {self.pushed or self.reference}@{self.layout.image.digest} (from {self.source})"

    async def stop(self) -> None:
        """The image goes with the sandbox's registry."""
