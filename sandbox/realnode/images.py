"""The stand-in images a real node pulls instead of the internet's, built from Debian's busybox-static.

Tutorials and tests name ``nginx:1.7.9``, ``busybox`` or the pause image; the sandbox has no uplink,
so these names resolve (through containerd's registry mirrors) to images built here. Each stand-in
behaves like its namesake where the tests look: the pause image sleeps until stopped, nginx serves
HTTP on port 80 from /usr/share/nginx/html, busybox is busybox. Tags that differ upstream differ
here (a per-image identity file), so an in-place image update really changes the imageID.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kruise.sandbox.realnode import oci
from kruise.sandbox.realnode.prereqs import BUSYBOX

IDENTITY_FILE = "etc/kruise-standin"
STANDIN_LABEL = "io.kruise-py.standin"

PASSWD = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"

PAUSE_SCRIPT = """#!/bin/sh
# pause stand-in: hold the pod's namespaces until told to stop.
trap 'exit 0' TERM INT
while :; do sleep 2147483647 & wait $!; done
"""

NGINX_SCRIPT = """#!/bin/sh
# nginx stand-in: busybox httpd serves /usr/share/nginx/html on port 80; nginx's arguments are ignored.
# Like nginx's own start-up lines, one line on stdout says what runs (kubectl logs shows it).
echo "kruise-py stand-in for $(cat /etc/kruise-standin): busybox httpd serving port 80"
httpd -f -p 80 -h /usr/share/nginx/html &
pid=$!
trap 'kill $pid 2>/dev/null; exit 0' TERM QUIT INT
wait $pid
"""

NGINX_INDEX = """<!DOCTYPE html>
<html>
<head><title>Welcome to nginx!</title></head>
<body>
<h1>Welcome to nginx!</h1>
<p>kruise-py stand-in for {reference} (busybox httpd).</p>
</body>
</html>
"""


@dataclass(frozen=True)
class Reference:
    """``registry/repository:tag`` split the way a registry's HTTP API addresses it."""

    registry: str
    repository: str
    tag: str

    @classmethod
    def parse(cls, name: str) -> Reference:
        """Normalise like docker: ``busybox`` is ``docker.io/library/busybox:latest``."""
        if not name or "@" in name:
            raise ValueError(f"image reference: must be name[:tag] without digest, got {name!r}")
        first, _, rest = name.partition("/")
        if rest and ("." in first or ":" in first or first == "localhost"):
            registry, path = first, rest
        else:
            registry, path = "docker.io", name
        if ":" in path.rsplit("/", 1)[-1]:
            repository, tag = path.rsplit(":", 1)
        else:
            repository, tag = path, "latest"
        if registry == "docker.io" and "/" not in repository:
            repository = f"library/{repository}"
        if not repository or repository != repository.lower():
            raise ValueError(f"image reference {name!r}: repository: must be non-empty lowercase")
        return cls(registry, repository, tag)

    def __str__(self) -> str:
        return f"{self.registry}/{self.repository}:{self.tag}"


@dataclass(frozen=True)
class StandIn:
    """One stand-in image and every reference it is pushed under (aliases share one digest)."""

    key: str
    references: tuple[str, ...]
    kind: str  # "pause" | "busybox" | "nginx"

    def parsed(self) -> list[Reference]:
        return [Reference.parse(name) for name in self.references]


PAUSE_IMAGE = "registry.k8s.io/pause:3.9"

STANDINS: tuple[StandIn, ...] = (
    StandIn("pause", (PAUSE_IMAGE,), "pause"),
    StandIn("busybox", ("busybox:latest",), "busybox"),  # plain "busybox" means :latest
    StandIn("busybox:1.35.0", ("busybox:1.35.0",), "busybox"),
    StandIn("nginx:latest", ("nginx:latest",), "nginx"),
    StandIn("nginx:alpine", ("nginx:alpine",), "nginx"),
    StandIn("nginx:1.7.9", ("nginx:1.7.9",), "nginx"),
    StandIn("nginx:1.25", ("nginx:1.25",), "nginx"),  # the Deployment of `kruise sandbox up --demo`
)


def applet_paths(busybox: Path = BUSYBOX) -> list[str]:
    """Where busybox installs its applets (``bin/sh``, ``usr/sbin/httpd``, ...), as it says itself."""
    listed = subprocess.run([str(busybox), "--list-full"], check=True, capture_output=True, text=True)
    return listed.stdout.split()


def busybox_entries(busybox: Path = BUSYBOX, applets: Sequence[str] | None = None) -> list[oci.Entry]:
    """A root filesystem of busybox: the binary, every applet as a symlink, and the usual directories."""
    paths = applet_paths(busybox) if applets is None else applets
    entries = [oci.file("bin/busybox", busybox.read_bytes(), mode=0o755)]
    entries += [
        oci.symlink(path, "/bin/busybox")
        for path in sorted(set(paths))
        if path != "bin/busybox" and not path.startswith("/")
    ]
    entries += [oci.directory(d) for d in ("dev", "proc", "sys", "root", "var/run", "home")]
    entries.append(oci.directory("tmp", mode=0o1777))
    entries += [oci.file("etc/passwd", PASSWD), oci.file("etc/group", GROUP)]
    return entries


@cache
def base_layer(busybox: Path = BUSYBOX) -> oci.Layer:
    return oci.Layer.of(busybox_entries(busybox))


def _identity(standin: StandIn) -> oci.Entry:
    return oci.file(IDENTITY_FILE, f"{standin.key}\n")


def _layer_and_config(standin: StandIn) -> tuple[list[oci.Entry], oci.ImageConfig]:
    labels = {STANDIN_LABEL: standin.key}
    if standin.kind == "pause":
        files = [oci.file("pause", PAUSE_SCRIPT, mode=0o755)]
        return files, oci.ImageConfig(entrypoint=["/pause"], labels=labels)
    if standin.kind == "busybox":
        return [], oci.ImageConfig(cmd=["sh"], labels=labels)
    if standin.kind == "nginx":
        files = [
            oci.file("usr/sbin/nginx", NGINX_SCRIPT, mode=0o755),
            oci.file("usr/share/nginx/html/index.html", NGINX_INDEX.format(reference=standin.key)),
        ]
        config = oci.ImageConfig(
            cmd=["nginx", "-g", "daemon off;"], exposed_ports=["80/tcp"], stop_signal="SIGQUIT", labels=labels
        )
        return files, config
    raise ValueError(f"stand-in {standin.key!r}: kind: must be pause, busybox or nginx, got {standin.kind!r}")


def build(standin: StandIn, *, base: oci.Layer | None = None, architecture: str | None = None) -> oci.Image:
    """The image of one stand-in: the shared busybox layer (``base``) plus its own small layer."""
    files, config = _layer_and_config(standin)
    own = oci.Layer.of([_identity(standin), *files])
    return oci.build_image([base or base_layer(), own], config, architecture=architecture)


def build_all(
    standins: Sequence[StandIn] = STANDINS, *, base: oci.Layer | None = None
) -> list[tuple[StandIn, oci.Image]]:
    return [(standin, build(standin, base=base)) for standin in standins]
