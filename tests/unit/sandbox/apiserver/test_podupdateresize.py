"""ValidatePodUpdate of kube-apiserver 1.27–1.31 with InPlacePodVerticalScaling (podupdateresize.py,
validation.py): cpu/memory of regular containers may change in a plain pod update, the QoS class may not."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.features import NEWEST, features_for
from kruise.sandbox.apiserver.podupdateresize import without_resize
from kruise.sandbox.apiserver.resources import builtin_resources
from kruise.sandbox.apiserver.validation import validate_builtin
from kruise.sandbox.qos import compute_qos

PODS = next(rt for rt in builtin_resources() if rt.key == ("", "pods"))
V131 = features_for("v1.31.4")
BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
FROZEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)"
)
MUTABLE = FROZEN + ",`spec.containers[*].resources` (for CPU/memory only)"


def _pod(resources=None, with_init=False):
    spec = {
        "containers": [{"name": "app", "image": "nginx", "resources": copy.deepcopy(resources or {})}],
    }
    if with_init:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "resources": copy.deepcopy(BURSTABLE)}]
    return {"metadata": {"name": "p"}, "spec": spec, "status": {"qosClass": compute_qos(spec)}}


def _update(old, change, features=V131):
    new = copy.deepcopy(old)
    change(new["spec"])
    return [(c["field"], c["message"]) for c in validate_builtin(PODS, new, old, features)]


def _set(path, value):
    def change(spec):
        target = spec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    "change",
    [
        _set(["containers", 0, "resources", "requests", "cpu"], "150m"),
        _set(["containers", 0, "resources", "limits", "memory"], "96Mi"),  # lowered: no 1.33 rule
        _set(["containers", 0, "resources", "requests"], {"cpu": "100m"}),  # removed: allowed then
        _set(
            ["containers", 0, "resizePolicy"], [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]
        ),
    ],
)
def test_cpu_memory_and_resize_policy_may_change(change):
    assert _update(_pod(BURSTABLE), change) == []


def test_1_32_and_later_still_refuse_any_resource_change():
    change = _set(["containers", 0, "resources", "requests", "cpu"], "150m")
    assert _update(_pod(BURSTABLE), change, NEWEST) == [("spec", FROZEN)]
    assert _update(_pod(BURSTABLE), change, features_for("v1.26.3")) == [("spec", FROZEN)]


@pytest.mark.parametrize(
    "change",
    [
        _set(["containers", 0, "resources", "requests", "ephemeral-storage"], "1Gi"),
        _set(["initContainers", 0, "resources", "requests", "cpu"], "150m"),
        _set(["containers", 0, "env"], [{"name": "A", "value": "1"}]),
    ],
)
def test_anything_else_is_refused_with_resources_in_the_text(change):
    assert _update(_pod(BURSTABLE, with_init=True), change) == [("spec", MUTABLE)]


def test_qos_may_not_change():
    guaranteed = {
        "requests": {"cpu": "200m", "memory": "128Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }
    assert _update(_pod(BURSTABLE), _set(["containers", 0, "resources"], guaranteed)) == [
        ("metadata", 'Invalid value: "Burstable": Pod QoS is immutable')
    ]
    # a best-effort pod gains requests where none were: dropCPUMemoryUpdates keeps none, QoS refuses
    assert _update(_pod(), _set(["containers", 0, "resources"], {"requests": {"cpu": "1"}})) == [
        ("metadata", 'Invalid value: "BestEffort": Pod QoS is immutable')
    ]


def test_changed_resources_pass_spec_validation():
    change = _set(["containers", 0, "resources", "requests", "cpu"], "300m")
    assert _update(_pod(BURSTABLE), change) == [
        (
            "spec.containers[0].resources.requests",
            'Invalid value: "300m": must be less than or equal to cpu limit of 200m',
        )
    ]


_QUANTITY = st.sampled_from(["50m", "100m", "1", "2", "64Mi", "1Gi", "3G"])
_LIST = st.dictionaries(st.sampled_from(["cpu", "memory"]), _QUANTITY, max_size=2)


@given(
    st.lists(st.tuples(_LIST, _LIST), min_size=1, max_size=3),
    st.lists(st.tuples(_LIST, _LIST), min_size=3, max_size=3),
)
def test_without_resize_undoes_any_cpu_memory_change(old_lists, new_lists):
    def spec(lists):
        containers = [
            {"name": f"c{i}", "image": "nginx", "resources": {"requests": r, "limits": lim}}
            for i, (r, lim) in enumerate(lists)
        ]
        return {"containers": containers}

    old = spec(old_lists)
    assert without_resize(spec(new_lists[: len(old_lists)]), old) == old
