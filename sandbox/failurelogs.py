"""What a sandbox that failed leaves behind: its logs, in one directory that outlives it.

Tearing a failed sandbox down removes its nodes, and with them every pod's output — usually the only
account of why it failed (kruise-py's own pods log there). So before the teardown the sandbox writes:

- ``pods/<namespace>_<pod>/<container>[.previous].log``: each container's log, as ``kubectl logs``;
- ``<component>.log``: a copy of each host-process component's log file (``--host-processes``);
- ``events.txt``: every Event, oldest first, one line each, as ``kubectl get events`` would list them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kruise.sandbox.simulator.kubelet import Kubelet
from kruise.sandbox.simulator.logdump import dump_container_logs

PREFIX = "kruise-sandbox-failed-"


def _event_line(event: Mapping[str, Any]) -> str:
    involved = event.get("involvedObject") or {}
    when = event.get("lastTimestamp") or event.get("eventTime") or ""
    target = f"{involved.get('kind', '')}/{involved.get('namespace') or '-'}/{involved.get('name', '')}"
    return f"{when} {event.get('type', '')} {event.get('reason', '')} {target}: {event.get('message', '')}"


async def keep_failure_logs(
    kubelets: Mapping[str, Kubelet],
    component_logs: Iterable[Path],
    events: Iterable[Mapping[str, Any]],
    parent: Path | None = None,
) -> Path | None:
    """Write what there is into a fresh ``kruise-sandbox-failed-*`` directory; None when there is nothing
    (the sandbox failed before any node or component ran)."""
    logs = [path for path in component_logs if path.is_file()]
    events = list(events)
    if not kubelets and not logs and not events:
        return None
    directory = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    await dump_container_logs(kubelets, directory / "pods")
    for path in logs:
        shutil.copyfile(path, directory / path.name)
    ordered = sorted(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    (directory / "events.txt").write_text("".join(_event_line(e) + "\n" for e in ordered))
    return directory
