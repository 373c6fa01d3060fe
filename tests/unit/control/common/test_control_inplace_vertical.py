"""In-place vertical scaling (InPlaceWorkloadVerticalScaling): eligibility, applying, resize body,
completion and the unready decision, against upstream's NativeVerticalUpdate rules."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.goquantity import Quantity
from kruise.control.common.inplace import engine, vertical
from kruise.control.common.inplace.spec import UpdateSpec, calculate_update_spec
from kruise.control.common.inplace.state import InPlaceUpdateState, get_state
from kruise.control.common.revision import (
    equal_to_revision_hash,
    new_cloneset_revision,
    revision_labels_for_pod,
)
from tests.kit.control_builders import NOW, build_cloneset, build_pod

STATE = "apps.kruise.io/inplace-update-state"
GRACE = "apps.kruise.io/inplace-update-grace"

BURSTABLE = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}}
GUARANTEED = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def template(main: dict[str, Any], side: dict[str, Any] | None = None) -> dict[str, Any]:
    side_container: dict[str, Any] = {"name": "side", "image": "busybox:1"}
    if side is not None:
        side_container["resources"] = side
    return {
        "metadata": {"labels": {"app": "demo"}},
        "spec": {
            "containers": [
                {"name": "main", "image": "nginx:1", "resources": copy.deepcopy(main)},
                side_container,
            ]
        },
    }


def revision_of(tmpl: dict[str, Any]) -> dict[str, Any]:
    cs = build_cloneset()
    cs["spec"]["template"] = tmpl
    return new_cloneset_revision(cs, 1, 0)


def calc(
    change: Callable[[dict[str, Any]], Any], base: dict[str, Any] | None = None, *, gate: bool = True
) -> UpdateSpec | None:
    old = template(base or BURSTABLE)
    new = copy.deepcopy(old)
    change(new)
    return calculate_update_spec(revision_of(old), revision_of(new), vertical_scaling=gate)


def main_res(t: dict[str, Any]) -> dict[str, Any]:
    return t["spec"]["containers"][0]["resources"]


# --- eligibility -----------------------------------------------------------------------------

ELIGIBLE = [
    ("cpu limit", lambda t: main_res(t)["limits"].update(cpu="400m"), {"main": {"limits": {"cpu": "400m"}}}),
    (
        "memory request",
        lambda t: main_res(t)["requests"].update(memory="1Gi"),
        {"main": {"requests": {"memory": "1Gi"}}},
    ),
    (
        "all four values",
        lambda t: main_res(t).update(
            requests={"cpu": "300m", "memory": "300Mi"}, limits={"cpu": "600m", "memory": "600Mi"}
        ),
        {
            "main": {
                "requests": {"cpu": "300m", "memory": "300Mi"},
                "limits": {"cpu": "600m", "memory": "600Mi"},
            }
        },
    ),
    (
        "canonical decimal",
        lambda t: main_res(t)["limits"].update(cpu="0.5"),
        {"main": {"limits": {"cpu": "500m"}}},
    ),
    (
        "canonical binary",
        lambda t: main_res(t)["limits"].update(memory="2048Mi"),
        {"main": {"limits": {"memory": "2Gi"}}},
    ),
]


@pytest.mark.parametrize(("label", "change", "resources"), ELIGIBLE, ids=[c[0] for c in ELIGIBLE])
def test_resource_only_change_is_in_place_with_the_gate(label: str, change: Any, resources: Any) -> None:
    spec = calc(change)
    assert spec is not None, label
    assert spec.container_resources == resources
    assert spec.container_images == {} and spec.vertical_update_only()
    assert calc(change, gate=False) is None


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(t: dict[str, Any]) -> None:
        node = t
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


MAIN = ["spec", "containers", 0, "resources"]
NOT_ELIGIBLE = [
    ("limit key added", _set([*MAIN, "limits", "ephemeral-storage"], "1Gi"), BURSTABLE),
    ("cpu limit added", _set([*MAIN, "limits", "cpu"], "1"), {"requests": {"cpu": "1"}, "limits": {}}),
    ("limit key removed", lambda t: main_res(t)["limits"].pop("cpu"), BURSTABLE),
    ("limits map removed", lambda t: main_res(t).pop("limits"), BURSTABLE),
    (
        "resources added to a container without",
        _set(["spec", "containers", 1, "resources"], BURSTABLE),
        BURSTABLE,
    ),
    (
        "extended resource replaced",
        _set([*MAIN, "limits", "nvidia.com/gpu"], "2"),
        {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
    ),
    (
        "ephemeral storage replaced",
        _set([*MAIN, "requests", "ephemeral-storage"], "2Gi"),
        {"requests": {"ephemeral-storage": "1Gi"}},
    ),
    ("not a quantity", _set([*MAIN, "limits", "cpu"], "lots"), BURSTABLE),
    (
        "resources plus env",
        lambda t: t["spec"]["containers"][0].update(env=[{"name": "A", "value": "1"}]),
        BURSTABLE,
    ),
    (
        "claims changed",
        _set([*MAIN, "claims"], [{"name": "gpu2"}]),
        {**BURSTABLE, "claims": [{"name": "gpu"}]},
    ),
]


@pytest.mark.parametrize(("label", "change", "base"), NOT_ELIGIBLE, ids=[c[0] for c in NOT_ELIGIBLE])
def test_changes_that_must_recreate(label: str, change: Any, base: dict[str, Any]) -> None:
    assert calc(change, base) is None, label


def test_qos_class_change_recreates() -> None:
    """The class is the pod's: a change that moves it (with every container set) recreates."""
    both_guaranteed = template(GUARANTEED, side=GUARANTEED)
    to_burstable = copy.deepcopy(both_guaranteed)
    main_res(to_burstable)["requests"]["cpu"] = "500m"
    assert (
        calculate_update_spec(revision_of(both_guaranteed), revision_of(to_burstable), vertical_scaling=True)
        is None
    )
    back = calculate_update_spec(
        revision_of(to_burstable), revision_of(both_guaranteed), vertical_scaling=True
    )
    assert back is None


