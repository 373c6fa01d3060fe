"""Pull policy defaults, ConfigMap env blocking and container status entries."""

import pytest

from kruise.sandbox.cri import ContainerState
from kruise.sandbox.simulator.containerhash import HASH_ANNOTATION, container_hash
from kruise.sandbox.simulator.containers import (
    config_error,
    container_status,
    default_pull_policy,
    kubelet_annotations,
    qos_class,
)
from kruise.sandbox.simulator.noderuntime import ContainerStatus


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry:5000/app", "Always"),
        ("registry:5000/app:v1", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
    ],
)
def test_default_pull_policy(image, policy):
    assert default_pull_policy(image) == policy


CONFIGMAPS = {("default", "x-barrier"): {"data": {"p_200": "true"}}}


def lookup(namespace, name):
    return CONFIGMAPS.get((namespace, name))


def env_from_key(name, key, optional=None):
    ref = {"name": name, "key": key}
    if optional is not None:
        ref["optional"] = optional
    return {"name": "c", "env": [{"name": "E", "valueFrom": {"configMapKeyRef": ref}}]}


@pytest.mark.parametrize(
    ("container", "problem"),
    [
        (env_from_key("x-barrier", "p_100"), "couldn't find key p_100 in ConfigMap default/x-barrier"),
        (env_from_key("x-barrier", "p_200"), None),
        (env_from_key("missing", "k"), 'configmap "missing" not found'),
        (env_from_key("missing", "k", optional=True), None),
        ({"name": "c", "envFrom": [{"configMapRef": {"name": "missing"}}]}, 'configmap "missing" not found'),
        ({"name": "c", "env": [{"name": "A", "value": "1"}]}, None),
    ],
)
def test_config_error(container, problem):
    assert config_error("default", container, lookup) == problem


def record(state, **extra):
    fields = {
        "id": "c" * 64,
        "name": "app",
        "attempt": 0,
        "requested_image": "nginx:alpine",
        "image": "docker.io/library/nginx:alpine",
        "image_ref": "docker.io/library/nginx@sha256:" + "2" * 64,
        "state": state,
        "created_at": 1_700_000_000_000_000_000,
        "started_at": 1_700_000_001_000_000_000,
    }
    return ContainerStatus(**(fields | extra))


def test_running_status_entry():
    status = container_status(
        {"name": "app", "image": "nginx:alpine"},
        record(ContainerState.RUNNING),
        restart_count=1,
        ready=True,
        waiting=None,
        last_terminated={"exitCode": 0},
    )
    assert status == {
        "name": "app",
        "image": "docker.io/library/nginx:alpine",
        "imageID": "docker.io/library/nginx@sha256:" + "2" * 64,
        "containerID": "containerd://" + "c" * 64,
        "ready": True,
        "started": True,
        "restartCount": 1,
        "state": {"running": {"startedAt": "2023-11-14T22:13:21Z"}},
        "lastState": {"terminated": {"exitCode": 0}},
        "resources": {},
    }


def test_running_entry_reports_applied_resources_and_allocated_requests():
    allocated = {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}
    applied = {"requests": {"cpu": "250m"}, "limits": {"cpu": "1"}}
    status = container_status(
        {"name": "app", "image": "nginx:alpine"},
        record(ContainerState.RUNNING),
        restart_count=0,
        ready=True,
        waiting=None,
        last_terminated=None,
        allocated=allocated,
        actuated=applied,
    )
    assert status["resources"] == applied
    assert status["allocatedResources"] == {"cpu": "500m"}


def test_waiting_and_terminated_entries():
    waiting = container_status(
        {"name": "app", "image": "nginx"},
        None,
        restart_count=0,
        ready=False,
        waiting=("CreateContainerConfigError", "couldn't find key k in ConfigMap default/x"),
        last_terminated=None,
    )
    assert waiting["state"] == {
        "waiting": {
            "reason": "CreateContainerConfigError",
            "message": "couldn't find key k in ConfigMap default/x",
        }
    }
    assert waiting["imageID"] == "" and "containerID" not in waiting
    done = container_status(
        {"name": "app", "image": "nginx"},
        record(ContainerState.EXITED, exit_code=1, finished_at=1_700_000_002_000_000_000, reason="Error"),
        restart_count=0,
        ready=False,
        waiting=None,
        last_terminated=None,
    )
    assert done["state"]["terminated"]["exitCode"] == 1
    assert done["state"]["terminated"]["reason"] == "Error"
    assert done["ready"] is False


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ({}, "BestEffort"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        ({"requests": {"cpu": "1"}}, "Burstable"),
    ],
)
def test_qos(resources, qos):
    assert qos_class({"spec": {"containers": [{"name": "c", "resources": resources}]}}) == qos


def test_kubelet_annotations_carry_the_container_hash_restart_count_and_grace():
    """kruise-daemon reads these back from the runtime (runtime-containers-meta ``plainHash``)."""
    pod = {"spec": {"terminationGracePeriodSeconds": 5}}
    old, new = {"name": "nginx", "image": "nginx:alpine"}, {"name": "nginx", "image": "nginx:mainline-alpine"}
    annotations = kubelet_annotations(pod, old, 2)
    assert annotations == {
        HASH_ANNOTATION: format(container_hash(old), "x"),
        "io.kubernetes.container.restartCount": "2",
        "io.kubernetes.pod.terminationGracePeriod": "5",
    }
    assert kubelet_annotations(pod, new, 2)[HASH_ANNOTATION] != annotations[HASH_ANNOTATION]
