"""PodWriter: changed conditions and a lifecycle move in one pods/status patch; a markPodNotReady key and
its state move in one pods/status update."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from functools import partial

import pytest

from kruise.kube.client import PatchType
from kruise.kube.errors import NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.projection import Projection
from kruise.kube.resources import PODS
from kruise.kube.store import mutable_copy
from kruise.manager.writers.pods import PodWriter
from tests.kit.client import RecordingClient
from tests.kit.pods import pod

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
STATE = "lifecycle.apps.kruise.io/state"
STAMP = "lifecycle.apps.kruise.io/timestamp"
unready_pod = partial(pod, typed=True, containers=[{"name": "main", "image": "nginx"}], ready=False)


def in_state(state: str) -> dict[str, str]:
    return {"app": "x", STATE: state}


def with_ready_gate(p: dict) -> dict:
    conditions = [*p["status"]["conditions"], {"type": "InPlaceUpdateReady", "status": "True"}]
    return {**p, "status": {"conditions": conditions}}


@pytest.fixture
def client() -> RecordingClient:
    c = RecordingClient()
    c.put(PODS, unready_pod(labels=in_state("PreparingNormal")))
    return c


async def test_conditions_and_state_travel_in_one_status_patch(client):
    writer = PodWriter(client, ResourceVersionExpectations())
    written = await writer.patch_conditions(
        unready_pod(labels=in_state("PreparingNormal")), with_ready_gate, state="Normal", now=NOW
    )

    (call,) = client.writes
    assert (call.verb, call.subresource, call.patch_type) == ("patch", "status", PatchType.STRATEGIC)
    assert call.body == {
        "status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "True"}]},
        "metadata": {"labels": {STATE: "Normal"}, "annotations": {STAMP: "2024-05-01T12:00:00Z"}},
    }
    assert written is not None and written["metadata"]["labels"] == {"app": "x", STATE: "Normal"}
    assert {"type": "InPlaceUpdateReady", "status": "True"} in written["status"]["conditions"]


async def test_a_state_already_reached_sends_conditions_alone(client):
    writer = PodWriter(client, ResourceVersionExpectations())
    await writer.patch_conditions(
        unready_pod(labels=in_state("PreparingNormal")), with_ready_gate, state="PreparingNormal", now=NOW
    )
    (call,) = client.writes
    assert "metadata" not in call.body


async def test_nothing_changed_writes_nothing(client):
    writer = PodWriter(client, ResourceVersionExpectations())
    assert (
        await writer.patch_conditions(
            unready_pod(labels=in_state("Normal")), lambda _: None, state="Normal", now=NOW
        )
        is None
    )
    assert client.writes == []


async def test_a_state_move_without_a_timestamp_is_refused(client):
    writer = PodWriter(client, ResourceVersionExpectations())
    with pytest.raises(ValueError, match="needs `now`"):
        await writer.patch_conditions(
            unready_pod(labels=in_state("PreparingNormal")), with_ready_gate, state="Normal"
        )


async def test_a_not_ready_mark_and_its_state_move_are_one_status_update(client):
    gated = unready_pod(labels=in_state("Normal"))
    gated["spec"]["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    gated["status"]["conditions"].append({"type": "KruisePodReady", "status": "True"})
    client.put(PODS, gated)
    writer = PodWriter(client, ResourceVersionExpectations())

    written = await writer.set_lifecycle_state(
        client.object(PODS, "p", "default"), "PreparingDelete", True, NOW
    )

    (call,) = client.writes
    assert (call.verb, call.subresource) == ("update", "status")
    for obj in (written, client.object(PODS, "p", "default")):
        assert obj is not None and obj["metadata"]["labels"][STATE] == "PreparingDelete"
        assert obj["metadata"]["annotations"] == {STAMP: "2024-05-01T12:00:00Z"}
        (ready,) = [c for c in obj["status"]["conditions"] if c["type"] == "KruisePodReady"]
        assert ready["status"] == "False" and "preDelete" in ready["message"]


async def test_a_pod_without_the_gate_only_moves_its_state(client):
    writer = PodWriter(client, ResourceVersionExpectations())
    # no KruisePodReady gate: nothing to mark, the state moves by a metadata patch
    await writer.set_lifecycle_state(client.object(PODS, "p", "default"), "PreparingDelete", True, NOW)
    (call,) = client.writes
    assert (call.verb, call.subresource) == ("patch", None)
    assert call.body["metadata"]["labels"] == {STATE: "PreparingDelete"}


async def test_a_projected_pod_is_read_whole_before_it_is_put(client):
    """The pod cache keeps only what controllers read: a PUT built on it would erase the rest, so the
    writer reads the full pod first and applies the change to that."""
    full = unready_pod(labels=in_state("Normal"))
    full["spec"]["schedulerName"] = "custom"
    client.put(PODS, full)
    cached = Projection(["apiVersion", "kind", "metadata", "spec.containers"], guard=False).apply(full)
    writer = PodWriter(client, ResourceVersionExpectations())

    def change(current):
        new = mutable_copy(current)
        new["spec"]["containers"][0]["image"] = "nginx:2"
        return new

    written = await writer.write_with(copy.deepcopy(dict(cached)), change)
    (call,) = client.writes
    assert call.verb == "update"
    assert call.body["spec"]["schedulerName"] == "custom"
    assert written["spec"]["containers"][0]["image"] == "nginx:2"


async def test_a_status_patch_is_strategic_unconditional_and_expected(client):
    """`patch_status` is the one pods/status patch of every controller (pod readiness, NodePodProbe,
    SidecarTerminator): merged by condition type, no resourceVersion, its answer expected."""
    expectations = ResourceVersionExpectations()
    writer = PodWriter(client, expectations)
    cached = client.object(PODS, "p", "default")
    condition = {"type": "KruisePodReady", "status": "True"}

    written = await writer.patch_status(cached, {"status": {"conditions": [condition]}})

    (call,) = client.writes
    assert (call.verb, call.subresource, call.patch_type) == ("patch", "status", PatchType.STRATEGIC)
    assert call.body == {"status": {"conditions": [condition]}}
    assert "resourceVersion" not in call.body.get("metadata", {})
    assert condition in written["status"]["conditions"]
    assert len(written["status"]["conditions"]) == len(cached["status"]["conditions"]) + 1
    assert not expectations.is_satisfied(cached)
    assert expectations.is_satisfied(written)


async def test_a_writer_without_expectations_writes_all_the_same(client):
    writer = PodWriter(client)
    written = await writer.patch_status(client.object(PODS, "p", "default"), {"status": {"phase": "Failed"}})
    assert written["status"]["phase"] == "Failed"
    assert client.object(PODS, "p", "default")["status"]["phase"] == "Failed"


async def test_a_status_patch_of_a_pod_gone_raises_not_found(client):
    gone = unready_pod(name="other")
    with pytest.raises(NotFound):
        await PodWriter(client).patch_status(gone, {"status": {"phase": "Failed"}})
    assert client.object(PODS, "p", "default")["status"].get("phase") != "Failed"