def test_container_class_change_inside_a_burstable_pod_is_in_place() -> None:
    """A best-effort sidecar keeps the pod Burstable, so main may leave Guaranteed-like values."""
    spec = calc(_set([*MAIN, "requests", "cpu"], "500m"), GUARANTEED)
    assert spec is not None and spec.container_resources == {"main": {"requests": {"cpu": "500m"}}}


def test_init_container_resources_recreate() -> None:
    old = template(BURSTABLE)
    old["spec"]["initContainers"] = [{"name": "init", "image": "x", "resources": copy.deepcopy(BURSTABLE)}]
    new = copy.deepcopy(old)
    new["spec"]["initContainers"][0]["resources"]["limits"]["cpu"] = "1"
    assert calculate_update_spec(revision_of(old), revision_of(new), vertical_scaling=True) is None


def test_guaranteed_stays_guaranteed_when_request_and_limit_move_together() -> None:
    def change(t: dict[str, Any]) -> None:
        main_res(t)["requests"]["cpu"] = "2"
        main_res(t)["limits"]["cpu"] = "2"

    spec = calc(change, GUARANTEED)
    assert spec is not None
    assert spec.container_resources == {"main": {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}}}


def test_image_and_resources_together() -> None:
    def change(t: dict[str, Any]) -> None:
        t["spec"]["containers"][0]["image"] = "nginx:2"
        t["spec"]["containers"][1]["image"] = "busybox:2"
        main_res(t)["limits"]["memory"] = "512Mi"

    spec = calc(change)
    assert spec is not None
    assert spec.container_images == {"main": "nginx:2", "side": "busybox:2"}
    assert spec.container_resources == {"main": {"limits": {"memory": "512Mi"}}}
    assert not spec.vertical_update_only()


