"""A controller's own writes must not resurrect objects the watch has already seen deleted.

The flake this pins: a ReplicaSet deleted an unbound pod (gone at once), the watch's DELETED event
reached the cache before the DELETE's answer did, and ``remember`` put the answer back — a
phantom pod no later event removed, so a later scale-up created one pod too few.
"""

from __future__ import annotations

from functools import partial

from kruise.sandbox.simulator.informer import Informer
from kruise.sandbox.simulator.owners import remember, remember_deletion
from tests.kit.pods import pod

# a pod as a DELETE answers it: with its kind (a Status reply has another)
stored_pod = partial(pod, typed=True)


class Watching:
    """A client whose watch replays `events`, then ends."""

    def __init__(self, events: list[tuple[str, dict]]) -> None:
        self.events = events

    async def watch(self, path, version, **params):
        for kind, obj in self.events:
            yield {"type": kind, "object": obj}


async def informer_after(events: list[tuple[str, dict]]) -> Informer:
    informer = Informer(Watching(events), "/api/v1/pods")
    await informer._watch("1")
    return informer


async def test_delete_answer_after_the_deleted_event_does_not_resurrect() -> None:
    informer = await informer_after([("ADDED", stored_pod("p", rv=5)), ("DELETED", stored_pod("p", rv=7))])
    assert informer.get("default/p") is None
    remember(informer, stored_pod("p", rv=7))  # the DELETE's answer: the object as it was removed
    assert informer.get("default/p") is None
    remember_deletion(informer, stored_pod("p", rv=7))
    assert informer.get("default/p") is None


async def test_delete_answer_before_the_deleted_event_drops_the_pod_at_once() -> None:
    informer = await informer_after([("ADDED", stored_pod("p", rv=5))])
    remember_deletion(informer, stored_pod("p", rv=7))
    assert informer.get("default/p") is None


async def test_terminating_answer_is_remembered_until_the_watch_moves_past_it() -> None:
    informer = await informer_after([("ADDED", stored_pod("p", rv=5))])
    marked = stored_pod("p", rv=6, deleting=True)
    remember_deletion(informer, marked)
    assert informer.get("default/p") == marked
    late = await informer_after([("ADDED", stored_pod("q", rv=5)), ("DELETED", stored_pod("q", rv=8))])
    remember_deletion(late, stored_pod("q", rv=6, deleting=True))
    assert late.get("default/q") is None


async def test_writes_newer_than_the_watch_still_land_and_a_recreated_name_survives() -> None:
    informer = await informer_after([("ADDED", stored_pod("p", rv=5)), ("DELETED", stored_pod("p", rv=7))])
    remember(informer, stored_pod("p", rv=9))  # created again under the same name (StatefulSet ordinals)
    assert informer.get("default/p")["metadata"]["resourceVersion"] == "9"
    remember_deletion(informer, stored_pod("p", rv=7))  # a stale answer never drops the newer pod
    assert informer.get("default/p")["metadata"]["resourceVersion"] == "9"
    remember(informer, stored_pod("p", rv=8))
    assert informer.get("default/p")["metadata"]["resourceVersion"] == "9"
