"""Resource fit of a BroadcastJob pod on an empty node (scheduler noderesources.Fits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.broadcastjob.resources import (
    insufficient_resources,
    is_scalar_resource,
    pod_requests,
    scaled,
)


def _container(name, **requests):
    return {"name": name, "resources": {"requests": requests}}


def _node(**allocatable):
    return {"metadata": {"name": "n"}, "status": {"allocatable": allocatable}}


@pytest.mark.parametrize("raw", ["abc", "1Qi", "", "--1", True])
def test_a_bad_quantity_is_refused_naming_resource_and_value(raw):
    with pytest.raises(ValueError, match=r"quantity memory="):
        scaled("memory", raw)


def test_cpu_scales_to_millicores_rounding_up_and_others_to_whole_units():
    assert scaled("cpu", "1") == 1000
    assert scaled("cpu", "0.0001") == 1
    assert scaled("memory", "1.5") == 2


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("nvidia.com/gpu", True),
        ("hugepages-2Mi", True),
        ("attachable-volumes-aws-ebs", True),
        ("kubernetes.io/something", False),
        ("foo.kubernetes.io/x", False),
        ("requests.nvidia.com/gpu", False),
        ("cpu", False),
        ("pods", False),
    ],
)
def test_scalar_resource_names(name, scalar):
    assert is_scalar_resource(name) is scalar


def test_requests_sum_containers_and_take_the_init_peak():
    spec = {
        "containers": [_container("a", cpu="100m", memory="64Mi"), _container("b", cpu="200m")],
        "initContainers": [_container("init", cpu="1")],
    }
    assert pod_requests(spec) == {"cpu": 1000, "memory": 64 * 2**20}


def test_sidecars_add_to_the_total_and_to_later_init_containers():
    spec = {
        "containers": [_container("a", cpu="100m")],
        "initContainers": [
            {**_container("sidecar", cpu="200m"), "restartPolicy": "Always"},
            _container("late-init", cpu="250m"),
        ],
        "overhead": {"cpu": "50m"},
    }
    # containers 100 + sidecar 200 = 300; the init peak is 250 + 200 = 450; plus overhead 50
    assert pod_requests(spec) == {"cpu": 500}


def test_no_requests_fit_any_node_that_allows_a_pod():
    assert insufficient_resources({"containers": [{"name": "a"}]}, _node(pods="1")) == []


def test_a_node_without_allocatable_pods_takes_none():
    assert insufficient_resources({"containers": []}, _node(cpu="4")) == ["Too many pods"]


def test_every_shortfall_is_reported_in_the_schedulers_order():
    spec = {"containers": [_container("a", cpu="3", memory="2Gi", **{"nvidia.com/gpu": "1"})]}
    reasons = insufficient_resources(spec, _node(cpu="2", memory="1Gi", pods="10"))
    assert reasons == ["Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu"]


@given(
    cpu=st.integers(min_value=0, max_value=10_000),
    node_cpu=st.integers(min_value=0, max_value=10_000),
    mem=st.integers(min_value=0, max_value=2**34),
    node_mem=st.integers(min_value=0, max_value=2**34),
)
def test_fit_is_exactly_requests_within_allocatable(cpu, node_cpu, mem, node_mem):
    spec = {"containers": [_container("a", cpu=f"{cpu}m", memory=str(mem))]}
    reasons = insufficient_resources(spec, _node(cpu=f"{node_cpu}m", memory=str(node_mem), pods="1"))
    assert ("Insufficient cpu" in reasons) == (cpu > node_cpu)
    assert ("Insufficient memory" in reasons) == (mem > node_mem)
