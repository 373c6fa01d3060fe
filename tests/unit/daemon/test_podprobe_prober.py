"""kruise-daemon's prober on a fake clock, a scripted probe runner and an in-memory NodePodProbe:
initial delay and period, thresholds, writes only on change and coalesced, workers following the spec."""

from __future__ import annotations

import asyncio
import copy

import pytest

from kruise.daemon.podprobe import checks
from kruise.daemon.podprobe.prober import PodProber
from kruise.kube.clock import FakeClock
from kruise.kube.errors import Conflict

S, F = "Succeeded", "Failed"


class FakeClient:
    """One NodePodProbe in memory; `conflicts` status writes fail with Conflict first."""

    def __init__(self, npp):
        self.npp = copy.deepcopy(npp)
        self.writes = []
        self.conflicts = 0

    async def get(self, ref, name, namespace=None):
        return copy.deepcopy(self.npp)

    async def update_status(self, ref, body):
        if self.conflicts:
            self.conflicts -= 1
            raise Conflict("the object has been modified")
        self.npp["status"] = copy.deepcopy(body["status"])
        self.writes.append(copy.deepcopy(body["status"]))
        return copy.deepcopy(self.npp)


def node_probe(*probes, uid="u1"):
    return {
        "metadata": {"name": "node-1"},
        "spec": {
            "podProbes": [
                {"name": "p", "namespace": "ns", "uid": uid, "IP": "10.0.0.1", "probes": list(probes)}
            ]
        },
    }


def probe(name, **timing):
    return {"name": name, "containerName": "main", "probe": {"exec": {"command": [name]}, **timing}}


async def settle(condition=lambda: True, rounds=200):
    """Let the event loop run the woken tasks (no wall-clock wait) until `condition` holds."""
    for _ in range(rounds):
        await asyncio.sleep(0)
        if condition():
            return
    raise AssertionError("condition not reached while the loop settled")


@pytest.fixture
def scripted(monkeypatch):
    """Per probe name: a list of outcomes to return in turn (the last one repeats); calls recorded."""
    script: dict[str, list] = {}
    calls: list[tuple[str, float]] = []
    clock = FakeClock()

    async def run_probe(runtime, pod, probe_, timeout):
        calls.append((probe_["name"], clock.now()))
        outcomes = script[probe_["name"]]
        return outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]

    monkeypatch.setattr(checks, "run_probe", run_probe)
    return script, calls, clock


def states(client):
    return {
        s["name"]: (s["state"], s.get("message", ""))
        for e in (client.npp.get("status") or {}).get("podProbeStatuses") or []
        for s in e["probeStates"]
    }


async def test_initial_delay_then_every_period(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, "")]
    npp = node_probe(probe("m#a", initialDelaySeconds=5, periodSeconds=2))
    client = FakeClient(npp)
    prober = PodProber(client, None, "node-1", clock=clock)
    prober.start_writer()
    prober.sync(npp)
    await settle(lambda: clock.sleepers == 1)  # the worker waits out its initial delay
    clock.step(4.9)
    await settle()
    assert calls == []
    clock.step(0.1)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    for _ in range(2):
        clock.step(2)
        await settle(lambda n=len(calls): len(calls) == n + 1)
    assert [at - 1000.0 for _, at in calls] == [5, 7, 9]
    assert len(client.writes) == 1  # the same state again is not written
    await prober.stop()


async def test_failure_threshold_message_changes_and_conflicts(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, ""), (F, "busy"), (F, "busy"), (F, "still busy"), (S, "")]
    npp = node_probe(probe("m#a", periodSeconds=1, failureThreshold=2))
    client = FakeClient(npp)
    client.conflicts = 1
    prober = PodProber(client, None, "node-1", clock=clock)
    prober.start_writer()
    prober.sync(npp)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    clock.step(1)  # first failure: below the threshold
    await settle(lambda: len(calls) == 2)
    assert states(client) == {"m#a": (S, "")}
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (F, "busy")})
    first_failed = client.npp["status"]["podProbeStatuses"][0]["probeStates"][0]
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (F, "still busy")})
    now = client.npp["status"]["podProbeStatuses"][0]["probeStates"][0]
    assert now["lastTransitionTime"] == first_failed["lastTransitionTime"]
    assert now["lastProbeTime"] != first_failed["lastProbeTime"]
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    assert len(client.writes) == 4
    await prober.stop()


async def test_workers_follow_the_spec(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, "")]
    script["m#b"] = [(F, "down")]
    npp = node_probe(probe("m#a", periodSeconds=1), probe("m#b", periodSeconds=1, failureThreshold=1))
    client = FakeClient(npp)
    prober = PodProber(client, None, "node-1", clock=clock)
    prober.start_writer()
    prober.sync(npp)
    await settle(lambda: states(client) == {"m#a": (S, ""), "m#b": (F, "down")})
    narrowed = node_probe(probe("m#a", periodSeconds=1))
    client.npp["spec"] = narrowed["spec"]
    prober.sync(narrowed)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    calls.clear()
    clock.step(1)
    await settle(lambda: len(calls) == 1)
    assert calls[0][0] == "m#a"  # m#b's worker was stopped
    client.npp["spec"] = {}
    prober.sync({"metadata": {"name": "node-1"}})
    await settle(lambda: client.npp["status"] == {})
    assert prober.results == {}
    await prober.stop()
