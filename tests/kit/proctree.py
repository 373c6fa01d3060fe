"""Which processes descend from a pid, and whether they are still alive, read from /proc.

A pid can be reused once its process is gone, so each process is identified by (pid, start time)."""

from __future__ import annotations

from pathlib import Path

Process = tuple[int, int]  # pid, start time in clock ticks since boot


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of ``pid``, or None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return fields[0], int(fields[1]), int(fields[19])


def descendants(root: int) -> set[Process]:
    """Every process whose parent chain leads to ``root`` (``root`` itself excluded)."""
    children: dict[int, list[Process]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[1], []).append((int(entry.name), stat[2]))
    found: set[Process] = set()
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child[0])
    return found


def alive(process: Process) -> bool:
    """Still running (a zombie waiting for its reaper counts as gone)."""
    stat = _stat(process[0])
    return stat is not None and stat[2] == process[1] and stat[0] not in ("Z", "X")


def survivors(processes: set[Process]) -> set[Process]:
    return {p for p in processes if alive(p)}
