import asyncio

from kruise.kube.clock import FakeClock
from kruise.kube.errors import InternalError, TooManyRequests
from kruise.kube.informer import InformerOptions, SharedInformer, SharedInformerFactory
from kruise.kube.resources import NODES, PODS
from kruise.kube.store import NODE_NAME_INDEX, DeletedFinalStateUnknown
from tests.kit import until


class Recorder:
    def __init__(self, informer):
        self.events = []
        self.changed = asyncio.Event()
        informer.add_event_handler(self.add, self.update, self.delete)

    def _note(self, event):
        self.events.append(event)
        self.changed.set()

    def add(self, obj):
        self._note(("add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def update(self, old, new):
        self._note(("update", new["metadata"]["name"], new["metadata"]["resourceVersion"]))

    def delete(self, obj):
        if isinstance(obj, DeletedFinalStateUnknown):
            self._note(("tombstone", obj.obj["metadata"]["name"]))
        else:
            self._note(("delete", obj["metadata"]["name"]))

    async def wait_for(self, n):
        async with asyncio.timeout(5):
            while len(self.events) < n:
                self.changed.clear()
                await self.changed.wait()
        return self.events


async def test_list_then_watch_delivers_every_change(fake_api):
    fake_api.put("a", spec={"nodeName": "n1"})
    informer = SharedInformer(fake_api, PODS)
    rec = Recorder(informer)
    informer.start()
    assert await informer.wait_for_sync(5)
    fake_api.put("b")
    fake_api.put("a", spec={"nodeName": "n2"})
    fake_api.remove("b")
    events = await rec.wait_for(4)
    assert events == [("add", "a", "1"), ("add", "b", "2"), ("update", "a", "3"), ("delete", "b")]
    cached = informer.get("default/a")
    assert "managedFields" not in cached["metadata"]
    assert cached["kind"] == "Pod"
    assert [p["metadata"]["name"] for p in informer.by_index(NODE_NAME_INDEX, "n2")] == ["a"]
    assert informer.last_resource_version == "4"
    await informer.stop()


async def test_gone_relists_and_delivers_only_the_difference(fake_api):
    for name in "abc":
        fake_api.put(name)
    informer = SharedInformer(fake_api, PODS)
    rec = Recorder(informer)
    informer.start()
    await rec.wait_for(3)
    # While the watch is down, history moves on and is compacted away.
    fake_api.end_watches()
    fake_api.put("a", spec={"x": 1})
    fake_api.remove("b")
    fake_api.put("d")
    fake_api.compact()
    events = await rec.wait_for(6)
    assert sorted(events[3:]) == [("add", "d", "6"), ("tombstone", "b"), ("update", "a", "4")]
    assert informer.relists == 1
    assert sorted(informer.store.keys()) == ["default/a", "default/c", "default/d"]
    fake_api.put("e")
    await rec.wait_for(7)
    assert events[6] == ("add", "e", "7")
    await informer.stop()


async def test_watch_reconnects_from_last_version_and_bookmarks_advance(fake_api):
    informer = SharedInformer(fake_api, PODS)
    rec = Recorder(informer)
    informer.start()
    await informer.wait_for_sync(5)
    fake_api.put("a")
    await rec.wait_for(1)
    fake_api.rv += 10
    fake_api.bookmark()
    await until(lambda: informer.last_resource_version == "11")
    fake_api.end_watches()
    fake_api.put("b")
    await rec.wait_for(2)
    assert fake_api.lists == 1 and fake_api.watches >= 2
    await informer.stop()


async def test_errors_back_off_on_the_clock(fake_api):
    clock = FakeClock()
    fake_api.fail_next = [
        InternalError("boom"),
        TooManyRequests("slow down", status={"details": {"retryAfterSeconds": 7}}),
    ]
    options = InformerOptions(backoff_initial=1.0, backoff_cap=4.0)
    informer = SharedInformer(fake_api, PODS, options=options, clock=clock)
    informer.start()
    await until(lambda: clock.sleepers > 0)
    assert fake_api.lists == 1 and not informer.has_synced()
    clock.step(2.0)  # first backoff is within [1, 2)
    await until(lambda: fake_api.lists == 2 and clock.sleepers > 0)
    clock.step(6.9)  # the 429 asked for 7 s
    for _ in range(20):
        await asyncio.sleep(0)
    assert fake_api.lists == 2
    clock.step(0.2)
    assert await informer.wait_for_sync(5)
    await informer.stop()


async def test_resync_redelivers_cached_objects_as_updates(fake_api):
    clock = FakeClock()
    fake_api.put("a")
    informer = SharedInformer(fake_api, PODS, options=InformerOptions(resync_period=30), clock=clock)
    rec = Recorder(informer)
    informer.start()
    await rec.wait_for(1)
    await until(lambda: clock.sleepers > 0)
    clock.step(30)
    assert (await rec.wait_for(2))[1] == ("update", "a", "1")
    await informer.stop()


async def test_late_handler_gets_existing_objects(fake_api):
    fake_api.put("a")
    informer = SharedInformer(fake_api, PODS)
    informer.start()
    await informer.wait_for_sync(5)
    rec = Recorder(informer)
    assert rec.events == [("add", "a", "1")]
    await informer.stop()


async def test_broken_handler_does_not_stop_others(fake_api):
    informer = SharedInformer(fake_api, PODS)

    def broken(obj):
        raise RuntimeError("handler bug")

    informer.add_event_handler(on_add=broken)
    rec = Recorder(informer)
    informer.start()
    await informer.wait_for_sync(5)
    fake_api.put("a")
    await rec.wait_for(1)
    await informer.stop()


async def test_factory_shares_one_informer_per_resource(fake_api):
    factory = SharedInformerFactory(fake_api)
    pods = factory.informer(PODS)
    assert factory.informer(PODS) is pods
    assert factory.informer(NODES) is not pods
    assert factory.informer(PODS, "ns1") is not pods
    factory.start()
    assert await factory.wait_for_cache_sync(5)
    await factory.stop()
    assert not pods.running


async def test_wait_for_sync_times_out(fake_api):
    informer = SharedInformer(fake_api, PODS)
    assert not await informer.wait_for_sync(0.01)


async def test_replayed_event_with_same_version_is_not_delivered(fake_api):
    informer = SharedInformer(fake_api, PODS)
    rec = Recorder(informer)
    informer.start()
    await informer.wait_for_sync(5)
    fake_api.put("a")
    await rec.wait_for(1)
    # The server replays the same object version (as after a reconnect), then a real change.
    fake_api.emit("MODIFIED", fake_api.objects["default/a"])
    fake_api.put("b")
    await rec.wait_for(2)
    assert rec.events == [("add", "a", "1"), ("add", "b", "2")]
    await informer.stop()


async def test_notification_fault_drops_one_notification_but_not_the_cache_change(fake_api):
    informer = SharedInformer(fake_api, PODS)
    rec = Recorder(informer)
    informer.notification_fault = lambda kind, obj: kind == "add" and obj["metadata"]["name"] == "lost"
    informer.start()
    assert await informer.wait_for_sync(5)
    fake_api.put("lost")
    fake_api.put("seen")
    fake_api.put("lost", spec={"nodeName": "n1"})
    events = await rec.wait_for(2)
    assert events == [("add", "seen", "2"), ("update", "lost", "3")]
    assert informer.dropped_notifications == 1
    assert informer.get("default/lost") is not None
    await informer.stop()


async def test_cache_is_not_current_from_a_gone_watch_until_the_relist(fake_api):
    """A reader that must not act on a gap (kruise-webhook's admission) can tell the cache lost its
    watch: not current before the first list, nor while a 410 Gone re-list is under way."""
    fake_api.put("a")
    informer = SharedInformer(fake_api, PODS)
    assert not informer.is_current()
    informer.start()
    await informer.wait_current()
    assert informer.is_current() and informer.has_synced()
    listing, release = asyncio.Event(), asyncio.Event()
    list_all = fake_api.list_all

    async def held_list(*args, **kwargs):
        listing.set()
        await release.wait()
        return await list_all(*args, **kwargs)

    fake_api.list_all = held_list
    fake_api.end_watches()
    fake_api.put("b")
    fake_api.compact()
    await listing.wait()
    assert not informer.is_current() and informer.has_synced()
    assert informer.get("default/b") is None
    waiter = asyncio.create_task(informer.wait_current())
    release.set()
    await waiter
    assert informer.get("default/b") is not None
    await informer.stop()


async def test_cache_is_not_current_while_a_failed_watch_backs_off(fake_api):
    """After a failed watch the cache is behind until a watch is open again (its replay from the last
    resourceVersion then closes the gap)."""
    clock = FakeClock()
    options = InformerOptions(backoff_initial=1.0, backoff_cap=4.0)
    informer = SharedInformer(fake_api, PODS, options=options, clock=clock)
    informer.start()
    await informer.wait_current()
    fake_api.fail_next = [InternalError("boom")]
    fake_api.end_watches()
    await until(lambda: clock.sleepers > 0)
    assert not informer.is_current()
    clock.step(2.0)
    await informer.wait_current()
    assert fake_api.lists == 1
    await informer.stop()


async def test_relist_ends_the_watch_and_lists_again_before_being_current(fake_api):
    """kruise-webhook just redefined the CRD: it lists again rather than resuming the watch."""
    informer = SharedInformer(fake_api, PODS)
    informer.start()
    await informer.wait_current()
    assert fake_api.lists == 1
    fake_api.put("a")
    informer.relist()
    assert not informer.is_current()
    await informer.wait_current()
    assert fake_api.lists == 2 and informer.get("default/a") is not None
    await informer.stop()


async def test_delivering_a_large_list_gives_the_loop_turns(fake_api):
    """100k adds through every controller's handlers stalled a manager's loop past its lease's renew
    deadline; the informer now lets other tasks run between slices of the delivery."""
    for i in range(1200):
        fake_api.put(f"p{i:04d}")
    informer = SharedInformer(fake_api, PODS)
    turns, seen = 0, []
    informer.add_event_handler(lambda obj: seen.append(turns))

    async def other():
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other())
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
    finally:
        ticker.cancel()
        await informer.stop()
    assert len(seen) == 1200 and seen[0] < seen[-1]


async def test_a_handler_added_while_a_list_is_delivered_gets_every_object_once(fake_api):
    for i in range(1200):
        fake_api.put(f"p{i:04d}")
    informer = SharedInformer(fake_api, PODS)
    late: list[str] = []
    added_after = []

    def first(obj):
        if obj["metadata"]["name"] == "p0600":
            # from another task, while the delivery is paused between slices
            def add_late():
                added_after.append(informer.has_synced())
                informer.add_event_handler(lambda o: late.append(o["metadata"]["name"]))

            asyncio.get_running_loop().call_soon(add_late)

    informer.add_event_handler(first)
    informer.start()
    assert await informer.wait_for_sync(5)
    await informer.stop()
    assert added_after == [False], "the handler was added while the list was being delivered"
    assert sorted(late) == [f"p{i:04d}" for i in range(1200)]
