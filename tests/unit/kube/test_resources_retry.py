import pytest

from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import LEASES, NODES, PODS, ResourceRef, object_key, split_key
from kruise.kube.retry import Backoff, optimistic_update, retry_on_conflict

CLONESETS = ResourceRef("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")


@pytest.mark.parametrize(
    ("ref", "args", "path"),
    [
        (PODS, (None,), "/api/v1/pods"),
        (PODS, ("ns",), "/api/v1/namespaces/ns/pods"),
        (PODS, ("ns", "p", "eviction"), "/api/v1/namespaces/ns/pods/p/eviction"),
        (NODES, (None, "n1"), "/api/v1/nodes/n1"),
        (
            LEASES,
            ("kruise-system", "kruise-manager"),
            "/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-manager",
        ),
        (CLONESETS, ("d", "cs", "scale"), "/apis/apps.kruise.io/v1alpha1/namespaces/d/clonesets/cs/scale"),
    ],
)
def test_paths(ref, args, path):
    assert ref.path(*args) == path


def test_path_errors_name_the_field():
    with pytest.raises(ValueError, match="cluster-scoped"):
        NODES.path("ns", "n1")
    with pytest.raises(ValueError, match=r"metadata\.name: Required value"):
        PODS.path("ns", "")
    with pytest.raises(ValueError, match="needs an object name"):
        PODS.path("ns", None, "status")


def test_keys_round_trip():
    assert object_key({"metadata": {"namespace": "a", "name": "b"}}) == "a/b"
    assert object_key({"metadata": {"name": "n"}}) == "n"
    assert split_key("a/b") == ("a", "b")
    assert split_key("n") == (None, "n")
    assert CLONESETS.api_version == "apps.kruise.io/v1alpha1" and PODS.api_version == "v1"


async def test_retry_on_conflict_retries_until_success():
    calls = 0

    async def write():
        nonlocal calls
        calls += 1
        if calls < 3:
            raise Conflict("the object has been modified")
        return "ok"

    assert await retry_on_conflict(write, Backoff(steps=5, duration=0.001)) == "ok"
    assert calls == 3


async def test_retry_on_conflict_gives_up_and_passes_other_errors():
    calls = 0

    async def always_conflict():
        nonlocal calls
        calls += 1
        raise Conflict("again")

    with pytest.raises(Conflict):
        await retry_on_conflict(always_conflict, Backoff(steps=4, duration=0.001))
    assert calls == 4

    async def not_found():
        raise NotFound("gone")

    with pytest.raises(NotFound):
        await retry_on_conflict(not_found)
    with pytest.raises(ValueError, match="steps"):
        await retry_on_conflict(not_found, Backoff(steps=0))


def test_backoff_delays_grow_and_cap():
    delays = Backoff(steps=5, duration=1.0, factor=2.0, jitter=0.0, cap=3.0).delays()
    assert delays == [1.0, 2.0, 3.0, 3.0]


NO_WAIT = Backoff(steps=4, duration=0.0, factor=1.0, jitter=0.0)


async def test_optimistic_update_rereads_and_recomputes_after_a_conflict() -> None:
    stored = {"v": 1}
    writes: list[dict] = []

    async def write(obj: dict) -> dict:
        writes.append(obj)
        if len(writes) == 1:
            stored["v"] = 5  # somebody else won the race
            raise Conflict("stale")
        return obj

    async def read() -> dict:
        return dict(stored)

    result = await optimistic_update(
        {"v": 1}, lambda o: {"v": o["v"] + 1}, write=write, read=read, backoff=NO_WAIT
    )
    assert result == {"v": 6} and writes == [{"v": 2}, {"v": 6}]


async def test_optimistic_update_writes_nothing_when_the_change_became_unneeded() -> None:
    async def write(obj: dict) -> dict:
        raise Conflict("stale")

    async def read() -> dict:
        return {"done": True}

    change = lambda o: None if o.get("done") else {"done": True}  # noqa: E731
    assert await optimistic_update({}, change, write=write, read=read, backoff=NO_WAIT) is None


async def test_optimistic_update_gives_up_after_the_last_step_and_lets_refusals_through() -> None:
    calls = 0

    async def write(obj: dict) -> dict:
        nonlocal calls
        calls += 1
        raise Conflict("stale")

    async def read() -> dict:
        return {}

    with pytest.raises(Conflict):
        await optimistic_update({}, lambda o: {"x": 1}, write=write, read=read, backoff=NO_WAIT)
    assert calls == 4

    def refuse(obj: dict) -> dict:
        raise ValueError("budget spent")

    with pytest.raises(ValueError, match="budget spent"):
        await optimistic_update({}, refuse, write=write, read=read, backoff=NO_WAIT)
