"""PUB's RESIZE operation: which pod UPDATEs only resize containers in place (upstream's
`CanResizeInplace`), and how the InPlacePodVerticalScaling gate decides whether UPDATE covers RESIZE."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.pub import budget


def resources(req_cpu="1", req_mem="2Gi", lim_cpu="2", lim_mem="4Gi", **extra):
    requests = {"cpu": req_cpu, "memory": req_mem}
    limits = {"cpu": lim_cpu, "memory": lim_mem}
    for key, value in extra.items():
        kind, _, name = key.partition("_")
        (requests if kind == "req" else limits)[name] = value
    return {"requests": requests, "limits": limits}


def a_pod(res=None, *, policy=None, labels=None, annotations=None):
    container = {"name": "main", "image": "nginx:1.25"}
    if res is not None:
        container["resources"] = res
    if policy is not None:
        container["resizePolicy"] = [{"resourceName": k, "restartPolicy": v} for k, v in policy.items()]
    return {
        "metadata": {
            "name": "web-0",
            "namespace": "ns",
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {"containers": [container, {"name": "sidecar", "image": "envoy:1"}]},
    }


# ---- upstream's TestCanResizeInplace cases ----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(a_pod(), a_pod(resources("1", "1Gi", "1", "1Gi")), False, id="qos changed"),
        pytest.param(a_pod(resources()), a_pod(resources("3", "3Gi")), True, id="resources changed"),
        pytest.param(
            a_pod(resources()), a_pod(resources(lim_storage="1Gi")), False, id="storage resource added"
        ),
        pytest.param(
            a_pod(resources(req_storage="1Gi")), a_pod(resources()), False, id="storage resource removed"
        ),
        pytest.param(
            a_pod(resources()),
            a_pod(resources("3", "3Gi"), annotations={"kubernetes.io/config.source": "file"}),
            False,
            id="static pod",
        ),
        pytest.param(
            a_pod(resources(), policy={"cpu": "RestartContainer"}),
            a_pod(resources(req_cpu="2"), policy={"cpu": "RestartContainer"}),
            False,
            id="resizePolicy RestartContainer",
        ),
        pytest.param(
            a_pod(resources(), policy={"cpu": "RestartContainer", "memory": "NotRequired"}),
            a_pod(
                resources(req_mem="3Gi", lim_mem="5Gi"),
                policy={"cpu": "RestartContainer", "memory": "NotRequired"},
            ),
            True,
            id="mixed policy, only the NotRequired resource changed",
        ),
        pytest.param(
            a_pod(resources()),
            a_pod(resources("3", "3Gi"), labels={"unavailable-pod.kruise.io/data": "true"}),
            False,
            id="unavailable label added",
        ),
    ],
)
def test_upstream_cases(old, new, expected):
    assert budget.can_resize_in_place(old, new) is expected
    assert budget.update_operation(old, new) == ("RESIZE" if expected else "UPDATE")


# ---- more edges -------------------------------------------------------------------------------


def test_an_unchanged_pod_counts_as_resize_only():
    # nothing changed at all: upstream returns true (the webhook then admits since the spec is equal)
    assert budget.can_resize_in_place(a_pod(resources()), a_pod(resources()))


def test_an_unavailable_label_already_there_does_not_block():
    labels = {"unavailable-pod.kruise.io/x": "1"}
    assert budget.can_resize_in_place(a_pod(resources(), labels=labels), a_pod(resources("2"), labels=labels))


def test_an_image_change_with_a_resize_is_an_update():
    new = a_pod(resources("3"))
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert budget.update_operation(a_pod(resources()), new) == "UPDATE"


def test_a_resize_policy_change_is_an_update():
    assert not budget.can_resize_in_place(
        a_pod(resources()), a_pod(resources("3"), policy={"cpu": "NotRequired"})
    )


def test_explicit_not_required_and_empty_policy_allow():
    for policy in ({"cpu": "NotRequired"}, {"cpu": ""}, {"memory": "RestartContainer"}):
        assert budget.can_resize_in_place(
            a_pod(resources(), policy=policy), a_pod(resources("3"), policy=policy)
        )


def test_init_container_resources_are_part_of_the_compared_spec():
    old, new = a_pod(resources()), a_pod(resources("3"))
    for pod_, cpu in ((old, "1"), (new, "2")):
        pod_["spec"]["initContainers"] = [
            {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
        ]
    assert not budget.can_resize_in_place(old, new)


def test_container_count_or_names_change_is_an_update():
    new = a_pod(resources("3"))
    new["spec"]["containers"][1]["name"] = "other"
    assert not budget.can_resize_in_place(a_pod(resources()), new)
    assert not budget.resources_resizable(a_pod(resources()), new)
    fewer = a_pod(resources("3"))
    fewer["spec"]["containers"].pop()
    assert not budget.resources_resizable(a_pod(resources()), fewer)


def test_equal_quantities_in_other_spellings_are_no_change():
    old = a_pod(resources(), policy={"cpu": "RestartContainer", "memory": "RestartContainer"})
    new = a_pod(
        resources("1000m", "2048Mi", "2", "4Gi"),
        policy={"cpu": "RestartContainer", "memory": "RestartContainer"},
    )
    assert budget.can_resize_in_place(old, new)  # RestartContainer does not matter: nothing changed


def test_extended_resource_change_is_an_update():
    old = a_pod(resources(req_example_com_gpu="1", lim_example_com_gpu="1"))
    new = a_pod(resources(req_example_com_gpu="2", lim_example_com_gpu="2"))
    assert not budget.can_resize_in_place(old, new)


def test_unparsable_quantity_is_not_a_resize():
    assert not budget.can_resize_in_place(a_pod(resources()), a_pod(resources(req_cpu="lots")))


@pytest.mark.parametrize(
    ("annotations", "static"),
    [
        ({}, False),
        ({"kubernetes.io/config.source": "api"}, False),
        ({"kubernetes.io/config.source": "file"}, True),
    ],
)
def test_is_static_pod(annotations, static):
    assert budget.is_static_pod(a_pod(annotations=annotations)) is static


# ---- upstream's TestIsResourceChanged ---------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "name", "changed"),
    [
        ({"memory": "2Gi"}, {"cpu": "1", "memory": "2Gi"}, "cpu", True),
        ({"cpu": "1", "memory": "2Gi"}, {"memory": "2Gi"}, "cpu", True),
        ({"memory": "2Gi"}, {"memory": "2Gi"}, "cpu", False),
        ({"cpu": "1", "memory": "2Gi"}, {"cpu": "2", "memory": "2Gi"}, "cpu", True),
        ({"cpu": "1", "memory": "2Gi"}, {"cpu": "2", "memory": "2Gi"}, "memory", False),
        ({"cpu": "500m"}, {"cpu": "0.5"}, "cpu", False),
        (None, {}, "cpu", False),
    ],
)
def test_is_resource_changed(old, new, name, changed):
    assert budget.is_resource_changed(old, new, name) is changed


millicores = st.integers(1, 64_000)
mebibytes = st.integers(1, 65_536)


@given(millicores, millicores, mebibytes, mebibytes)
def test_burstable_cpu_and_memory_resizes_stay_resize_only(cpu_a, cpu_b, mem_a, mem_b):
    """Requests-only changes keep a Burstable pod Burstable (limits untouched and above requests)."""
    limit_cpu, limit_mem = f"{64_001}m", f"{65_537}Mi"
    old = a_pod(resources(f"{cpu_a}m", f"{mem_a}Mi", limit_cpu, limit_mem))
    new = a_pod(resources(f"{cpu_b}m", f"{mem_b}Mi", limit_cpu, limit_mem))
    assert budget.update_operation(old, new) == "RESIZE"
    # the same change under a RestartContainer policy is an UPDATE exactly when cpu changed
    policy = {"cpu": "RestartContainer"}
    old_r = a_pod(resources(f"{cpu_a}m", f"{mem_a}Mi", limit_cpu, limit_mem), policy=policy)
    new_r = a_pod(resources(f"{cpu_b}m", f"{mem_b}Mi", limit_cpu, limit_mem), policy=policy)
    assert budget.update_operation(old_r, new_r) == ("RESIZE" if cpu_a == cpu_b else "UPDATE")


@given(millicores, millicores)
def test_guaranteed_pods_resize_only_when_they_stay_guaranteed(cpu_a, cpu_b):
    def single(res):
        pod_ = a_pod(res)
        pod_["spec"]["containers"].pop()  # a container without limits would make the pod Burstable
        return pod_

    old = single(resources(f"{cpu_a}m", "1Gi", f"{cpu_a}m", "1Gi"))
    guaranteed = single(resources(f"{cpu_b}m", "1Gi", f"{cpu_b}m", "1Gi"))
    assert budget.can_resize_in_place(old, guaranteed)
    burstable = single(resources(f"{cpu_b}m", "1Gi", f"{cpu_b + 1}m", "1Gi"))
    assert not budget.can_resize_in_place(old, burstable)


@given(
    st.dictionaries(st.sampled_from(["image", "command", "env", "ports"]), st.text(max_size=5), min_size=1)
)
def test_any_other_container_change_is_an_update(changes):
    old = a_pod(resources())
    new = copy.deepcopy(old)
    new["spec"]["containers"][0].update(changes)
    new["spec"]["containers"][0]["resources"] = resources("3")
    if new["spec"]["containers"][0] | {"resources": None} != old["spec"]["containers"][0] | {
        "resources": None
    }:
        assert budget.update_operation(old, new) == "UPDATE"


# ---- the gate ---------------------------------------------------------------------------------


def a_pub(operations=None, annotation=None):
    spec = {"maxUnavailable": 1}
    if operations is not None:
        spec["protectOperations"] = operations
    annotations = {"kruise.io/pub-protect-operations": annotation} if annotation else {}
    return {"metadata": {"name": "p", "namespace": "ns", "annotations": annotations}, "spec": spec}


@pytest.mark.parametrize(
    ("the_pub", "gate_off", "gate_on"),
    [
        (a_pub(), {"DELETE", "UPDATE", "EVICT", "RESIZE"}, {"DELETE", "UPDATE", "EVICT"}),
        (a_pub(["UPDATE"]), {"UPDATE", "RESIZE"}, {"UPDATE"}),
        (a_pub(["RESIZE"]), {"RESIZE"}, {"RESIZE"}),
        (a_pub(["DELETE"]), {"DELETE"}, {"DELETE"}),
        (a_pub(annotation="UPDATE,RESIZE"), {"UPDATE", "RESIZE"}, {"UPDATE", "RESIZE"}),
        (a_pub(annotation="EVICT"), {"EVICT"}, {"EVICT"}),
    ],
)
def test_protect_operations_by_gate(the_pub, gate_off, gate_on):
    assert budget.protect_operations(the_pub) == gate_off
    assert budget.protect_operations(the_pub, in_place_pod_vertical_scaling=False) == gate_off
    assert budget.protect_operations(the_pub, in_place_pod_vertical_scaling=True) == gate_on


def test_needs_check_follows_the_gate_for_resize():
    ready = {
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    only_update = a_pub(["UPDATE"]) | {"status": {"desiredAvailable": 1}}
    with_resize = a_pub(["UPDATE", "RESIZE"]) | {"status": {"desiredAvailable": 1}}
    assert budget.needs_check(only_update, ready, "RESIZE")
    assert not budget.needs_check(only_update, ready, "RESIZE", in_place_pod_vertical_scaling=True)
    assert budget.needs_check(with_resize, ready, "RESIZE", in_place_pod_vertical_scaling=True)
    assert budget.needs_check(only_update, ready, "UPDATE", in_place_pod_vertical_scaling=True)