def test_metadata_and_resources_together() -> None:
    def change(t: dict[str, Any]) -> None:
        t["metadata"]["labels"]["v"] = "2"
        main_res(t)["requests"]["cpu"] = "150m"

    spec = calc(change)
    assert spec is not None
    assert spec.metadata_patch == {"metadata": {"labels": {"v": "2"}}}
    assert spec.container_resources == {"main": {"requests": {"cpu": "150m"}}}


def test_resources_of_two_containers_keyed_by_old_container_name() -> None:
    def change(t: dict[str, Any]) -> None:
        main_res(t)["limits"]["cpu"] = "300m"
        t["spec"]["containers"][1]["resources"]["requests"]["memory"] = "64Mi"

    old = template(BURSTABLE, side={"requests": {"memory": "32Mi"}})
    new = copy.deepcopy(old)
    change(new)
    spec = calculate_update_spec(revision_of(old), revision_of(new), vertical_scaling=True)
    assert spec is not None
    assert spec.container_resources == {
        "main": {"limits": {"cpu": "300m"}},
        "side": {"requests": {"memory": "64Mi"}},
    }


def test_gate_off_keeps_image_only_behaviour() -> None:
    spec = calc(lambda t: t["spec"]["containers"][0].update(image="nginx:2"), gate=False)
    assert spec is not None and spec.container_resources == {}
    assert "containerResources" not in spec.to_json()


# --- record_resource_change, directly (upstream's TestValidateResourcePatch) ------------------

OLD_CONTAINERS = [{"name": "test-container"}, {"name": "test-container2"}]


@pytest.mark.parametrize(
    ("op", "error"),
    [
        (
            {"op": "replace", "path": "/spec/containers/2/resources/limits/cpu", "value": "200m"},
            "invalid container",
        ),
        (
            {"op": "replace", "path": "/spec/containers/x/resources/limits/cpu", "value": "200m"},
            "invalid container",
        ),
        ({"op": "replace", "path": "/spec/containers/0/resources/limits/gpu", "value": "1"}, "disallowed"),
        (
            {"op": "replace", "path": "/spec/containers/0/resources/limits/cpu", "value": "nope"},
            "parse quantity",
        ),
        ({"op": "add", "path": "/spec/containers/0/resources/limits/cpu", "value": "10m"}, "add or remove"),
        ({"op": "remove", "path": "/spec/containers/0/resources/limits/cpu"}, "add or remove"),
        (
            {"op": "replace", "path": "/spec/containers/0/resources/limits", "value": {}},
            "invalid resource path",
        ),
        ({"op": "replace", "path": "/spec/containers/0/resources/limits/cpu", "value": None}, "value is nil"),
        (
            {"op": "replace", "path": "/spec/containers/0/resources/claims/cpu", "value": "1"},
            "invalid resource path",
        ),
    ],
)
def test_record_resource_change_refusals(op: dict[str, Any], error: str) -> None:
    into: dict[str, Any] = {}
    with pytest.raises(vertical.NotResizable, match=error):
        vertical.record_resource_change(op, OLD_CONTAINERS, into)
    assert into == {}


def test_record_resource_change_accumulates() -> None:
    into: dict[str, Any] = {}
    for path, value in [("limits/cpu", "200m"), ("requests/memory", "1Gi"), ("limits/memory", 1073741824)]:
        op = {"op": "replace", "path": f"/spec/containers/0/resources/{path}", "value": value}
        vertical.record_resource_change(op, OLD_CONTAINERS, into)
    assert into == {
        "test-container": {"limits": {"cpu": "200m", "memory": "1073741824"}, "requests": {"memory": "1Gi"}}
    }


# --- UpdateSpec / state JSON -----------------------------------------------------------------


def test_update_spec_json_carries_container_resources() -> None:
    spec = UpdateSpec(
        revision="r",
        container_images={"main": "nginx:2"},
        container_resources={"main": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}},
        grace_seconds=5,
    )
    assert spec.to_json() == (
        '{"containerImages":{"main":"nginx:2"},"containerResources":{"main":{"limits":{"cpu":"2"},'
        '"requests":{"cpu":"1"}}},"graceSeconds":5,"revision":"r"}'
    )
    assert UpdateSpec.from_json(spec.to_json()) == spec


