"""What each node's containerd itself holds, read with containerd's own `ctr` (not through the API
emulator nor the kubelet): the e2e's evidence that a container was really killed, that a container's
memory is what the kernel accounts to it, and that nothing of kruise is left after `helm uninstall`.

A sandbox's nodes are found from its process tree: each node's `containerd --config
<sandbox>/nodes/<node>/config.toml` is a descendant of the `kruise sandbox up` process, and the
node's socket sits next to that config. Only that sandbox's containerds are ever touched."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

CTR = "/usr/bin/ctr"
NAMESPACE = "k8s.io"  # the CRI plugin's containerd namespace
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"


def _parent(pid: int) -> int:
    # the field after the parenthesised command name, which may itself hold spaces
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            pid = _parent(pid)
        except (OSError, ValueError, IndexError):
            return False
    return False


def node_sockets(sandbox_pid: int) -> dict[str, Path]:
    """node name -> containerd socket, for the containerds below process ``sandbox_pid``."""
    found: dict[str, Path] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if not args or Path(args[0]).name != "containerd" or "--config" not in args:
            continue
        config = Path(args[args.index("--config") + 1])
        if _descends_from(int(entry.name), sandbox_pid):
            found[config.parent.name] = config.parent / "containerd.sock"
    return found


def ctr(socket: Path, *args: str) -> str:
    done = subprocess.run(
        [CTR, "--address", str(socket), "--namespace", NAMESPACE, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, f"ctr {' '.join(args)}: {done.stderr}{done.stdout}"
    return done.stdout


@dataclass(frozen=True)
class NodeContainer:
    id: str
    image: str


def containers_of_namespace(socket: Path, pod_namespace: str) -> list[NodeContainer]:
    """Every container (pod sandboxes included) containerd holds for pods of ``pod_namespace``."""
    out = ctr(socket, "containers", "list", f'labels."{POD_NAMESPACE_LABEL}"=={pod_namespace}')
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return [NodeContainer(row[0], row[1]) for row in rows]


def containers_of_image(socket: Path, image_fragment: str) -> list[NodeContainer]:
    """Every container whose image reference names ``image_fragment``, whatever its labels."""
    out = ctr(socket, "containers", "list")
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return [NodeContainer(row[0], row[1]) for row in rows if image_fragment in row[1]]


def task_pid(socket: Path, container_id: str) -> int:
    """The container's init process on the host (0 when containerd has no running task for it)."""
    for line in ctr(socket, "tasks", "list").splitlines()[1:]:
        fields = line.split()
        if fields and fields[0] == container_id and fields[2] == "RUNNING":
            return int(fields[1])
    return 0


def kill(socket: Path, container_id: str) -> None:
    """SIGKILL the container's task through containerd: what an OOM kill or a crash looks like."""
    ctr(socket, "tasks", "kill", "--signal", "SIGKILL", container_id)


def memory_bytes(pid: int) -> tuple[int, str]:
    """The memory the kernel charges to the container of ``pid``: its own memory cgroup's RSS when
    runc gave it one (cgroup v1 `total_rss`, v2 `anon`), else the process's VmRSS; and which."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if path in ("", "/"):
            continue
        if "memory" in controllers.split(","):
            stat = Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.stat"
            key = "total_rss"
        elif controllers == "":
            stat = Path("/sys/fs/cgroup/unified") / path.lstrip("/") / "memory.stat"
            key = "anon"
        else:
            continue
        if stat.exists() and path != _own_cgroup_path(controllers):
            values = dict(row.split() for row in stat.read_text().splitlines())
            if key in values:
                return int(values[key]), f"cgroup {key}"
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024, "/proc VmRSS"
    raise AssertionError(f"no memory figure for pid {pid}")


def _own_cgroup_path(controllers: str) -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, mine, path = line.split(":", 2)
        if mine == controllers:
            return path
    return ""
