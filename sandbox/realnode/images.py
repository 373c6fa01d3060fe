"""The stand-in images a real node pulls instead of the internet's, built from Debian's busybox-static.

Tutorials and tests name ``nginx:1.7.9``, ``busybox`` or the pause image; the sandbox has no uplink,
so these names resolve (through containerd's registry mirrors) to images built here. Each stand-in
behaves like its namesake where the tests look: the pause image sleeps until stopped, nginx serves
HTTP on port 80 from /usr/share/nginx/html, busybox is busybox, perl is Debian's perl (see ``perl``),
ubuntu is busybox with a ``bash`` that is ``sh``, Kubernetes' e2e httpd image serves port 80 and has
that ``bash`` too (upstream's e2e runs ``/bin/bash -c ...`` in it), agnhost idles as its default
``pause`` does, the daemons tests only pull (redis, envoy) idle until stopped,
``openkruise/minecraft-demo:probe-v0`` runs the game's ``gate`` and ``data`` processes that its
``probe.sh`` looks for (see ``MINECRAFT_PROBE``), and ``openkruise/hotupgrade-sample`` implements the
SidecarSet hot-upgrade protocol (see ``hotupgrade``). Tags that differ upstream differ here (a
per-image identity file), so an in-place image update really changes the imageID.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kruise.sandbox.realnode import hotupgrade, oci, perl
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

IDLE_SCRIPT = """#!/bin/sh
# stand-in for a daemon the tests only pull and run: stays up until stopped, ignoring its arguments.
trap 'exit 0' TERM INT
while :; do sleep 2147483647 & wait $!; done
"""

HTTPD_SCRIPT = """#!/bin/sh
# httpd stand-in (Kubernetes' e2e httpd image): busybox httpd serves the htdocs on port 80.
echo "kruise-py stand-in for $(cat /etc/kruise-standin): busybox httpd serving port 80"
httpd -f -p 80 -h /usr/local/apache2/htdocs &
pid=$!
trap 'kill $pid 2>/dev/null; exit 0' TERM QUIT INT
wait $pid
"""

BASH_SCRIPT = """#!/bin/sh
# ubuntu stand-in: bash is busybox's sh (enough for `bash -c ...`).
exec /bin/sh "$@"
"""

UBUNTU_OS_RELEASE = """PRETTY_NAME="Ubuntu (kruise-py stand-in on busybox)"
NAME="Ubuntu"
ID=ubuntu
"""

# openkruise/minecraft-demo:probe-v0 stand-in (upstream's PodProbeMarker e2e "test2" and kruise-game's
# service-quality example): in /data, start.sh runs the gate and data processes; `bash ./probe.sh` answers
# "gate" (exit 0) when the gate process is gone, else "data" when the data process is gone, else exit 1.
# Upstream's test sees Failed, then "data", then "gate" without touching the pod, so here both processes
# end on their own: data 8 s and gate 20 s after the first probe run (probe.sh leaves /tmp/probed).
MINECRAFT_START = """#!/bin/sh
echo "kruise-py stand-in for $(cat /etc/kruise-standin): gate and data processes"
sh ./gate.sh & gate=$!
sh ./data.sh & data=$!
trap 'kill $gate $data 2>/dev/null; exit 0' TERM INT
while :; do sleep 2147483647 & wait $!; done
"""

MINECRAFT_PROCESS = """#!/bin/sh
# the game's {name} process: lives until {seconds} s after the first probe.sh run
while [ ! -e /tmp/probed ]; do sleep 1; done
sleep {seconds}
"""

MINECRAFT_PROBE = """#!/bin/sh
: > /tmp/probed
running() { ps -ef | grep -v grep | grep -c "$1"; }
if [ "$(running gate)" != 1 ]; then echo gate; exit 0; fi
if [ "$(running data)" != 1 ]; then echo data; exit 0; fi
exit 1
"""
MINECRAFT_DATA_SECONDS = 8
MINECRAFT_GATE_SECONDS = 20

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
    kind: str  # one of KINDS
    program: str = ""  # the idle daemon's command name, or the hot-upgrade sidecar's version

    def parsed(self) -> list[Reference]:
        return [Reference.parse(name) for name in self.references]


PAUSE_IMAGE = "registry.k8s.io/pause:3.9"

HOTUPGRADE_SAMPLE = "openkruise/hotupgrade-sample"
E2E_IMAGES = "registry.k8s.io/e2e-test-images"

STANDINS: tuple[StandIn, ...] = (
    StandIn("pause", (PAUSE_IMAGE,), "pause"),
    StandIn("busybox", ("busybox:latest",), "busybox"),  # plain "busybox" means :latest
    StandIn("busybox:1.35.0", ("busybox:1.35.0",), "busybox"),
    StandIn("busybox:1.36", ("busybox:1.36",), "busybox"),
    StandIn("nginx:latest", ("nginx:latest",), "nginx"),
    StandIn("nginx:alpine", ("nginx:alpine",), "nginx"),
    StandIn("nginx:1.7.9", ("nginx:1.7.9",), "nginx"),
    StandIn("nginx:1.9.1", ("nginx:1.9.1",), "nginx"),
    StandIn("nginx:1.15.1", ("nginx:1.15.1",), "nginx"),
    StandIn("nginx:1.25", ("nginx:1.25",), "nginx"),
    StandIn("nginx:1.26", ("nginx:1.26",), "nginx"),
    StandIn("nginx:1.27", ("nginx:1.27",), "nginx"),
    StandIn("perl", ("perl:latest", "perl:5.34"), "perl"),
    # upstream kruise e2e's common.WebserverImage, common.AgnhostImage, imageutils.Nginx, NewNginxImage,
    # RedisImage and imageutils.BusyBox (whose default `sh` exits at once without a terminal, as the real one)
    StandIn("e2e-httpd", (f"{E2E_IMAGES}/httpd:2.4.38-4",), "httpd"),
    StandIn("e2e-agnhost", (f"{E2E_IMAGES}/agnhost:2.52",), "idle", "agnhost"),
    StandIn("e2e-nginx", (f"{E2E_IMAGES}/nginx:1.14-4",), "nginx"),
    StandIn("e2e-nginx-new", (f"{E2E_IMAGES}/nginx:1.15-4",), "nginx"),
    StandIn("e2e-redis", (f"{E2E_IMAGES}/redis:5.0.5-3",), "idle", "redis-server"),
    StandIn("e2e-busybox", (f"{E2E_IMAGES}/busybox:1.36.1-1",), "busybox"),
    StandIn("ubuntu", ("ubuntu:latest",), "ubuntu"),
    StandIn("centos:7", ("centos:7",), "busybox"),
    StandIn("minecraft-demo:probe-v0", ("openkruise/minecraft-demo:probe-v0",), "minecraft-probe"),
    StandIn("redis:7", ("redis:7",), "idle", "redis-server"),
    StandIn("redis:7.2", ("redis:7.2",), "idle", "redis-server"),
    StandIn("envoy:v1.30", ("envoyproxy/envoy:v1.30",), "idle", "envoy"),
    StandIn("hotupgrade:sidecarv1", (f"{HOTUPGRADE_SAMPLE}:sidecarv1",), "hotupgrade-sidecar", "v1"),
    StandIn("hotupgrade:sidecarv2", (f"{HOTUPGRADE_SAMPLE}:sidecarv2",), "hotupgrade-sidecar", "v2"),
    StandIn("hotupgrade:empty", (f"{HOTUPGRADE_SAMPLE}:empty",), "hotupgrade-empty"),
    StandIn("hotupgrade:busybox", (f"{HOTUPGRADE_SAMPLE}:busybox",), "hotupgrade-client"),
)

KINDS = frozenset(s.kind for s in STANDINS)

# The private registry (basic auth) answers to this host name on every node; its image has its own
# identity, so a successful pull is seen to come from there and nowhere else.
PRIVATE_REGISTRY = "registry.kruise-sandbox.test"
PRIVATE_IMAGE = f"{PRIVATE_REGISTRY}/private/busybox:latest"
PRIVATE_STANDINS: tuple[StandIn, ...] = (StandIn("private-busybox", (PRIVATE_IMAGE,), "busybox"),)


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


@cache
def perl_layer(*, with_bignum: bool) -> oci.Layer:
    """Debian's perl and perl-base (plus bignum's modules for the ``perl`` stand-in)."""
    return oci.Layer.of(perl.perl_entries(modules=perl.BIGNUM_MODULES if with_bignum else ()))


def _identity(standin: StandIn) -> oci.Entry:
    return oci.file(IDENTITY_FILE, f"{standin.key}\n")


def _hotupgrade(standin: StandIn, architecture: str) -> tuple[list[oci.Entry], oci.ImageConfig]:
    """The sample's layout: /manager as entrypoint and /migrate.sh for the postStart hook."""
    labels = {STANDIN_LABEL: standin.key}
    migrate = oci.file("migrate.sh", hotupgrade.migrate_script(), mode=0o755)
    if standin.kind == "hotupgrade-sidecar":
        program = hotupgrade.sidecar_program(standin.program, architecture)
        manager = oci.file("manager", program, mode=0o755)
        return [manager, migrate], oci.ImageConfig(entrypoint=["/manager"], labels=labels)
    if standin.kind == "hotupgrade-empty":
        manager = oci.file("manager", hotupgrade.EMPTY_SH, mode=0o755)
        return [manager, migrate], oci.ImageConfig(entrypoint=["/manager"], labels=labels)
    client = oci.file("busybox-client", hotupgrade.client_script(), mode=0o755)
    return [client], oci.ImageConfig(entrypoint=["/busybox-client"], labels=labels)