def test_vertical_update_only() -> None:
    res = {"main": {"limits": {"cpu": "1"}}}
    assert UpdateSpec(revision="r", container_resources=res).vertical_update_only()
    assert not UpdateSpec(revision="r").vertical_update_only()
    assert not UpdateSpec(
        revision="r", container_resources=res, container_images={"main": "x"}
    ).vertical_update_only()
    env = UpdateSpec(revision="r", container_resources=res, update_env_from_metadata=True)
    assert not env.vertical_update_only()


def test_state_json_resources_fields() -> None:
    state = InPlaceUpdateState(
        revision="r",
        update_timestamp=NOW,
        update_resources=True,
        next_container_resources={"side": {"limits": {"memory": "1Gi"}}},
    )
    body = json.loads(state.to_json())
    assert body["updateResources"] is True
    assert body["nextContainerResources"] == {"side": {"limits": {"memory": "1Gi"}}}
    assert InPlaceUpdateState.from_json(state.to_json()) == state


# --- applying, resize body -------------------------------------------------------------------


def pod_with(resources: dict[str, Any], side: dict[str, Any] | None = None) -> dict[str, Any]:
    pod = build_pod(revision="cs-old")
    pod["spec"]["containers"] = [
        {"name": "main", "image": "nginx:1", "resources": copy.deepcopy(resources)},
        {"name": "side", "image": "busybox:1", **({"resources": copy.deepcopy(side)} if side else {})},
    ]
    pod["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    pod["status"]["conditions"] += [
        {"type": "ContainersReady", "status": "True"},
        {"type": "InPlaceUpdateReady", "status": "True"},
    ]
    pod["status"]["containerStatuses"] = [
        {
            "name": c["name"],
            "image": c["image"],
            "imageID": f"{c['name']}-old",
            "ready": True,
            "restartCount": 0,
            "resources": copy.deepcopy(c.get("resources") or {}),
        }
        for c in pod["spec"]["containers"]
    ]
    return pod


def test_apply_resources_sets_only_cpu_and_memory() -> None:
    pod = pod_with(BURSTABLE)
    vertical.apply_resources(
        pod,
        {
            "main": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}, "requests": {"memory": "1Gi"}},
            "side": {"requests": {"cpu": "10m"}},
            "ghost": {"limits": {"cpu": "1"}},
        },
    )
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "100m", "memory": "1Gi"},
        "limits": {"cpu": "1", "memory": "256Mi"},
    }
    assert pod["spec"]["containers"][1]["resources"] == {"requests": {"cpu": "10m"}}


RESIZE_POD = {
    "spec": {
        "containers": [
            {
                "name": "test-container",
                "resources": {"limits": {"cpu": "100m"}, "requests": {"memory": "512Mi"}},
            },
            {
                "name": "test-container2",
                "resources": {"limits": {"cpu": "100m"}, "requests": {"memory": "512Mi"}},
            },
        ]
    }
}


