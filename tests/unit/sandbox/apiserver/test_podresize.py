"""pods/resize strategy and ValidatePodResize (podresize.py): what is taken, what is refused, the texts."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver import podresize
from kruise.sandbox.qos import compute_qos
from kruise.sandbox.quantity import amount


def _pod(resources=None, *, policy=None, restart="Always", qos=None, inits=None):
    container = {"name": "c1", "image": "nginx", "resources": copy.deepcopy(resources or {})}
    if policy is not None:
        container["resizePolicy"] = policy
    spec = {"containers": [container], "restartPolicy": restart}
    if inits is not None:
        spec["initContainers"] = inits
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": spec, "status": {}}
    pod["status"]["qosClass"] = qos or compute_qos(spec)
    return pod


def _resize(old, resources, policy=None, memory_decrease_needs_restart=False):
    body = {"spec": {"containers": [{"name": "c1", "resources": resources}]}}
    if policy is not None:
        body["spec"]["containers"][0]["resizePolicy"] = policy
    new = podresize.prepare(body, old)
    return new, [
        (c["field"], c["message"]) for c in podresize.validate(new, old, memory_decrease_needs_restart)
    ]


BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
GUARANTEED = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def test_prepare_takes_only_resources_and_resize_policy():
    old = _pod(BURSTABLE)
    body = copy.deepcopy(old)
    body["metadata"]["labels"] = {"x": "y"}
    body["spec"]["containers"][0]["image"] = "other"
    body["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "150m"
    body["spec"]["restartPolicy"] = "Never"
    body["status"] = {"phase": "Failed"}
    new = podresize.prepare(body, old)
    assert new["spec"]["containers"][0]["image"] == "nginx"
    assert new["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "150m"
    assert new["spec"]["restartPolicy"] == "Always"
    assert "labels" not in new["metadata"] and new["status"] == old["status"]


def test_prepare_ignores_unknown_containers_and_regular_init_containers():
    inits = [{"name": "init", "image": "i", "resources": {}}]
    old = _pod(BURSTABLE, inits=inits)
    body = {
        "spec": {
            "containers": [{"name": "nope", "resources": GUARANTEED}],
            "initContainers": [{"name": "init", "resources": GUARANTEED}],
        }
    }
    assert podresize.prepare(body, old) == old


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({}, "BestEffort"),
        ({"requests": {"cpu": "100m"}}, "Burstable"),
        (GUARANTEED, "Guaranteed"),
        (
            {"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1024Mi"}},
            "Guaranteed",
        ),
        ({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}, "Burstable"),
        ({"requests": {"ephemeral-storage": "1Gi"}}, "BestEffort"),
        ({"requests": {"cpu": "0"}}, "BestEffort"),
    ],
)
def test_compute_qos(resources, expected):
    assert compute_qos({"containers": [{"name": "c", "resources": resources}]}) == expected


def test_a_resize_within_the_class_is_accepted():
    old = _pod(BURSTABLE)
    new, causes = _resize(
        old, {"requests": {"cpu": "150m", "memory": "64Mi"}, "limits": {"cpu": "300m", "memory": "256Mi"}}
    )
    assert causes == []
    assert new["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "300m"


def test_qos_change_is_refused_with_the_old_class_as_value():
    _, causes = _resize(_pod({}), {"requests": {"memory": "40Mi"}})
    assert causes == [
        ("spec", 'Invalid value: "BestEffort": Pod QOS Class may not change as a result of resizing')
    ]
    _, causes = _resize(
        _pod(BURSTABLE), {"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": BURSTABLE["limits"]}
    )
    assert causes == [
        ("spec", 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing')
    ]


def test_removing_requests_or_limits_is_refused():
    _, causes = _resize(_pod(BURSTABLE), {"requests": BURSTABLE["requests"], "limits": {"memory": "128Mi"}})
    assert ("spec.containers[0].resources.limits", "Forbidden: resource limits cannot be removed") in causes
    _, causes = _resize(_pod(BURSTABLE), {"requests": {"cpu": "100m"}, "limits": BURSTABLE["limits"]})
    assert (
        "spec.containers[0].resources.requests",
        "Forbidden: resource requests cannot be removed",
    ) in causes


def test_memory_limit_decrease_needs_restart_container_on_1_33_only():
    lowered = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "100Mi"}}
    _, causes = _resize(_pod(BURSTABLE), lowered)
    assert causes == []  # 1.34+ (kubernetes#133012)
    _, causes = _resize(_pod(BURSTABLE), lowered, memory_decrease_needs_restart=True)
    assert causes == [
        (
            "spec.containers[0].resources.limits[memory]",
            "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
        )
    ]
    restart = [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]
    _, causes = _resize(_pod(BURSTABLE, policy=restart), lowered, restart)
    assert causes == []


def test_adding_a_memory_limit_needs_restart_container():
    old = _pod({"requests": {"cpu": "100m", "memory": "64Mi"}})
    _, causes = _resize(old, {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "1Gi"}})
    assert causes == [
        (
            "spec.containers[0].resources.limits[memory]",
            "Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer",
        )
    ]


def test_only_cpu_and_memory_may_change():
    old = _pod({"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}})
    _, causes = _resize(old, {"requests": {"cpu": "100m", "ephemeral-storage": "2Gi"}})
    assert causes == [("spec", "Forbidden: only cpu and memory resources are mutable")]
    _, causes = _resize(
        old, {"requests": {"cpu": "200m", "ephemeral-storage": "1Gi", "example.com/gpu": "1"}}
    )
    assert causes == [
        ("spec", "Forbidden: only cpu and memory resources are mutable")
    ]  # cpu fine, a new resource not


def test_semantically_equal_quantities_are_no_change():
    old = _pod({"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}})
    _, causes = _resize(old, {"requests": {"cpu": "2", "ephemeral-storage": "1024Mi"}})
    assert causes == []


def test_requests_above_limits_are_invalid():
    _, causes = _resize(
        _pod(BURSTABLE), {"requests": {"cpu": "500m", "memory": "64Mi"}, "limits": BURSTABLE["limits"]}
    )
    assert (
        "spec.containers[0].resources.requests",
        'Invalid value: "500m": must be less than or equal to cpu limit of 200m',
    ) in causes


def test_restart_container_is_refused_for_never_pods():
    policy = [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]
    old = _pod(BURSTABLE, policy=policy, restart="Never")
    _, causes = _resize(old, BURSTABLE, policy)
    assert causes == [
        (
            "spec.containers[0].resizePolicy",
            "Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'",
        )
    ]


def test_resize_policy_values_are_checked():
    policy = [
        {"resourceName": "cpu", "restartPolicy": "Sometimes"},
        {"resourceName": "gpu", "restartPolicy": "NotRequired"},
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
    ]
    _, causes = _resize(_pod(BURSTABLE, policy=policy), BURSTABLE, policy)
    assert (
        "spec.containers[0].resizePolicy",
        'Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"',
    ) in causes
    assert (
        "spec.containers[0].resizePolicy",
        'Unsupported value: "gpu": supported values: "cpu", "memory"',
    ) in causes
    assert ("spec.containers[0].resizePolicy[2]", 'Duplicate value: "cpu"') in causes


def test_changing_the_resize_policy_is_refused():
    old = _pod(BURSTABLE, policy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}])
    _, causes = _resize(old, BURSTABLE, [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}])
    assert causes == [("spec", "Forbidden: only cpu and memory resources are mutable")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda p: p["spec"].__setitem__("resources", {"limits": {"cpu": "1"}}),
            "pods with pod-level resources cannot be resized",
        ),
        (
            lambda p: p["metadata"].__setitem__("annotations", {"kubernetes.io/config.mirror": "x"}),
            "static pods cannot be resized",
        ),
        (lambda p: p["spec"].__setitem__("os", {"name": "windows"}), "windows pods cannot be resized"),
    ],
)
def test_pods_that_cannot_be_resized(change, message):
    old = _pod(BURSTABLE)
    change(old)
    _, causes = _resize(old, BURSTABLE)
    assert causes == [("", f"Forbidden: {message}")]


def test_node_without_resize_support():
    old = _pod(BURSTABLE)
    old["status"]["containerStatuses"] = [{"name": "c1", "state": {"running": {}}}]
    _, causes = _resize(old, BURSTABLE)
    assert causes == [("spec", "Forbidden: Pod running on node without support for resize")]
    old["status"]["containerStatuses"][0]["resources"] = BURSTABLE
    assert _resize(old, BURSTABLE)[1] == []


def test_sidecar_resources_are_resizable_and_plain_init_containers_are_not_taken():
    sidecar = {"name": "side", "image": "s", "restartPolicy": "Always", "resources": BURSTABLE}
    old = _pod(BURSTABLE, inits=[sidecar])
    body = {
        "spec": {
            "initContainers": [
                {
                    "name": "side",
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": BURSTABLE["limits"],
                    },
                }
            ]
        }
    }
    new = podresize.prepare(body, old)
    assert new["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] == "50m"
    assert podresize.validate(new, old) == []


_CPU = st.integers(min_value=1, max_value=4000).map(lambda m: f"{m}m")
_MEM = st.integers(min_value=1, max_value=4096).map(lambda m: f"{m}Mi")


@given(cpu=_CPU, mem=_MEM)
def test_guaranteed_stays_guaranteed_when_requests_track_limits(cpu, mem):
    restart = [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]
    old = _pod(GUARANTEED, policy=restart)
    wanted = {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": cpu, "memory": mem}}
    new, causes = _resize(old, wanted, restart)
    assert causes == []
    assert compute_qos(new["spec"]) == "Guaranteed"


@given(cpu=_CPU, limit=_CPU)
def test_cpu_only_resizes_are_valid_exactly_when_they_keep_the_class(cpu, limit):
    old = _pod(BURSTABLE)
    wanted = {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": limit, "memory": "128Mi"}}
    _, causes = _resize(old, wanted)
    too_big = amount(cpu) > amount(limit)
    assert bool(causes) == too_big
