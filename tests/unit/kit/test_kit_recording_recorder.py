"""`tests.kit.RecordingEventRecorder`: events in order, validated like the real recorder."""

from __future__ import annotations

import pytest

from tests.kit import RecordingEventRecorder

CLONESET = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "prod", "uid": "u1"}}  # fmt: skip


async def test_records_events_in_order_with_the_object_reference():
    recorder = RecordingEventRecorder("cloneset-controller")
    recorder.event(CLONESET, "Normal", "SuccessfulCreate", "succeed to create pod web-abc")
    recorder.eventf(CLONESET, "Warning", "FailedCreate", "failed to create pod: %s", "quota")
    await recorder.flush()
    await recorder.stop()
    assert recorder.reasons() == ["SuccessfulCreate", "FailedCreate"]
    first, second = recorder.events
    assert first.key == "prod/web" and first.type == "Normal"
    assert first.involved == {"kind": "CloneSet", "namespace": "prod", "name": "web", "uid": "u1",
                              "apiVersion": "apps.kruise.io/v1alpha1"}  # fmt: skip
    assert second.message == "failed to create pod: quota"


def test_cluster_scoped_objects_have_bare_keys():
    recorder = RecordingEventRecorder()
    recorder.event({"kind": "Node", "metadata": {"name": "n1"}}, "Normal", "Seen", "")
    assert recorder.events[0].key == "n1"


@pytest.mark.parametrize(
    ("type_", "reason", "error"),
    [("Info", "X", r'^type: Unsupported value: "Info"'), ("Normal", "", r"^reason: Required value")],
)
def test_bad_events_are_refused_as_by_the_real_recorder(type_, reason, error):
    with pytest.raises(ValueError, match=error):
        RecordingEventRecorder().event(CLONESET, type_, reason, "m")