@pytest.mark.parametrize(
    ("expected", "body"),
    [
        (
            {
                "test-container2": {"limits": {"cpu": "300m"}, "requests": {"memory": "2Gi"}},
                "test-container": {"limits": {"cpu": "200m"}, "requests": {"memory": "1Gi"}},
            },
            {
                "spec": {
                    "containers": [
                        {
                            "name": "test-container",
                            "resources": {"limits": {"cpu": "200m"}, "requests": {"memory": "1Gi"}},
                        },
                        {
                            "name": "test-container2",
                            "resources": {"limits": {"cpu": "300m"}, "requests": {"memory": "2Gi"}},
                        },
                    ]
                }
            },
        ),
        (
            {"test-container": {"limits": {"cpu": "200m"}}},
            {"spec": {"containers": [{"name": "test-container", "resources": {"limits": {"cpu": "200m"}}}]}},
        ),
        (
            {"test-container": {"requests": {"memory": "1Gi"}}},
            {
                "spec": {
                    "containers": [{"name": "test-container", "resources": {"requests": {"memory": "1Gi"}}}]
                }
            },
        ),
        ({}, None),
        ({"test-container": {"limits": {"nvidia.com/gpu": "1"}}}, None),
        ({"test-container": {"limits": {"cpu": "100m"}, "requests": {"memory": "512Mi"}}}, None),
        ({"test-container": {"limits": {"cpu": "0.1"}, "requests": {"memory": "524288Ki"}}}, None),
        (
            {"test-container": {"limits": {"cpu": "100m", "memory": "1Gi"}}},
            {
                "spec": {
                    "containers": [{"name": "test-container", "resources": {"limits": {"memory": "1Gi"}}}]
                }
            },
        ),
        ({"ghost": {"limits": {"cpu": "1"}}}, None),
    ],
    ids=[
        "both",
        "limit",
        "request",
        "none",
        "not-resizable",
        "same",
        "same-in-value",
        "only-changed-key",
        "ghost",
    ],
)
def test_resize_body(expected: dict[str, Any], body: dict[str, Any] | None) -> None:
    assert vertical.resize_body(RESIZE_POD, expected) == body


# --- completion ------------------------------------------------------------------------------

C_FULL = {"limits": {"cpu": "100m", "memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}}


@pytest.mark.parametrize(
    ("spec_res", "status_res", "done"),
    [
        (C_FULL, C_FULL, True),
        (
            {"limits": {"cpu": "100m"}, "requests": {"cpu": "50m"}},
            {"limits": {"cpu": "200m"}, "requests": {"cpu": "50m"}},
            False,
        ),
        ({"limits": {"memory": "100Mi"}}, {"limits": {"memory": "200Mi"}}, False),
        ({"requests": {"memory": "100Mi"}}, {"requests": {"memory": "50Mi"}}, False),
        ({}, {}, True),
        ({}, {"limits": {"cpu": "200m"}, "requests": {"cpu": "50m"}}, False),
        ({"limits": {"cpu": "200m"}, "requests": {"cpu": "50m"}}, None, False),
        ({"limits": {"cpu": "200m"}, "requests": {"cpu": "50m"}}, {}, False),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, {"limits": {"cpu": "1000m", "memory": "1024Mi"}}, True),
        ({"limits": {"cpu": "1"}}, {"limits": {"cpu": "1", "memory": "1Gi"}}, False),
        ({"limits": {}}, {"requests": {}}, True),
    ],
    ids=[
        "ok",
        "cpu-limit",
        "mem-limit",
        "mem-request",
        "both-empty",
        "spec-empty",
        "status-nil",
        "status-empty",
        "equal-in-value",
        "extra-key-in-status",
        "empty-maps-equal-missing",
    ],
)
def test_container_resized(spec_res: dict[str, Any], status_res: dict[str, Any] | None, done: bool) -> None:
    status: dict[str, Any] = {"name": "c"}
    if status_res is not None:
        status["resources"] = status_res
    assert vertical.container_resized({"name": "c", "resources": spec_res}, status) is done


def test_container_resized_needs_both_sides() -> None:
    assert not vertical.container_resized(None, {"name": "c", "resources": {}})
    assert not vertical.container_resized({"name": "c"}, None)


def test_resize_problem_checks_every_container() -> None:
    pod = pod_with(BURSTABLE, side={"requests": {"cpu": "10m"}})
    assert vertical.resize_problem(pod) is None
    pod["status"]["containerStatuses"].pop()
    assert vertical.resize_problem(pod) == "some container status is not reported"
    pod = pod_with(BURSTABLE, side={"requests": {"cpu": "10m"}})
    pod["spec"]["containers"][1]["resources"]["requests"]["cpu"] = "20m"
    assert vertical.resize_problem(pod) == "container side resources not changed"
    del pod["status"]["containerStatuses"][1]["resources"]
    assert vertical.resize_problem(pod) == "container side resources not changed"


quantities = st.one_of(
    st.integers(min_value=1, max_value=10_000).map(lambda n: f"{n}m"),
    st.integers(min_value=1, max_value=4096).map(lambda n: f"{n}Mi"),
    st.integers(min_value=1, max_value=64).map(str),
)
resource_lists = st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities)


