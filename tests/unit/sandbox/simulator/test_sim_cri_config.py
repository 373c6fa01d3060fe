"""The CRI configs a kubelet sends to a real runtime for a pod and its containers."""

from __future__ import annotations

import base64
from functools import partial
from pathlib import Path

import pytest

from kruise.sandbox.cri import NotFoundError
from kruise.sandbox.cri.errors import AlreadyExistsError, error_for
from kruise.sandbox.cri.schema import enum_value
from kruise.sandbox.simulator.containerhash import HASH_ANNOTATION, container_hash
from kruise.sandbox.simulator.cri_config import (
    REQUESTED_IMAGE_ANNOTATION,
    container_config,
    log_directory,
    namespace_options,
    sandbox_config,
)
from kruise.sandbox.simulator.podenv import ConfigMissing
from kruise.sandbox.simulator.podvolumes import MountFailed, VolumeContext
from tests.kit.pods import pod

OBJECTS = {
    ("configmaps", "default", "app"): {"data": {"greeting": "hi", "conf": "x=1"}},
    ("secrets", "default", "creds"): {"data": {"password": base64.b64encode(b"s3cret").decode()}},
}


# pod web-0 of app web, as the kubelet hands it to the CRI
web_pod = partial(
    pod, "web-0", uid="u-1", labels={"app": "web"}, annotations={"note": "kept"}, serviceAccountName="default"
)


async def fetch(plural: str, namespace: str, name: str) -> dict | None:
    return OBJECTS.get((plural, namespace, name))


async def token(namespace: str, account: str, audience: str, expiration: int) -> str:
    return f"token-of-{namespace}/{account}"


def context(p: dict) -> VolumeContext:
    return VolumeContext(p, fetch, token, "198.18.1.7", "127.18.0.2")


def test_sandbox_config_carries_the_pod_and_the_kubelet_labels(tmp_path: Path):
    p = web_pod()
    config = sandbox_config(p, log_directory(tmp_path, p), attempt=1)
    assert (config.metadata.name, config.metadata.namespace, config.metadata.uid) == (
        "web-0",
        "default",
        "u-1",
    )
    assert config.metadata.attempt == 1 and config.hostname == "web-0"
    assert config.log_directory == str(tmp_path / "default_web-0_u-1")
    assert dict(config.labels) == {
        "app": "web",
        "io.kubernetes.pod.name": "web-0",
        "io.kubernetes.pod.namespace": "default",
        "io.kubernetes.pod.uid": "u-1",
    }
    assert dict(config.annotations) == {"note": "kept"}
    host = sandbox_config(web_pod(hostNetwork=True), tmp_path)
    assert host.hostname == ""
    assert host.linux.security_context.namespace_options.network == enum_value("NamespaceMode", "NODE")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, ("POD", "CONTAINER", "POD")),  # each container its own PID namespace, as a kubelet asks
        ({"shareProcessNamespace": True}, ("POD", "POD", "POD")),
        ({"hostNetwork": True, "hostPID": True, "hostIPC": True}, ("NODE", "NODE", "NODE")),
    ],
)
def test_namespace_options_follow_the_pod_spec(spec: dict, expected: tuple[str, str, str]):
    options = namespace_options(spec)
    assert (options.network, options.pid, options.ipc) == tuple(
        enum_value("NamespaceMode", mode) for mode in expected
    )


