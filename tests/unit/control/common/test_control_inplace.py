"""In-place update engine: eligibility, the update flow, grace period, batches and completion."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

import pytest

from kruise.api.conditions import condition_of
from kruise.control.common.inplace import engine, envhash
from kruise.control.common.inplace.jsondiff import apply_merge_patch, create_patch, merge_patch
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


def template(**containers_extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "demo"}, "annotations": {"a": "1"}},
        "spec": {
            "containers": [
                {"name": "main", "image": "nginx:1", **containers_extra},
                {"name": "side", "image": "busybox:1"},
            ]
        },
    }


def revision_of(tmpl: dict[str, Any]) -> dict[str, Any]:
    cs = build_cloneset()
    cs["spec"]["template"] = tmpl
    return new_cloneset_revision(cs, 1, 0)


def mutate(change: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    old = template(
        env=[{"name": "ZONE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['zone']"}}}]
    )
    new = copy.deepcopy(old)
    change(new)
    return revision_of(old), revision_of(new)


CASES = [
    ("main image", lambda t: t["spec"]["containers"][0].update(image="nginx:2"), {"main": "nginx:2"}),
    ("both images", lambda t: [c.update(image=c["image"] + "-x") for c in t["spec"]["containers"]], None),
    ("label added", lambda t: t["metadata"]["labels"].update(v="2"), {}),
    ("annotation removed", lambda t: t["metadata"].pop("annotations"), {}),
    ("env changed", lambda t: t["spec"]["containers"][1].update(env=[{"name": "X", "value": "1"}]), False),
    ("command added", lambda t: t["spec"]["containers"][0].update(command=["sh"]), False),
    ("container added", lambda t: t["spec"]["containers"].append({"name": "c3", "image": "x"}), False),
    ("container removed", lambda t: t["spec"]["containers"].pop(), False),
    ("resources", lambda t: t["spec"]["containers"][0].update(resources={"limits": {"cpu": "1"}}), False),
    ("volume", lambda t: t["spec"].update(volumes=[{"name": "v", "emptyDir": {}}]), False),
    ("node selector", lambda t: t["spec"].update(nodeSelector={"a": "b"}), False),
    ("rename container", lambda t: t["spec"]["containers"][1].update(name="other"), False),
]


@pytest.mark.parametrize(("label", "change", "images"), CASES, ids=[c[0] for c in CASES])
def test_in_place_eligibility(label: str, change: Any, images: Any) -> None:
    old, new = mutate(change)
    spec = calculate_update_spec(old, new)
    if images is False:
        assert spec is None, label
        return
    assert spec is not None, label
    assert spec.revision == new["metadata"]["name"]
    if images is not None:
        assert spec.container_images == images
    else:
        assert spec.container_images == {"main": "nginx:1-x", "side": "busybox:1-x"}


def test_metadata_patch_and_env_from_metadata() -> None:
    old, new = mutate(lambda t: t["metadata"]["labels"].update(zone="b", v="2"))
    spec = calculate_update_spec(old, new)
    assert spec is not None and spec.update_env_from_metadata
    assert spec.container_ref_metadata == {"main": {"labels": {"zone": "b"}}}
    assert spec.metadata_patch == {"metadata": {"labels": {"v": "2"}}}
    off = calculate_update_spec(old, new, env_from_metadata=False)
    assert off is not None and not off.update_env_from_metadata
    assert off.metadata_patch == {"metadata": {"labels": {"v": "2", "zone": "b"}}}


def test_identical_revisions_give_an_empty_spec() -> None:
    rev = revision_of(template())
    spec = calculate_update_spec(rev, copy.deepcopy(rev))
    assert spec is not None and not spec.container_images and spec.metadata_patch is None
    assert calculate_update_spec(None, rev) is None


def test_json_diff_and_merge_patch() -> None:
    assert create_patch({"a": [1, 2]}, {"a": [1, 3, 4]}) == [
        {"op": "replace", "path": "/a/1", "value": 3},
        {"op": "add", "path": "/a/2", "value": 4},
    ]
    assert create_patch({"a/b": 1}, {}) == [{"op": "remove", "path": "/a~1b"}]
    patch = merge_patch({"x": {"y": 1, "z": 2}}, {"x": {"y": 1}})
    assert patch == {"x": {"z": None}}
    assert apply_merge_patch({"x": {"y": 1, "z": 2}}, patch) == {"x": {"y": 1}}


def spec_images(**images: str) -> UpdateSpec:
    return UpdateSpec(revision="cs-new", container_images=images)


def running_pod() -> dict[str, Any]:
    pod = build_pod(revision="cs-old")
    pod["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    pod["status"]["conditions"] += [
        {"type": "ContainersReady", "status": "True"},
        {"type": "InPlaceUpdateReady", "status": "True"},
    ]
    pod["status"]["containerStatuses"] = [
        {"name": "main", "image": "nginx:1", "imageID": "sha-old", "ready": True, "restartCount": 0}
    ]
    return pod


def write_revision(pod: dict[str, Any], revision: str) -> None:
    pod["metadata"]["labels"].update(revision_labels_for_pod(revision))


def test_unready_pod_sets_condition_and_ready_false() -> None:
    pod = engine.unready_pod(running_pod(), NOW)
    assert pod is not None
    cond = condition_of(pod, "InPlaceUpdateReady")
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "StartInPlaceUpdate")
    ready = condition_of(pod, "Ready")
    assert ready is not None and ready["status"] == "False" and ready["reason"] == "ReadinessGatesNotReady"
    assert engine.unready_pod(build_pod(), NOW) is None


def test_full_flow_without_grace() -> None:
    pod = engine.start_update(running_pod(), spec_images(main="nginx:2"), NOW, write_revision)
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert pod["metadata"]["labels"]["controller-revision-hash"] == "cs-new"
    state = get_state(pod)
    assert state is not None and state.revision == "cs-new" and state.update_images
    assert state.last_container_statuses == {"main": {"imageID": "sha-old"}}
    assert json.loads(pod["metadata"]["annotations"][STATE])["containerBatchesRecord"][0]["containers"] == [
        "main"
    ]
    assert engine.update_completed_problem(pod) == "container main imageID not changed"
    assert engine.refresh(pod, NOW, equal_to_revision_hash) == engine.RefreshResult()
    pod["status"]["containerStatuses"][0].update(image="nginx:2", imageID="sha-new")
    assert engine.update_completed_problem(pod) is None
    pod["status"]["conditions"][-1] = {
        "type": "InPlaceUpdateReady",
        "status": "False",
        "reason": "StartInPlaceUpdate",
    }
    result = engine.refresh(pod, NOW, equal_to_revision_hash)
    assert result.status_pod is not None
    cond = condition_of(result.status_pod, "InPlaceUpdateReady")
    assert cond is not None and cond["status"] == "True"


def test_same_image_id_counts_when_status_image_matches_spec() -> None:
    pod = engine.start_update(running_pod(), spec_images(main="nginx"), NOW, write_revision)
    pod["status"]["containerStatuses"][0]["image"] = "nginx:latest"
    assert engine.update_completed_problem(pod) is None


def test_grace_period_defers_the_spec() -> None:
    spec = spec_images(main="nginx:2")
    spec.grace_seconds = 30
    pod = engine.start_update(running_pod(), spec, NOW, write_revision)
    assert pod["spec"]["containers"][0]["image"] == "nginx:1"
    assert UpdateSpec.from_json(pod["metadata"]["annotations"][GRACE]) == spec
    assert engine.update_completed_problem(pod) == "still in grace period of in-place update"
    waiting = engine.refresh(pod, NOW + timedelta(seconds=10), equal_to_revision_hash)
    assert (waiting.pod, waiting.delay_seconds) == (None, 20)
    done = engine.refresh(pod, NOW + timedelta(seconds=31), equal_to_revision_hash)
    assert done.pod is not None and done.pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert GRACE not in done.pod["metadata"]["annotations"]


def test_grace_dropped_when_pod_moved_to_another_revision() -> None:
    spec = spec_images(main="nginx:2")
    spec.grace_seconds = 30
    pod = engine.start_update(running_pod(), spec, NOW, write_revision)
    write_revision(pod, "cs-other")
    result = engine.refresh(pod, NOW, equal_to_revision_hash)
    assert result.pod is not None and GRACE not in result.pod["metadata"]["annotations"]
    assert result.pod["spec"]["containers"][0]["image"] == "nginx:1"


def barrier(priority: int) -> list[dict[str, Any]]:
    ref = {"name": "p-barrier", "key": f"p_{priority}"}
    return [{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": ref}}]


def test_containers_update_in_launch_priority_batches() -> None:
    pod = running_pod()
    pod["spec"]["containers"] = [
        {"name": "main", "image": "nginx:1", "env": barrier(0)},
        {"name": "side", "image": "envoy:1", "env": barrier(10)},
    ]
    pod["status"]["containerStatuses"].append(
        {"name": "side", "image": "envoy:1", "imageID": "e-old", "ready": True, "restartCount": 0}
    )
    first = engine.start_update(pod, spec_images(main="nginx:2", side="envoy:2"), NOW, write_revision)
    assert [c["image"] for c in first["spec"]["containers"]] == ["nginx:1", "envoy:2"]
    state = get_state(first)
    assert state is not None and state.next_container_images == {"main": "nginx:2"}
    assert state.pre_check_before_next == ["side"]
    assert engine.update_completed_problem(first) == "existing containers to in-place update in next batches"
    first["status"]["containerStatuses"][1].update(image="envoy:2", imageID="e-new", ready=False)
    assert engine.refresh(first, NOW, equal_to_revision_hash).pod is None  # side not ready yet
    first["status"]["containerStatuses"][1]["ready"] = True
    second = engine.refresh(first, NOW, equal_to_revision_hash).pod
    assert second is not None and second["spec"]["containers"][0]["image"] == "nginx:2"
    final_state = get_state(second)
    assert final_state is not None and len(final_state.container_batches_record) == 2
    assert not final_state.has_next_batch()


def test_env_from_metadata_needs_runtime_hashes() -> None:
    container = {
        "name": "main",
        "image": "nginx:1",
        "env": [{"name": "ZONE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['zone']"}}}],
    }
    pod = running_pod()
    pod["spec"]["containers"] = [container]
    spec = UpdateSpec(revision="cs-new", container_ref_metadata={"main": {"labels": {"zone": "b"}}})
    spec.update_env_from_metadata = True
    updated = engine.start_update(pod, spec, NOW, write_revision)
    assert updated["metadata"]["labels"]["zone"] == "b"
    assert "runtime-container-meta not found" in (engine.update_completed_problem(updated) or "")
    updated["status"]["containerStatuses"][0]["containerID"] = "containerd://1"
    meta = {
        "containers": [
            {
                "name": "main",
                "containerID": "containerd://1",
                "restartCount": 1,
                "hashes": {
                    "plainHash": 1,
                    "extractedEnvFromMetadataHash": envhash.current_hash(container, lambda _: "b"),
                },
            }
        ]
    }
    updated["metadata"]["annotations"]["apps.kruise.io/runtime-containers-meta"] = json.dumps(meta)
    assert engine.update_completed_problem(updated) is None


def test_state_json_round_trip_and_go_field_names() -> None:
    state = InPlaceUpdateState(revision="r", update_timestamp=NOW, update_images=True)
    body = json.loads(state.to_json())
    assert body == {
        "revision": "r",
        "updateTimestamp": "2026-01-01T12:00:00Z",
        "lastContainerStatuses": None,
        "updateImages": True,
    }
    assert InPlaceUpdateState.from_json(state.to_json()) == state


def test_legacy_state_key_is_read() -> None:
    pod = build_pod()
    pod["metadata"]["annotations"] = {
        "inplace-update-state": json.dumps({"revision": "r", "updateTimestamp": "2026-01-01T00:00:00Z"})
    }
    state = get_state(pod)
    assert state is not None and state.revision == "r"