@given(resource_lists, resource_lists)
def test_container_resized_is_value_equality(limits: dict[str, str], requests: dict[str, str]) -> None:
    spec_res = {"limits": limits, "requests": requests}
    canonical = {k: {n: str(Quantity.parse(v)) for n, v in d.items()} for k, d in spec_res.items()}
    container = {"name": "c", "resources": spec_res}
    assert vertical.container_resized(container, {"name": "c", "resources": canonical})
    if limits:
        name = sorted(limits)[0]
        bumped = copy.deepcopy(canonical)
        bumped["limits"][name] = str(Quantity.parse(limits[name]).add(Quantity.parse("1m")))
        assert not vertical.container_resized(container, {"name": "c", "resources": bumped})


@given(resource_lists, resource_lists, resource_lists)
def test_resize_body_then_apply_reaches_expected(
    current: dict[str, str], new_limits: dict[str, str], new_requests: dict[str, str]
) -> None:
    """Applying the resize body moves the pod to the expected values; a second body is None."""
    pod = {
        "spec": {
            "containers": [{"name": "c", "resources": {"limits": dict(current), "requests": dict(current)}}]
        }
    }
    expected = {"c": {"limits": new_limits, "requests": new_requests}}
    body = vertical.resize_body(pod, expected)
    if body is not None:
        (entry,) = body["spec"]["containers"]
        vertical.apply_resources(pod, {"c": entry["resources"]})
    after = pod["spec"]["containers"][0]["resources"]
    for kind, values in expected["c"].items():
        for name, value in values.items():
            assert Quantity.parse(after[kind][name]).cmp(Quantity.parse(value)) == 0
    assert vertical.resize_body(pod, expected) is None


# --- unready decision ------------------------------------------------------------------------


def resources_spec(**resources: dict[str, Any]) -> UpdateSpec:
    return UpdateSpec(revision="cs-new", container_resources=resources)


