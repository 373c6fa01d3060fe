"""`FakeRuntimeClient`: the parts of kruise-daemon's CRI `RuntimeClient` the daemon tests touch.

It stands in for both services: the image service (images in `present` exist, pulls of names in
`broken` fail with gRPC NOT_FOUND, each pull advances the test's `clock` by `pull_seconds`) and
the runtime service (`stop_container` records the id; `exec_sync` is refused, since a test that
expects a preStop hook to run replaces it with its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import grpc


@dataclass
class _Image:
    """What `image_status` answers for a present image: only its id is read."""

    id: str


class FakeRuntimeClient:
    def __init__(
        self,
        clock: list[datetime] | None = None,
        *,
        present: Iterable[str] = (),
        broken: Iterable[str] = (),
        pull_seconds: float = 1.5,
    ) -> None:
        self.clock = clock  # a one-item list shared with the code under test's clock, or None
        self.present, self.broken = set(present), set(broken)
        self.pull_seconds = pull_seconds
        self.stopped: list[str] = []

    # ---- image service -----------------------------------------------------------------------

    async def image_status(self, reference: str) -> _Image | None:
        return _Image("sha256:present") if reference in self.present else None

    async def pull_image(self, reference: str, **_: object) -> str:
        if self.clock is not None:
            self.clock[0] += timedelta(seconds=self.pull_seconds)
        name = reference.rpartition(":")[0]
        if name in self.broken:
            raise grpc.aio.AioRpcError(grpc.StatusCode.NOT_FOUND, None, None, details="manifest unknown")
        self.present.add(reference)
        return f"sha256:{reference}"

    # ---- runtime service ---------------------------------------------------------------------

    async def exec_sync(self, container_id: str, command: list[str], timeout: int) -> None:
        raise AssertionError(f"unexpected exec {command} in {container_id}: no preStop hook in this test")

    async def stop_container(self, container_id: str, timeout: int) -> None:
        self.stopped.append(container_id)
