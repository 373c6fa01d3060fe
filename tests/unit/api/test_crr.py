"""ContainerRecreateRequest: upstream's mutating-webhook checks and injection, CRD and the seed YAML."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kruise.api import crr
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

SEED = Path("/work/shared/reference/seeds/002_4051790c1ba74477.txt")

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ContainerRecreateRequest",
    "metadata": {"namespace": "default", "name": "recreate-app"},
    "spec": {"podName": "web-0", "containers": [{"name": "app"}, {"name": "sidecar"}]},
}

POD = {
    "metadata": {"name": "web-0", "namespace": "default", "uid": "pod-uid-1"},
    "spec": {
        "nodeName": "node1",
        "terminationGracePeriodSeconds": 30,
        "containers": [
            {
                "name": "app",
                "ports": [{"containerPort": 8080}],
                "lifecycle": {"preStop": {"httpGet": {"path": "/quit", "port": 8080}}},
            },
            {"name": "sidecar", "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}}},
        ],
    },
    "status": {
        "phase": "Running",
        "containerStatuses": [
            {"name": "app", "containerID": "containerd://aaa", "restartCount": 2},
            {"name": "sidecar", "containerID": "containerd://bbb", "restartCount": 0},
        ],
    },
}


def _crr(**spec_changes) -> crr.ContainerRecreateRequest:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    return crr.ContainerRecreateRequest.model_validate(obj)


def test_create_injects_labels_strategy_and_container_context():
    obj = _crr()
    assert crr.admit_create(obj, copy.deepcopy(POD), {"metadata": {"labels": {}}}) is None
    out = obj.to_dict()
    assert out["metadata"]["labels"] == {
        "crr.apps.kruise.io/active": "true",
        "crr.apps.kruise.io/node-name": "node1",
        "crr.apps.kruise.io/pod-uid": "pod-uid-1",
    }
    assert out["spec"]["strategy"] == {"failurePolicy": "Fail", "terminationGracePeriodSeconds": 30}
    app, sidecar = out["spec"]["containers"]
    assert app == {
        "name": "app",
        "preStop": {"httpGet": {"path": "/quit", "port": 8080}},
        "ports": [{"containerPort": 8080}],
        "statusContext": {"containerID": "containerd://aaa", "restartCount": 2},
    }
    assert sidecar == {
        "name": "sidecar",
        "preStop": {"exec": {"command": ["sleep", "1"]}},
        "statusContext": {"containerID": "containerd://bbb", "restartCount": 0},
    }


def test_virtual_kubelet_nodes_are_labelled_and_user_grace_is_kept():
    obj = _crr(strategy={"terminationGracePeriodSeconds": 5, "failurePolicy": "Ignore"})
    node = {"metadata": {"labels": {"type": "virtual-kubelet"}}}
    assert crr.admit_create(obj, copy.deepcopy(POD), node) is None
    assert obj.metadata.labels["type"] == "virtual-kubelet"
    assert obj.spec.strategy.termination_grace_period_seconds == 5
    assert obj.spec.strategy.failure_policy == "Ignore"


def _pod(**changes) -> dict:
    pod = copy.deepcopy(POD)
    for dotted, value in changes.items():
        target = pod
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return pod


@pytest.mark.parametrize(
    ("spec_changes", "pod", "expected"),
    [
        ({"podName": ""}, POD, (400, "podName can not be empty")),
        ({"containers": []}, POD, (400, "containers list can not be null")),
        ({"activeDeadlineSeconds": 2}, POD, (400, "activeDeadlineSeconds can not be less than 3s")),
        (
            {"strategy": {"terminationGracePeriodSeconds": -1}},
            POD,
            (400, "terminationGracePeriodSeconds must be non-negative integer"),
        ),
        (
            {"strategy": {"unreadyGracePeriodSeconds": -1}},
            POD,
            (400, "unreadyGracePeriodSeconds must be non-negative integer"),
        ),
        ({"strategy": {"failurePolicy": "Retry"}}, POD, (400, "unknown failurePolicy Retry")),
        ({}, None, (400, "no found Pod named web-0")),
        ({}, _pod(status__phase="Succeeded"), (400, "not allowed to recreate containers in an inactive Pod")),
        (
            {},
            _pod(metadata__deletionTimestamp="2026-01-01T00:00:00Z"),
            (400, "not allowed to recreate containers in an inactive Pod"),
        ),
        ({}, _pod(spec__nodeName=""), (400, "not allowed to recreate containers in a pending Pod")),
        ({"containers": [{"name": "app"}, {"name": "app"}]}, POD, (400, "can not recreate app multi times")),
        (
            {"containers": [{"name": "app", "statusContext": {"containerID": "x"}}]},
            POD,
            (400, "preStop, ports, statusContext in container are ready-only fields"),
        ),
        ({"containers": [{"name": "db"}]}, POD, (400, "container db not found in Pod")),
        (
            {},
            _pod(status__containerStatuses=[{"name": "app", "containerID": "containerd://aaa"}]),
            (400, "not found sidecar containerStatus in Pod Status"),
        ),
        (
            {"containers": [{"name": "app"}]},
            _pod(status__containerStatuses=[{"name": "app", "containerID": ""}]),
            (400, "no containerID in app containerStatus, maybe the container has not been initialized"),
        ),
    ],
)
def test_create_rejections(spec_changes, pod, expected):
    rejection = crr.admit_create(_crr(**spec_changes), copy.deepcopy(pod), None)
    assert rejection is not None
    assert (rejection.code, rejection.message) == expected


def test_finished_pod_of_sidecar_terminator_may_still_be_recreated():
    pod = _pod(
        status__phase="Succeeded", status__conditions=[{"type": "SidecarTerminated", "status": "True"}]
    )
    assert crr.admit_create(_crr(), pod, None) is None


def _admitted() -> crr.ContainerRecreateRequest:
    obj = _crr()
    assert crr.admit_create(obj, copy.deepcopy(POD), None) is None
    return obj


def test_update_rules():
    old = _admitted()
    same = old.model_copy(deep=True)
    same.metadata.annotations = {"crr.apps.kruise.io/unready-acquired": "2026-01-01T00:00:00Z"}
    assert crr.admit_update(same, old) is None

    changed_spec = old.model_copy(deep=True)
    changed_spec.spec.active_deadline_seconds = 100
    assert crr.admit_update(changed_spec, old) == crr.Rejection(
        403, "spec of ContainerRecreateRequest is immutable"
    )

    for key in ("crr.apps.kruise.io/pod-uid", "crr.apps.kruise.io/node-name"):
        relabelled = old.model_copy(deep=True)
        relabelled.metadata.labels = {**old.metadata.labels, key: "other"}
        assert crr.admit_update(relabelled, old) == crr.Rejection(
            403, f"not allowed to update immutable label {key}"
        )

    stamped = same
    restamped = stamped.model_copy(deep=True)
    restamped.metadata.annotations = {"crr.apps.kruise.io/unready-acquired": "2027-01-01T00:00:00Z"}
    assert crr.admit_update(restamped, stamped) == crr.Rejection(
        403, "not allowed to update immutable annotation crr.apps.kruise.io/unready-acquired"
    )


def test_crd_metadata_and_printer_columns():
    crd = build_crd(crr.CRD)
    assert crd["metadata"]["name"] == "containerrecreaterequests.apps.kruise.io"
    assert crd["spec"]["names"]["shortNames"] == ["crr"]
    alpha, beta = crd["spec"]["versions"]
    assert (alpha["name"], alpha["storage"], beta["name"], beta["storage"]) == (
        "v1alpha1",
        True,
        "v1beta1",
        False,
    )  # both served, v1alpha1 stores (what controllers read; docs/api.md)
    assert alpha["additionalPrinterColumns"] == beta["additionalPrinterColumns"]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    version = alpha
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("PHASE", ".status.phase"),
        ("POD", ".spec.podName"),
        ("NODE", ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


def test_seed_example_is_accepted():
    blocks = re.findall(r"```\n(.*?)```", SEED.read_text(), re.S)
    (seed,) = [yaml.safe_load(b) for b in blocks if "kind: ContainerRecreateRequest" in b]
    schema = build_crd(crr.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(seed, schema).ok
    obj = crr.ContainerRecreateRequest.model_validate(seed)
    pod = copy.deepcopy(POD)
    pod["metadata"]["name"] = "pod-name"
    assert crr.admit_create(obj, pod, None) is None
    assert obj.spec.strategy.termination_grace_period_seconds == 30
    assert obj.spec.strategy.unready_grace_period_seconds == 3
    assert check(obj.to_dict(), schema).ok