@pytest.mark.parametrize(
    ("policies", "changed", "unready"),
    [
        ([], {"limits": {"cpu": "1"}}, False),
        ([{"resourceName": "cpu", "restartPolicy": "NotRequired"}], {"limits": {"cpu": "1"}}, False),
        ([{"resourceName": "memory", "restartPolicy": "RestartContainer"}], {"limits": {"cpu": "1"}}, False),
        (
            [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
            {"requests": {"memory": "1Gi"}},
            True,
        ),
        ([{"resourceName": "cpu", "restartPolicy": "RestartContainer"}], {"requests": {"cpu": "1"}}, True),
    ],
)
def test_needs_unready_for_resources_only(
    policies: list[Any], changed: dict[str, Any], unready: bool
) -> None:
    pod = pod_with(BURSTABLE)
    pod["spec"]["containers"][0]["resizePolicy"] = policies
    spec = resources_spec(main=changed)
    assert engine.needs_unready(pod, spec, vertical_scaling=True) is unready
    assert engine.needs_unready(pod, spec, vertical_scaling=False) is True


def test_needs_unready_follows_the_readiness_gate_otherwise() -> None:
    pod = pod_with(BURSTABLE)
    with_image = UpdateSpec(
        revision="cs-new",
        container_images={"main": "nginx:2"},
        container_resources={"main": {"limits": {"cpu": "1"}}},
    )
    assert engine.needs_unready(pod, with_image, vertical_scaling=True) is True
    pod["spec"]["readinessGates"] = []
    assert engine.needs_unready(pod, with_image, vertical_scaling=True) is False
    pod["spec"]["containers"][0]["resizePolicy"] = [
        {"resourceName": "cpu", "restartPolicy": "RestartContainer"}
    ]
    assert (
        engine.needs_unready(pod, resources_spec(main={"limits": {"cpu": "1"}}), vertical_scaling=True)
        is False
    )


# --- engine flow -----------------------------------------------------------------------------


def write_revision(pod: dict[str, Any], revision: str) -> None:
    pod["metadata"]["labels"].update(revision_labels_for_pod(revision))


def report_resources(pod: dict[str, Any]) -> None:
    """What kubelet does once the resize is applied: status mirrors the spec."""
    spec = {c["name"]: c.get("resources") or {} for c in pod["spec"]["containers"]}
    for status in pod["status"]["containerStatuses"]:
        status["resources"] = copy.deepcopy(spec[status["name"]])


def test_resources_only_flow_writes_spec_and_waits_for_status() -> None:
    spec = resources_spec(main={"limits": {"cpu": "400m"}})
    started = engine.begin_update(pod_with(BURSTABLE), spec, NOW, write_revision, vertical_scaling=True)
    assert started.resize is None
    pod = started.pod
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "400m", "memory": "256Mi"}
    state = get_state(pod)
    assert state is not None and state.update_resources and not state.update_images
    assert state.last_container_statuses is None
    assert (
        engine.update_completed_problem(pod, vertical_scaling=True) == "container main resources not changed"
    )
    # without the gate the resources are not waited for (upstream checks only with the gate on)
    assert engine.update_completed_problem(pod) is None
    assert engine.refresh(pod, NOW, equal_to_revision_hash, vertical_scaling=True) == engine.RefreshResult()
    report_resources(pod)
    assert engine.update_completed_problem(pod, vertical_scaling=True) is None
    pod["status"]["conditions"][-1] = {
        "type": "InPlaceUpdateReady",
        "status": "False",
        "reason": "StartInPlaceUpdate",
    }
    result = engine.refresh(pod, NOW, equal_to_revision_hash, vertical_scaling=True)
    assert result.status_pod is not None


def test_resize_subresource_mode_returns_the_body_and_leaves_spec() -> None:
    spec = UpdateSpec(
        revision="cs-new",
        container_images={"main": "nginx:2"},
        container_resources={"main": {"limits": {"cpu": "400m"}, "requests": {"cpu": "100m"}}},
    )
    started = engine.begin_update(
        pod_with(BURSTABLE), spec, NOW, write_revision, vertical_scaling=True, resize_subresource=True
    )
    assert started.pod["spec"]["containers"][0]["resources"] == BURSTABLE
    assert started.pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert started.resize == {
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "400m"}}}]}
    }
    state = get_state(started.pod)
    assert state is not None and state.update_resources and state.update_images
    assert (
        engine.start_update(
            pod_with(BURSTABLE), spec, NOW, write_revision, vertical_scaling=True, resize_subresource=True
        )
        == started.pod
    )


def test_gate_off_drops_resources_when_applying() -> None:
    spec = resources_spec(main={"limits": {"cpu": "400m"}})
    pod = engine.start_update(pod_with(BURSTABLE), spec, NOW, write_revision)
    assert pod["spec"]["containers"][0]["resources"] == BURSTABLE
    state = get_state(pod)
    assert state is not None and not state.has_next_batch()


