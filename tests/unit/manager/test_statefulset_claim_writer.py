"""StatefulPodControl.resize_claims (upstream ``TryPatchPVC``) against a recording client: the claim
takes the template's resources and the ``apps.kruise.io/owned-by-asts`` annotation, each resize
records SuccessfulResize, a refused write FailedResize; a class that does not allow expansion (or
cannot be read) stops before any write; a conflicting claim records FailedUpdatePVC after the
claims before it were resized."""

from __future__ import annotations

import pytest

from kruise.control.statefulset.actions import ResizeClaims
from kruise.control.statefulset.claims import ClaimResize
from kruise.kube.clock import FakeClock
from kruise.kube.errors import Forbidden
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.resources import PVCS
from kruise.manager.controllers.statefulset.podcontrol import StatefulPodControl
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
STS = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "web", "namespace": NS, "uid": "sts-uid"},
}
POD = {"metadata": {"name": "web-0", "namespace": NS}}
GROWN = {"requests": {"storage": "2Gi"}}


def claim(name: str, sc: str | None = "fast") -> dict:
    spec: dict = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}, "limits": {}},
    }
    if sc is not None:
        spec["storageClassName"] = sc
    return {"metadata": {"name": name, "namespace": NS, "annotations": {"keep": "me"}}, "spec": spec}


def storage_class(name: str, expandable: bool | None) -> dict:
    body: dict = {"metadata": {"name": name}, "provisioner": "example.com/csi"}
    if expandable is not None:
        body["allowVolumeExpansion"] = expandable
    return body


def control(*claims: dict, classes: list[dict] | None = None):
    clock = FakeClock()
    client = RecordingClient(clock)
    recorder = RecordingEventRecorder()
    pvcs = FakeInformer()
    client.put(PVCS, *claims)
    client.sync(PVCS, pvcs)
    scs = FakeInformer(classes or []) if classes is not None else None
    pc = StatefulPodControl(
        client, recorder, pvcs, ScaleExpectations(clock), ResourceVersionExpectations(clock), scs
    )
    return pc, client, recorder


async def test_resize_writes_template_resources_and_owner_annotation():
    pc, client, recorder = control(claim("data-web-0"), classes=[storage_class("fast", True)])
    await pc.resize_claims(dict(STS), ResizeClaims(POD, (ClaimResize("data-web-0", "fast", GROWN),)))
    stored = client.object(PVCS, "data-web-0", NS)
    assert stored["spec"]["resources"] == GROWN  # replaced, not merged (limits gone as upstream)
    assert stored["metadata"]["annotations"] == {"keep": "me", "apps.kruise.io/owned-by-asts": "web"}
    [event] = recorder.events
    assert (event.type, event.reason, event.message) == (
        "Normal",
        "SuccessfulResize",
        "resize Claim data-web-0 Pod web-0 in StatefulSet web success",
    )


async def test_claim_without_class_skips_the_class_check():
    pc, client, recorder = control(claim("data-web-0", sc=None), classes=None)
    await pc.resize_claims(dict(STS), ResizeClaims(POD, (ClaimResize("data-web-0", None, GROWN),)))
    assert client.object(PVCS, "data-web-0", NS)["spec"]["resources"] == GROWN
    assert recorder.reasons() == ["SuccessfulResize"]


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ([storage_class("fast", False)], "storage class fast for web-0 does not support volume expansion"),
        ([storage_class("fast", None)], "storage class fast for web-0 does not support volume expansion"),
        ([], "could not get sc fast for web-0 when checking PVC spec"),
        (None, "could not get sc fast for web-0 when checking PVC spec"),
    ],
)
async def test_class_that_cannot_expand_stops_before_any_write(classes, message):
    pc, client, recorder = control(claim("data-web-0"), classes=classes)
    with pytest.raises(RuntimeError, match=message):
        await pc.resize_claims(dict(STS), ResizeClaims(POD, (ClaimResize("data-web-0", "fast", GROWN),)))
    assert client.writes == [] and recorder.events == []


async def test_refused_write_records_failed_resize():
    pc, client, recorder = control(claim("data-web-0"), classes=[storage_class("fast", True)])
    client.fail_next("update", PVCS, "data-web-0", NS, error=Forbidden)
    with pytest.raises(RuntimeError, match="could not update claim data-web-0"):
        await pc.resize_claims(dict(STS), ResizeClaims(POD, (ClaimResize("data-web-0", "fast", GROWN),)))
    [event] = recorder.events
    assert event.type == "Warning" and event.reason == "FailedResize"
    assert event.message.startswith("resize Claim data-web-0 for Pod web-0 in StatefulSet web failed error:")


async def test_conflicting_claim_fails_after_the_earlier_resizes():
    pc, client, recorder = control(claim("a-web-0"), claim("b-web-0"), classes=[storage_class("fast", True)])
    action = ResizeClaims(POD, (ClaimResize("a-web-0", "fast", GROWN),), conflict="b-web-0")
    with pytest.raises(
        RuntimeError, match="can not patch pvc b-web-0: contains diff other than spec resource"
    ):
        await pc.resize_claims(dict(STS), action)
    assert client.object(PVCS, "a-web-0", NS)["spec"]["resources"] == GROWN
    assert recorder.reasons() == ["SuccessfulResize", "FailedUpdatePVC"]
    assert recorder.events[1].message == (
        "failed to update pvc b-web-0: contains diff other than spec resource, wait pvc to be deleted"
    )
