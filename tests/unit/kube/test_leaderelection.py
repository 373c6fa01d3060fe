import asyncio
import re

import pytest
from prometheus_client import REGISTRY

from kruise.kube.clock import FakeClock
from kruise.kube.errors import TransportError
from kruise.kube.leaderelection import LeaderElectionConfig, LeaderElector, LeadershipLost, default_identity
from kruise.kube.resources import LEASES
from tests.kit import RecordingClient, until

FAST = {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1}
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def config(identity, name="kruise-manager"):
    return LeaderElectionConfig(identity=identity, name=name, **FAST)


@pytest.fixture
def api() -> RecordingClient:
    """The Lease's apiserver: create, get and update with resourceVersion compare-and-swap."""
    return RecordingClient()


def lease_object(api, name="kruise-manager"):
    return api.object(LEASES, name, "kruise-system")


def lease(api, name="kruise-manager"):
    return lease_object(api, name)["spec"]


def reads(api):
    """Lease reads so far: each campaign attempt starts with one."""
    return len(api.calls_to("get", LEASES))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lease_duration": 10, "renew_deadline": 10}, "leaseDuration"),
        ({"renew_deadline": 2.4, "retry_period": 2}, "renewDeadline"),
        ({"identity": ""}, "identity"),
    ],
)
def test_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LeaderElectionConfig(**kwargs)


def test_defaults_match_kruise_manager():
    cfg = LeaderElectionConfig()
    assert (cfg.namespace, cfg.name) == ("kruise-system", "kruise-manager")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)
    assert re.match(r"^.+_[0-9a-f-]{36}$", default_identity())


async def test_first_candidate_creates_and_leads(api):
    started = asyncio.Event()
    elector = LeaderElector(api, config("a"), on_started_leading=started.set)
    task = asyncio.ensure_future(elector.run())
    await asyncio.wait_for(started.wait(), 5)
    spec = lease(api)
    assert (
        spec["holderIdentity"] == "a" and spec["leaseTransitions"] == 0 and spec["leaseDurationSeconds"] == 1
    )
    assert MICRO.match(spec["acquireTime"]) and MICRO.match(spec["renewTime"])
    assert REGISTRY.get_sample_value("kruise_manager_is_leader", {"name": "kruise-manager"}) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    released = lease(api)
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    assert REGISTRY.get_sample_value("kruise_manager_is_leader", {"name": "kruise-manager"}) == 0


async def test_renew_keeps_acquire_time(api):
    elector = LeaderElector(api, config("a"))
    task = asyncio.ensure_future(elector.run())
    await asyncio.wait_for(elector.started_leading.wait(), 5)
    first = dict(lease(api))
    rv = lease_object(api)["metadata"]["resourceVersion"]
    await until(
        lambda: lease_object(api)["metadata"]["resourceVersion"] != rv,
        timeout=5,
        interval=0.02,
        message="the next renew write",
    )
    second = lease(api)
    assert second["acquireTime"] == first["acquireTime"] and second["leaseTransitions"] == 0
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_standby_takes_over_after_release_and_counts_transition(api):
    leaders: list[str] = []
    a = LeaderElector(api, config("a"), on_new_leader=leaders.append)
    clock_b = FakeClock()
    b = LeaderElector(api, config("b"), on_new_leader=leaders.append, clock=clock_b)
    ta = asyncio.ensure_future(a.run())
    await asyncio.wait_for(a.started_leading.wait(), 5)
    tb = asyncio.ensure_future(b.run())
    # b's time only moves when stepped: each campaign attempt ends with b asleep on its clock.
    await until(lambda: clock_b.sleepers == 1)
    assert b.observed_holder == "a" and not b.is_leader()
    # Well inside a's lease duration (1 s) by b's clock: another attempt, still refused.
    attempts = reads(api)
    clock_b.step(0.5)
    await until(lambda: reads(api) > attempts and clock_b.sleepers == 1)
    assert not b.is_leader() and lease(api)["holderIdentity"] == "a"
    ta.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ta
    clock_b.step(0.5)  # past b's longest jittered retry wait: it sees the released lease and takes it
    await asyncio.wait_for(b.started_leading.wait(), 5)
    assert lease(api)["holderIdentity"] == "b"
    assert lease(api)["leaseTransitions"] == 1
    assert leaders[:2] == ["a", "a"] and "b" in leaders
    tb.cancel()
    with pytest.raises(asyncio.CancelledError):
        await tb


async def test_failed_renew_stops_leading(api):
    stopped = asyncio.Event()
    work_cancelled = asyncio.Event()

    async def work():
        try:
            await asyncio.Event().wait()
        finally:
            work_cancelled.set()

    elector = LeaderElector(api, config("a"), on_started_leading=work, on_stopped_leading=stopped.set)
    task = asyncio.ensure_future(elector.run())
    await asyncio.wait_for(elector.started_leading.wait(), 5)
    api.fail_next(
        "*", LEASES, "kruise-manager", "kruise-system", error=TransportError("connection refused"), times=None
    )
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(task, 5)
    assert stopped.is_set() and work_cancelled.is_set() and not elector.is_leader()
    assert api.calls[-1].error is not None  # it gave up on the unreachable apiserver


def test_default_identity_names_the_pod_where_the_runtime_sets_hostname(monkeypatch):
    monkeypatch.setenv("HOSTNAME", "kruise-manager-7c9-abcde")
    assert re.match(r"^kruise-manager-7c9-abcde_[0-9a-f-]{36}$", default_identity())
