"""Every container log the simulated kubelets hold, written to files.

A sandbox that fails to come up tears its nodes down, and with them the only copy of what its pods
printed (kruise-py's own pods among them: that output is usually why it failed). Dumping first leaves
``<dir>/<namespace>_<pod>/<container>.log`` (``.previous.log`` for the instance before), what
``kubectl logs`` [--previous] would have shown.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from kruise.sandbox.simulator.kubelet import Kubelet
from kruise.sandbox.simulator.logs import LogOptions, NoInstance


async def dump_container_logs(kubelets: Mapping[str, Kubelet], directory: Path) -> list[Path]:
    """Write each container instance's log under ``directory``; returns the files written."""
    written: list[Path] = []
    for kubelet in kubelets.values():
        for key, run in list(kubelet.runs.items()):
            namespace, _, name = key.partition("/")
            for container in list(run.slots):
                for previous, suffix in ((True, ".previous.log"), (False, ".log")):
                    with contextlib.suppress(NoInstance):
                        read = kubelet.runtime.open_log(run.uid, container, previous)
                        chunks = [chunk async for chunk in read(LogOptions(timestamps=True))]
                        path = directory / f"{namespace}_{name}" / f"{container}{suffix}"
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(b"".join(chunks))
                        written.append(path)
    return written
