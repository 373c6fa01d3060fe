"""SidecarSetHistory against a recording client: create, reuse, roll back, tag, prune, collide."""

from __future__ import annotations

import copy
import json

from kruise.api.keys import ANNOTATION_SIDECARSET_HASH, LABEL_SIDECARSET_CUSTOM_VERSION
from kruise.control.sidecarset import revision as rev
from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.kube.clock import FakeClock
from kruise.kube.resources import CONTROLLER_REVISIONS
from kruise.manager.controllers.sidecarset.history import SidecarSetHistory
from tests.kit import FakeInformer, RecordingClient

NS = "kruise-system"


def sidecarset(image: str, **spec) -> dict:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "logs", "uid": "ss-uid", **spec.pop("metadata", {})},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "s", "image": image}],
            **spec,
        },
    }
    set_hash_annotations(body)
    return body


class Harness:
    def __init__(self) -> None:
        self.client = RecordingClient(FakeClock())
        self.revisions = FakeInformer()
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.history = SidecarSetHistory(self.client, self.revisions, NS)

    def stored(self) -> list[tuple[int, str]]:
        ordered = rev.owned_revisions(sidecarset("x"), self.client.objects(CONTROLLER_REVISIONS), NS)
        return [(r["revision"], r["data"]["spec"]["containers"][0]["image"]) for r in ordered]


async def test_create_reuse_and_roll_back() -> None:
    h = Harness()
    first = await h.history.register_latest(sidecarset("a:1"), [])
    assert first.collision_count == 0
    (stored,) = h.client.objects(CONTROLLER_REVISIONS)
    assert stored["metadata"]["name"] == first.name and stored["metadata"]["namespace"] == NS
    h.client.clear()
    assert (await h.history.register_latest(sidecarset("a:1"), [])).name == first.name
    assert h.client.writes == []
    second = await h.history.register_latest(sidecarset("a:2"), [])
    assert h.stored() == [(1, "a:1"), (2, "a:2")]
    back = await h.history.register_latest(sidecarset("a:1"), [])
    assert back.name == first.name and back.name != second.name
    assert h.stored() == [(2, "a:2"), (3, "a:1")]


async def test_custom_version_label_lands_on_the_latest_revision() -> None:
    h = Harness()
    await h.history.register_latest(sidecarset("a:1"), [])
    tagged = sidecarset("a:1", metadata={"labels": {LABEL_SIDECARSET_CUSTOM_VERSION: "v1"}})
    latest = await h.history.register_latest(tagged, [])
    revision = h.client.object(CONTROLLER_REVISIONS, latest.name, NS)
    assert revision["metadata"]["labels"][LABEL_SIDECARSET_CUSTOM_VERSION] == "v1"


async def test_history_is_pruned_but_pod_revisions_are_kept() -> None:
    h = Harness()
    names = [
        (await h.history.register_latest(sidecarset(f"a:{i}", revisionHistoryLimit=2), [])).name
        for i in range(3)
    ]
    assert [r[1] for r in h.stored()] == ["a:1", "a:2"]
    record = {"logs": {"hash": "h", "sidecarSetName": "logs", "controllerRevision": names[1]}}
    pod = {
        "metadata": {
            "name": "p",
            "namespace": "default",
            "annotations": {ANNOTATION_SIDECARSET_HASH: json.dumps(record)},
        }
    }
    await h.history.register_latest(sidecarset("a:3", revisionHistoryLimit=2), [pod])
    assert [r[1] for r in h.stored()] == ["a:1", "a:3"]


async def test_hash_collision_bumps_the_collision_count() -> None:
    h = Harness()
    wanted = rev.new_revision(sidecarset("a:1"), NS, 1, 0)
    squatter = copy.deepcopy(wanted)
    squatter["data"] = rev.revision_data(sidecarset("other:1"))
    squatter["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    h.client.put(CONTROLLER_REVISIONS, squatter)
    latest = await h.history.register_latest(sidecarset("a:1"), [])
    assert latest.collision_count == 1
    assert (
        latest.name
        == rev.new_revision(sidecarset("a:1"), NS, 1, 1)["metadata"]["name"]
        != wanted["metadata"]["name"]
    )
