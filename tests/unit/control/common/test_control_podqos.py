"""Pod QoS class as Kubernetes' GetPodQOS computes it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.goquantity import QuantityError
from kruise.control.common.podqos import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos_class


def ctr(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "x", "resources": resources}


FULL = {"cpu": "100m", "memory": "100Mi"}

CASES = [
    ("no resources", [ctr()], [], BEST_EFFORT),
    ("empty maps", [ctr({}, {})], [], BEST_EFFORT),
    ("zero quantities", [ctr({"cpu": "0"}, {"memory": "0"})], [], BEST_EFFORT),
    ("only extended resources", [ctr({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], [], BEST_EFFORT),
    ("ephemeral storage only", [ctr({"ephemeral-storage": "1Gi"})], [], BEST_EFFORT),
    ("request only", [ctr({"cpu": "100m"})], [], BURSTABLE),
    ("guaranteed", [ctr(FULL, FULL)], [], GUARANTEED),
    (
        "guaranteed, equal in value",
        [ctr({"cpu": "0.1", "memory": "100Mi"}, {"cpu": "100m", "memory": "102400Ki"})],
        [],
        GUARANTEED,
    ),
    ("limits without requests (template not defaulted)", [ctr(None, FULL)], [], BURSTABLE),
    ("cpu limit only", [ctr({"cpu": "1"}, {"cpu": "1"})], [], BURSTABLE),
    ("request below limit", [ctr({"cpu": "50m", "memory": "100Mi"}, FULL)], [], BURSTABLE),
    (
        "guaranteed plus extended resource",
        [ctr({**FULL, "nvidia.com/gpu": "1"}, {**FULL, "nvidia.com/gpu": "1"})],
        [],
        GUARANTEED,
    ),
    ("one guaranteed one best effort", [ctr(FULL, FULL), ctr()], [], BURSTABLE),
    (
        "two guaranteed",
        [ctr(FULL, FULL), ctr({"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})],
        [],
        GUARANTEED,
    ),
    ("init container best effort", [ctr(FULL, FULL)], [ctr()], BURSTABLE),
    ("init container guaranteed", [ctr(FULL, FULL)], [ctr(FULL, FULL)], GUARANTEED),
    ("only init container has resources", [ctr()], [ctr({"cpu": "1"})], BURSTABLE),
    (
        "sums compared, not containers (Kubernetes' aggregate rule)",
        [
            ctr({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
            ctr({"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}),
        ],
        [],
        GUARANTEED,
    ),
    ("negative limit ignored", [ctr(FULL, {"cpu": "-1", "memory": "100Mi"})], [], BURSTABLE),
    (
        "numbers as JSON numbers",
        [ctr({"cpu": 1, "memory": 1024}, {"cpu": 1, "memory": 1024})],
        [],
        GUARANTEED,
    ),
]


@pytest.mark.parametrize(("label", "containers", "inits", "expected"), CASES, ids=[c[0] for c in CASES])
def test_pod_qos_class(label: str, containers: list[Any], inits: list[Any], expected: str) -> None:
    spec: dict[str, Any] = {"containers": containers}
    if inits:
        spec["initContainers"] = inits
    assert pod_qos_class(spec) == expected, label


def test_empty_spec_is_best_effort() -> None:
    assert pod_qos_class({}) == BEST_EFFORT


def test_bad_quantity_is_refused() -> None:
    with pytest.raises(QuantityError):
        pod_qos_class({"containers": [ctr({"cpu": "lots"})]})


milli = st.integers(min_value=1, max_value=64_000)
mebi = st.integers(min_value=1, max_value=64 * 1024)


@st.composite
def guaranteed_container(draw: st.DrawFn) -> dict[str, Any]:
    values = {"cpu": f"{draw(milli)}m", "memory": f"{draw(mebi)}Mi"}
    return ctr(dict(values), dict(values))


@given(st.lists(guaranteed_container(), min_size=1, max_size=5), st.randoms())
def test_equal_requests_and_limits_everywhere_is_guaranteed_in_any_order(
    containers: list[dict[str, Any]], rnd: Any
) -> None:
    rnd.shuffle(containers)
    assert pod_qos_class({"containers": containers}) == GUARANTEED


@given(st.lists(guaranteed_container(), min_size=1, max_size=4), st.sampled_from(["cpu", "memory"]))
def test_a_container_missing_a_limit_makes_it_burstable(
    containers: list[dict[str, Any]], dropped: str
) -> None:
    containers[-1]["resources"]["limits"].pop(dropped)
    assert pod_qos_class({"containers": containers}) == BURSTABLE


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"]),
            st.integers(min_value=0, max_value=5).map(str),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_best_effort_exactly_when_no_positive_cpu_or_memory(requests: list[dict[str, str]]) -> None:
    containers = [ctr(r) for r in requests]
    has_compute = any(k in ("cpu", "memory") and v != "0" for r in requests for k, v in r.items())
    assert (pod_qos_class({"containers": containers}) == BEST_EFFORT) is not has_compute
