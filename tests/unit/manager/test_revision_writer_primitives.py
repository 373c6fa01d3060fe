"""`RevisionWriter`'s primitives, used by the kinds with their own history model (DaemonSet,
UnitedDeployment, SidecarSet): store reuses an equal revision and reports a collision, renumber,
label and delete touch only what they name."""

from __future__ import annotations

from kruise.kube.resources import CONTROLLER_REVISIONS
from kruise.manager.writers.revisions import RevisionWriter
from tests.kit.client import RecordingClient

NS = "default"


def _revision(name: str, data: dict[str, object], number: int = 1) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": NS}, "data": data, "revision": number}


async def test_store_creates_then_reuses_an_equal_revision() -> None:
    client = RecordingClient()
    writer = RevisionWriter(client)
    created = await writer.store(_revision("ds-abc", {"spec": {"x": 1}}))
    assert created is not None and created["metadata"]["uid"]
    again = await writer.store(_revision("ds-abc", {"spec": {"x": 1}}))
    assert again is not None and again["metadata"]["uid"] == created["metadata"]["uid"]
    assert len(client.objects(CONTROLLER_REVISIONS)) == 1


async def test_store_reports_a_name_taken_by_other_data() -> None:
    client = RecordingClient()
    writer = RevisionWriter(client)
    await writer.store(_revision("ds-abc", {"spec": {"x": 1}}))
    assert await writer.store(_revision("ds-abc", {"spec": {"x": 2}})) is None
    stored = client.object(CONTROLLER_REVISIONS, "ds-abc", NS)
    assert stored is not None and stored["data"] == {"spec": {"x": 1}}


async def test_renumber_label_and_delete() -> None:
    client = RecordingClient()
    writer = RevisionWriter(client)
    stored = await writer.store(_revision("ds-abc", {"spec": {"x": 1}}))
    assert stored is not None
    assert (await writer.renumber(stored, 7))["revision"] == 7
    labelled = await writer.label(stored, {"apps.kruise.io/sidecarset-custom-version": "v2"})
    assert labelled["metadata"]["labels"] == {"apps.kruise.io/sidecarset-custom-version": "v2"}
    await writer.delete(NS, ["ds-abc", "already-gone"])
    assert client.objects(CONTROLLER_REVISIONS) == []