async def test_container_config_resolves_env_and_mounts_every_volume(tmp_path: Path):
    p = web_pod(
        volumes=[
            {"name": "cfg", "configMap": {"name": "app"}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "host", "hostPath": {"path": "/var/run"}},
            {"name": "sa", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
            {"name": "pw", "secret": {"secretName": "creds"}},
        ]
    )
    spec = {
        "name": "app",
        "image": "busybox:1.35.0",
        "command": ["sh", "-c"],
        "args": ["echo $(GREETING) from $(POD_NAME)"],
        "env": [
            {"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "greeting"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        ],
        "volumeMounts": [
            {"name": "cfg", "mountPath": "/etc/app", "readOnly": True},
            {"name": "scratch", "mountPath": "/data", "subPath": "one"},
            {"name": "host", "mountPath": "/var/run"},
            {"name": "sa", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
            {"name": "pw", "mountPath": "/pw"},
        ],
    }
    pod_dir, node_root = tmp_path / "pods" / "u-1", tmp_path / "nodes" / "node-1"
    config = await container_config(
        p, spec, 2, context=context(p), pod_dir=pod_dir, node_root=node_root, base_env={"BASE": "1"}
    )
    assert (config.metadata.name, config.metadata.attempt, config.log_path) == ("app", 2, "app/2.log")
    pid = config.linux.security_context.namespace_options.pid
    assert pid == enum_value("NamespaceMode", "CONTAINER")  # not the pod's: PID 1 is the container's own
    assert config.image.image == "busybox:1.35.0"
    assert config.annotations[REQUESTED_IMAGE_ANNOTATION] == "busybox:1.35.0"
    assert config.annotations[HASH_ANNOTATION] == format(container_hash(spec), "x")
    assert list(config.command) == ["sh", "-c"] and list(config.args) == ["echo hi from web-0"]
    env = {kv.key: kv.value.decode() for kv in config.envs}
    assert env == {
        "BASE": "1",
        "GREETING": "hi",
        "POD_NAME": "web-0",
        "POD_IP": "198.18.1.7",
        "PASSWORD": "s3cret",
    }
    assert config.labels["io.kubernetes.container.name"] == "app"
    assert config.labels["io.kubernetes.pod.uid"] == "u-1" and "app" not in config.labels
    mounts = {m.container_path: (Path(m.host_path), m.readonly) for m in config.mounts}
    assert mounts["/etc/app"] == (pod_dir / "volumes" / "cfg", True)
    assert (pod_dir / "volumes" / "cfg" / "conf").read_text() == "x=1"
    assert mounts["/data"] == (pod_dir / "volumes" / "scratch" / "one", False) and mounts["/data"][0].is_dir()
    assert mounts["/var/run"] == (node_root / "var" / "run", False)
    account = mounts["/var/run/secrets/kubernetes.io/serviceaccount"][0]
    assert (account / "token").read_text() == "token-of-default/default"
    assert (mounts["/pw"][0] / "password").read_bytes() == b"s3cret"


async def test_missing_sources_create_nothing(tmp_path: Path):
    p = web_pod(volumes=[{"name": "cfg", "configMap": {"name": "absent"}}])
    env_spec = {
        "name": "app",
        "image": "busybox",
        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k"}}}],
    }
    options = {"context": context(p), "pod_dir": tmp_path / "p", "node_root": tmp_path / "n", "base_env": {}}
    with pytest.raises(ConfigMissing, match='configmap "absent" not found'):
        await container_config(p, env_spec, 0, **options)
    mount_spec = {"name": "app", "image": "busybox", "volumeMounts": [{"name": "cfg", "mountPath": "/c"}]}
    with pytest.raises(MountFailed, match='configmap "absent" not found'):
        await container_config(p, mount_spec, 0, **options)
    unknown = {"name": "app", "image": "busybox", "volumeMounts": [{"name": "nope", "mountPath": "/c"}]}
    with pytest.raises(MountFailed, match='volumeMount "nope": no volume of that name'):
        await container_config(p, unknown, 0, **options)


def test_grpc_codes_become_the_fake_runtimes_errors():
    assert isinstance(error_for("NOT_FOUND", "gone"), NotFoundError)
    assert isinstance(error_for("ALREADY_EXISTS", "taken"), AlreadyExistsError)
    other = error_for("UNAVAILABLE", "down")
    assert other.code == "UNAVAILABLE" and str(other) == "down"


def test_the_exit_poller_reports_new_exits_even_of_containers_never_seen_running():
    from kruise.sandbox.cri import ContainerState
    from kruise.sandbox.simulator.cri_node import _new_exits

    labels = {
        "io.kubernetes.pod.namespace": "default",
        "io.kubernetes.pod.name": "web-0",
        "io.kubernetes.pod.uid": "u-1",
        "io.kubernetes.container.name": "app",
    }
    running, exited = int(ContainerState.RUNNING), int(ContainerState.EXITED)
    before = {
        "a": (running, labels),
        "b": (exited, labels),
        "gone": (running, labels),
        "crictl": (running, {}),
    }
    now = {"a": (exited, labels), "b": (exited, labels), "quick": (exited, labels), "crictl": (exited, {})}
    reported = _new_exits(before, now)
    assert sorted(e.container_id for e in reported) == ["a", "gone", "quick"]
    assert {e.pod_key for e in reported} == {"default/web-0"}


async def test_run_as_user_and_group_come_from_the_container_then_the_pod(tmp_path: Path):
    p = web_pod(securityContext={"runAsUser": 1000, "runAsGroup": 3000})
    options = {"context": context(p), "pod_dir": tmp_path / "p", "node_root": tmp_path / "n", "base_env": {}}
    own = {"name": "app", "image": "busybox", "securityContext": {"runAsUser": 0}}
    security = (await container_config(p, own, 0, **options)).linux.security_context
    assert (security.run_as_user.value, security.run_as_group.value) == (0, 3000)  # root is a value too
    bare = web_pod()
    plain = await container_config(
        bare, {"name": "app", "image": "busybox"}, 0, **{**options, "context": context(bare)}
    )
    assert not plain.linux.security_context.HasField("run_as_user")  # the image's own user
    assert not plain.linux.security_context.HasField("run_as_group")


async def test_host_network_listen_anywhere_binds_the_node_address(tmp_path: Path):
    spec = {
        "name": "daemon",
        "image": "kruise-py:0.1.0",
        "args": ["--addr=:10221", "--log-level=info", ":9000"],
    }
    options = {"pod_dir": tmp_path / "p", "node_root": tmp_path / "n", "base_env": {}}
    on_host = web_pod(hostNetwork=True)
    config = await container_config(on_host, spec, 0, context=context(on_host), **options)
    assert list(config.args) == ["--addr=127.18.0.2:10221", "--log-level=info", "127.18.0.2:9000"]
    own_netns = web_pod()
    config = await container_config(own_netns, spec, 0, context=context(own_netns), **options)
    assert list(config.args) == spec["args"]  # the pod's own network namespace: every interface is its own


async def test_a_claim_mounts_the_directory_of_its_bound_volume_once_bound(tmp_path: Path):
    """A stateful pod recreated on another node must find what its predecessor wrote, and a pod whose
    claim is not bound yet waits (FailedMount, retried) rather than starting on an empty directory."""
    claims = {
        "data-web-0": {"spec": {"volumeName": "pvc-1"}, "status": {"phase": "Bound"}},
        "pending": {"spec": {}, "status": {"phase": "Pending"}},
    }

    async def fetch_claim(plural: str, namespace: str, name: str) -> dict | None:
        assert plural == "persistentvolumeclaims" and namespace == "default"
        return claims.get(name)

    spec = {"name": "app", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}

    async def mounts(claim: str, node: str, uid: str) -> dict[str, Path]:
        p = pod(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])
        p["metadata"]["uid"] = uid
        options = {
            "context": VolumeContext(p, fetch_claim, token, "198.18.1.7", "127.18.0.2"),
            "pod_dir": tmp_path / "pods" / uid,
            "node_root": tmp_path / "nodes" / node,
            "base_env": {},
        }
        config = await container_config(p, spec, 0, **options)
        return {m.container_path: Path(m.host_path) for m in config.mounts}

    first = await mounts("data-web-0", "node-1", "u-1")
    assert first["/data"] == tmp_path / "claims" / "pvc-1" and first["/data"].is_dir()
    (first["/data"] / "hostname").write_text("web-0")
    again = await mounts("data-web-0", "node-2", "u-2")
    assert (again["/data"] / "hostname").read_text() == "web-0"
    with pytest.raises(MountFailed, match='persistentvolumeclaim "pending" is not bound'):
        await mounts("pending", "node-1", "u-3")
    with pytest.raises(MountFailed, match='persistentvolumeclaim "absent" not found'):
        await mounts("absent", "node-1", "u-4")