def barrier(priority: int) -> list[dict[str, Any]]:
    ref = {"name": "p-barrier", "key": f"p_{priority}"}
    return [{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": ref}}]


@pytest.mark.parametrize("resize_subresource", [False, True])
def test_resources_roll_in_launch_priority_batches(resize_subresource: bool) -> None:
    pod = pod_with(BURSTABLE, side={"requests": {"cpu": "10m"}})
    pod["spec"]["containers"][0]["env"] = barrier(0)
    pod["spec"]["containers"][1]["env"] = barrier(10)
    spec = resources_spec(main={"limits": {"cpu": "400m"}}, side={"requests": {"cpu": "20m"}})
    modes = {"vertical_scaling": True, "resize_subresource": resize_subresource}
    started = engine.begin_update(pod, spec, NOW, write_revision, **modes)
    first = started.pod
    state = get_state(first)
    assert state is not None
    assert state.next_container_resources == {"main": {"limits": {"cpu": "400m"}}}
    assert state.pre_check_before_next == ["side"]
    body = json.loads(first["metadata"]["annotations"][STATE])
    assert body["nextContainerResources"] == {"main": {"limits": {"cpu": "400m"}}}
    assert body["updateResources"] is True
    side_body = {"spec": {"containers": [{"name": "side", "resources": {"requests": {"cpu": "20m"}}}]}}
    if resize_subresource:
        assert started.resize == side_body
        vertical.apply_resources(
            first, {"side": side_body["spec"]["containers"][0]["resources"]}
        )  # the apiserver
    else:
        assert started.resize is None
    assert first["spec"]["containers"][1]["resources"] == {"requests": {"cpu": "20m"}}
    assert first["spec"]["containers"][0]["resources"] == BURSTABLE
    assert engine.update_completed_problem(first, vertical_scaling=True) == (
        "existing containers to in-place update in next batches"
    )
    assert engine.refresh(first, NOW, equal_to_revision_hash, **modes).pod is None  # side not resized yet
    report_resources(first)
    second = engine.refresh(first, NOW + timedelta(seconds=1), equal_to_revision_hash, **modes)
    assert second.pod is not None
    if resize_subresource:
        assert second.resize == {
            "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "400m"}}}]}
        }
        assert second.pod["spec"]["containers"][0]["resources"] == BURSTABLE
    else:
        assert second.resize is None
        assert second.pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "400m"
    final = get_state(second.pod)
    assert final is not None and not final.has_next_batch() and len(final.container_batches_record) == 2


def test_grace_period_carries_resources() -> None:
    spec = resources_spec(main={"limits": {"cpu": "400m"}})
    spec.grace_seconds = 30
    started = engine.begin_update(pod_with(BURSTABLE), spec, NOW, write_revision, vertical_scaling=True)
    pod = started.pod
    assert started.resize is None and pod["spec"]["containers"][0]["resources"] == BURSTABLE
    assert UpdateSpec.from_json(pod["metadata"]["annotations"][GRACE]) == spec
    done = engine.refresh(pod, NOW + timedelta(seconds=31), equal_to_revision_hash, vertical_scaling=True)
    assert done.pod is not None and GRACE not in done.pod["metadata"]["annotations"]
    assert done.pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "400m"
    resized = engine.refresh(
        pod,
        NOW + timedelta(seconds=31),
        equal_to_revision_hash,
        vertical_scaling=True,
        resize_subresource=True,
    )
    assert resized.pod is not None and GRACE not in resized.pod["metadata"]["annotations"]
    assert resized.resize == {
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "400m"}}}]}
    }


def test_calculated_spec_applies_end_to_end() -> None:
    old = template(BURSTABLE)
    new = copy.deepcopy(old)
    main_res(new)["limits"]["memory"] = "1Gi"
    new["spec"]["containers"][0]["image"] = "nginx:2"
    spec = calculate_update_spec(revision_of(old), revision_of(new), vertical_scaling=True)
    assert spec is not None
    pod = engine.start_update(pod_with(BURSTABLE), spec, NOW, write_revision, vertical_scaling=True)
    assert pod["spec"]["containers"][0] == {
        "name": "main",
        "image": "nginx:2",
        "resources": {"requests": BURSTABLE["requests"], "limits": {"cpu": "200m", "memory": "1Gi"}},
    }
    assert (
        engine.update_completed_problem(pod, vertical_scaling=True) == "container main resources not changed"
    )
    report_resources(pod)
    assert engine.update_completed_problem(pod, vertical_scaling=True) == "container main imageID not changed"
    pod["status"]["containerStatuses"][0].update(image="nginx:2", imageID="new")
    assert engine.update_completed_problem(pod, vertical_scaling=True) is None