def _layer_and_config(standin: StandIn, architecture: str) -> tuple[list[oci.Entry], oci.ImageConfig]:
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
    if standin.kind == "httpd":
        files = [
            oci.file("usr/local/bin/httpd-foreground", HTTPD_SCRIPT, mode=0o755),
            oci.file("usr/local/apache2/htdocs/index.html", "<html><body><h1>It works!</h1></body></html>\n"),
            oci.file("bin/bash", BASH_SCRIPT, mode=0o755),
        ]
        config = oci.ImageConfig(cmd=["httpd-foreground"], exposed_ports=["80/tcp"], labels=labels)
        return files, config
    if standin.kind == "perl":
        return [], oci.ImageConfig(cmd=["perl", "-v"], labels=labels)
    if standin.kind == "ubuntu":
        files = [oci.file("bin/bash", BASH_SCRIPT, mode=0o755), oci.file("etc/os-release", UBUNTU_OS_RELEASE)]
        return files, oci.ImageConfig(cmd=["bash"], labels=labels)
    if standin.kind == "minecraft-probe":
        files = [
            oci.file("bin/bash", BASH_SCRIPT, mode=0o755),
            oci.file("data/start.sh", MINECRAFT_START, mode=0o755),
            oci.file("data/probe.sh", MINECRAFT_PROBE, mode=0o755),
            oci.file("data/gate.sh", MINECRAFT_PROCESS.format(name="gate", seconds=MINECRAFT_GATE_SECONDS)),
            oci.file("data/data.sh", MINECRAFT_PROCESS.format(name="data", seconds=MINECRAFT_DATA_SECONDS)),
        ]
        return files, oci.ImageConfig(cmd=["./start.sh"], working_dir="/data", labels=labels)
    if standin.kind == "idle":
        if not standin.program or "/" in standin.program:
            raise ValueError(f"stand-in {standin.key!r}: program: an idle daemon needs a command name")
        files = [oci.file(f"usr/local/bin/{standin.program}", IDLE_SCRIPT, mode=0o755)]
        return files, oci.ImageConfig(cmd=[standin.program], labels=labels)
    if standin.kind.startswith("hotupgrade-") and standin.kind in KINDS:
        return _hotupgrade(standin, architecture)
    raise ValueError(f"stand-in {standin.key!r}: kind: must be one of {sorted(KINDS)}, got {standin.kind!r}")


def shared_layers(standin: StandIn) -> list[oci.Layer]:
    """Layers between the busybox base and the stand-in's own: Perl for the images that run it."""
    if standin.kind == "perl":
        return [perl_layer(with_bignum=True)]
    if standin.kind == "hotupgrade-sidecar":
        return [perl_layer(with_bignum=False)]
    return []


def build(
    standin: StandIn,
    *,
    base: oci.Layer | None = None,
    middle: Sequence[oci.Layer] | None = None,
    architecture: str | None = None,
) -> oci.Image:
    """The image of one stand-in: the busybox layer (``base``), shared layers (``middle``), its own layer."""
    architecture = architecture or oci.host_architecture()
    files, config = _layer_and_config(standin, architecture)
    own = oci.Layer.of([_identity(standin), *files])
    shared = shared_layers(standin) if middle is None else list(middle)
    return oci.build_image([base or base_layer(), *shared, own], config, architecture=architecture)


def build_all(
    standins: Sequence[StandIn] = STANDINS, *, base: oci.Layer | None = None
) -> list[tuple[StandIn, oci.Image]]:
    return [(standin, build(standin, base=base)) for standin in standins]
