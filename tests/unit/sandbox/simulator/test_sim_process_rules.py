"""Pure rules of process containers: image matching, argv, $(VAR) expansion, env, path mapping."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.podenv import ConfigMissing, container_env, expand, field_value
from kruise.sandbox.simulator.podvolumes import PathMap, bind_listen_address
from kruise.sandbox.simulator.probes import ContainerProbes
from kruise.sandbox.simulator.processes import ProcessImage, StartError, exit_code_of
from tests.kit.pods import pod

MANAGER = {"kruise-manager": ["/venv/bin/kruise-manager"]}
IMAGE = ProcessImage("kruise-py:*", MANAGER, default="kruise-manager")
POD = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"a": "1", "b": "2"}},
    "spec": {"nodeName": "node-1", "serviceAccountName": "sa"},
}


@pytest.mark.parametrize(
    ("image", "matches"),
    [
        ("kruise-py:0.1.0", True),
        ("docker.io/library/kruise-py:0.1.0", True),
        ("ghcr.io/org/kruise-py:latest", True),
        ("kruise-py", False),
        ("nginx:1.25", False),
        ("kruise-py-other:1", False),
    ],
)
def test_image_pattern(image: str, matches: bool):
    assert IMAGE.matches(image) is matches


def test_argv_maps_the_entry_point_and_defaults_to_the_image_entrypoint():
    assert IMAGE.argv(["kruise-manager"], ["--x=1"]) == ["/venv/bin/kruise-manager", "--x=1"]
    assert IMAGE.argv([], ["--x=1"]) == ["/venv/bin/kruise-manager", "--x=1"]
    with pytest.raises(StartError, match=r'exec: "sh": executable file not found in \$PATH'):
        IMAGE.argv(["sh", "-c", "x"], [])


def test_parse_finds_executables_and_rejects_bad_text(tmp_path: Path):
    exe = tmp_path / "tool"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    rule = ProcessImage.parse("img:*=tool", [tmp_path])
    assert rule == ProcessImage("img:*", {"tool": [str(exe)]}, "tool")
    with pytest.raises(ValueError, match="expected PATTERN=NAME"):
        ProcessImage.parse("img:*", [tmp_path])
    with pytest.raises(ValueError, match="executable 'nope-not-here' not found"):
        ProcessImage.parse("img:*=nope-not-here", [tmp_path])


def test_exit_codes_of_signals():
    assert exit_code_of(0) == 0 and exit_code_of(3) == 3
    assert exit_code_of(-15) == 143 and exit_code_of(-9) == 137


def test_expand_follows_kubernetes_rules():
    env = {"A": "x", "B": "y"}
    assert expand("$(A)-$(B)", env) == "x-y"
    assert expand("$(C)", env) == "$(C)"
    assert expand("$$(A)", env) == "$(A)"
    assert expand("$A", env) == "$A"


@given(st.text(alphabet=st.characters(blacklist_characters="$")))
def test_expand_leaves_text_without_references_alone(text: str):
    assert expand(text, {"A": "x"}) == text


def test_field_values():
    assert field_value(POD, "metadata.name", "127.244.1.2", "127.18.0.2") == "p"
    assert field_value(POD, "status.podIP", "127.244.1.2", "127.18.0.2") == "127.244.1.2"
    assert field_value(POD, "status.hostIP", "127.244.1.2", "127.18.0.2") == "127.18.0.2"
    assert field_value(POD, "spec.nodeName", "", "") == "node-1"
    assert field_value(POD, "metadata.labels['b']", "", "") == "2"
    assert field_value(POD, "metadata.labels", "", "") == 'a="1"\nb="2"'
    with pytest.raises(ConfigMissing, match=r"unsupported fieldRef\.fieldPath"):
        field_value(POD, "spec.bogus", "", "")


async def test_container_env_order_sources_and_missing_keys():
    objects = {
        ("configmaps", "ns", "cm"): {"data": {"K": "v", "X": "cm"}},
        ("secrets", "ns", "sec"): {"data": {"pw": base64.b64encode(b"s3").decode()}},
    }

    async def fetch(plural: str, namespace: str, name: str):
        return objects.get((plural, namespace, name))

    container = {
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        "env": [
            {"name": "CM_X", "value": "override"},
            {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "pw"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "BOTH", "value": "$(NS)/$(PW)"},
            {"name": "OPT", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k", "optional": True}}},
            {
                "name": "MEM",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
            },
        ],
        "resources": {"limits": {"memory": "64Mi"}},
    }
    env = await container_env(POD, container, fetch, pod_ip="i", host_ip="h", base={"PATH": "/bin"})
    assert env == {
        "PATH": "/bin",
        "CM_K": "v",
        "CM_X": "override",
        "PW": "s3",
        "NS": "ns",
        "BOTH": "ns/s3",
        "MEM": "64",
    }
    missing_key = {"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "nope"}}}]}
    with pytest.raises(ConfigMissing, match="couldn't find key nope in ConfigMap ns/cm"):
        await container_env(POD, missing_key, fetch, pod_ip="", host_ip="")
    missing_secret = {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}]}
    with pytest.raises(ConfigMissing, match='secret "x" not found'):
        await container_env(POD, missing_secret, fetch, pod_ip="", host_ip="")


def test_path_map_rewrites_paths_under_mounts_only(tmp_path: Path):
    paths = PathMap(tmp_path, [("/etc/certs", tmp_path / "etc/certs"), ("/etc", tmp_path / "etc")])
    assert paths.local("/etc/certs/tls.crt") == f"{tmp_path}/etc/certs/tls.crt"
    assert paths.local("/etcetera") == "/etcetera"
    assert paths.rewrite("--cert-dir=/etc/certs") == f"--cert-dir={tmp_path}/etc/certs"
    assert paths.rewrite("/etc/x") == f"{tmp_path}/etc/x"
    assert paths.rewrite("--flag=value") == "--flag=value"
    assert paths.rewrite("/var/x") == "/var/x"


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        (":8080", "127.244.1.2:8080"),
        ("--addr=:10221", "--addr=127.244.1.2:10221"),
        ("--addr=0.0.0.0:80", "--addr=127.244.1.2:80"),
        ("[::]:80", "127.244.1.2:80"),
        ("--bind-address=0.0.0.0", "--bind-address=127.244.1.2"),
        ("0.0.0.0", "127.244.1.2"),
        ("--addr=10.0.0.1:80", "--addr=10.0.0.1:80"),
        ("--addr=127.0.0.1:80", "--addr=127.0.0.1:80"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("--x=:y", "--x=:y"),
        ("8080", "8080"),
    ],
)
def test_any_interface_listen_addresses_bind_the_pod_ip(arg: str, expected: str):
    assert bind_listen_address(arg, "127.244.1.2") == expected


async def test_live_probes_ask_every_period_and_count_failures():
    spec = {"readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 1, "failureThreshold": 2}}
    probes = ContainerProbes.create(spec, 0.0, lambda s: s, live=True)
    answers = iter([(True, ""), (False, "down"), (False, "down")])

    async def check(prober):
        return next(answers)

    assert [o.ok for o in await probes.run_due_live(0.0, check)] == [True] and probes.ready()
    assert await probes.run_due_live(0.5, check) == []
    await probes.run_due_live(1.0, check)
    assert probes.ready()  # one failure is below the threshold
    await probes.run_due_live(2.0, check)
    assert not probes.ready()


@pytest.mark.parametrize("speed", [1.0, 2.0, 20.0, 200.0])
def test_live_probes_keep_real_seconds_whatever_the_speed(speed: float):
    spec = {
        "livenessProbe": {"httpGet": {"port": 80}, "initialDelaySeconds": 5, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"port": 80}},
    }
    live = ContainerProbes.create(spec, 100.0, lambda s: s / speed, live=True)
    assert live.probers["liveness"].next_at == 105.0 and live.probers["liveness"].period == 10.0
    assert live.probers["readiness"].period == 10.0  # the kubelet's default period
    fake = ContainerProbes.create(spec, 100.0, lambda s: s / speed)
    assert fake.probers["liveness"].period == 10.0 / speed


def test_cri_socket_is_linked_where_a_daemon_probes_the_host_run_dir(tmp_path):
    from kruise.daemon.cri.client import discover_socket
    from kruise.sandbox.simulator.process_runner import link_cri_socket

    socket = tmp_path / "cri" / "node-1.sock"
    socket.parent.mkdir()
    socket.write_text("")  # stands in for the served socket
    host = tmp_path / "state" / "nodes" / "node-1"
    link_cri_socket(host, socket)
    link_cri_socket(host, socket)  # idempotent (a restarted simulator)
    assert (host / "run/containerd/containerd.sock").resolve() == socket
    assert discover_socket(None, host / "var" / "run").resolve() == socket


def test_a_real_nodes_socket_is_hard_linked_so_a_bind_mount_carries_it():
    """A bind mount of the node's /var/run shows a container the link itself: a symbolic link would
    name a path of the machine, absent in the container; a hard link is the socket."""
    import socket as sockets
    import tempfile

    from kruise.sandbox.simulator.process_runner import link_cri_socket

    with tempfile.TemporaryDirectory(prefix="cri-") as short:  # unix socket paths: 108 bytes at most
        path = Path(short) / "real.sock"
        with sockets.socket(sockets.AF_UNIX) as server:
            server.bind(str(path))
            server.listen()
            host = Path(short) / "n"
            link_cri_socket(host, path, hard=True)
            link_cri_socket(host, path, hard=True)  # idempotent
            linked = host / "run/containerd/containerd.sock"
            assert not linked.is_symlink() and linked.stat().st_ino == path.stat().st_ino
            with sockets.socket(sockets.AF_UNIX) as client:
                client.connect(str(host / "var/run/containerd/containerd.sock"))


async def test_each_container_has_its_own_tmp(tmp_path: Path):
    """Process containers run on the host; /tmp (and TMPDIR, so tempfile.gettempdir()) must be the
    container's own: two kruise-webhook pods sharing the host /tmp served each other's certificates."""
    from types import SimpleNamespace

    from kruise.sandbox.simulator.process_runner import ProcessRunner

    client = SimpleNamespace(config=SimpleNamespace(server="https://127.0.0.1:6443", headers={}))
    runner = ProcessRunner(client, [], tmp_path / "state")  # type: ignore[arg-type]
    rule = ProcessImage("kruise-webhook*", {"kruise-webhook": ["/bin/true"]}, "kruise-webhook")

    def webhook(**fields) -> list[dict]:
        return [{"name": "webhook", "image": "kruise-webhook", **fields}]

    launches = []
    for uid in ("a", "b"):
        body = pod(uid, namespace="ns", uid=uid, containers=webhook(args=["--cert-dir=/tmp/certs"]))
        launches.append(
            await runner.prepare(body, body["spec"]["containers"][0], rule, pod_ip="1", host_ip="2", node="n")
        )
    tmps = [Path(launch.env["TMPDIR"]) for launch in launches]
    assert tmps[0] != tmps[1] and all(t.is_dir() and t.is_relative_to(tmp_path) for t in tmps)
    assert launches[0].argv[-1] == f"--cert-dir={tmps[0]}/certs"

    # a volume mounted at /tmp is used as such, and a TMPDIR the container sets is kept (rewritten)
    body = pod(
        "c",
        namespace="ns",
        uid="c",
        volumes=[{"name": "scratch", "emptyDir": {}}],
        containers=webhook(
            volumeMounts=[{"name": "scratch", "mountPath": "/tmp"}],
            env=[{"name": "TMPDIR", "value": "/tmp/x"}],
        ),
    )
    launch = await runner.prepare(
        body, body["spec"]["containers"][0], rule, pod_ip="1", host_ip="2", node="n"
    )
    assert launch.env["TMPDIR"] == str(runner.pod_dir("c") / "volumes" / "scratch" / "x")
