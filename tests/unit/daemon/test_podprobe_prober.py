"""kruise-daemon's prober on a fake clock, a scripted probe runner and a NodePodProbe held by the
kit's RecordingClient: initial delay and period, thresholds, writes only on change and coalesced,
workers following the spec."""

from __future__ import annotations

import asyncio

import pytest

from kruise.daemon.podprobe import checks
from kruise.daemon.podprobe.prober import PodProber
from kruise.kube.clock import FakeClock
from kruise.kube.errors import Conflict
from kruise.kube.resources import NODE_POD_PROBES
from tests.kit import RecordingClient

S, F = "Succeeded", "Failed"


def npp_client(npp):
    """The NodePodProbe held by a RecordingClient, which keeps status writes apart from spec writes."""
    client = RecordingClient()
    client.put(NODE_POD_PROBES, npp)
    return client


def stored(client):
    return client.object(NODE_POD_PROBES, "node-1")


def status_writes(client):
    """The status writes that reached the store (a write refused with Conflict is not one)."""
    return [c for c in client.calls_to("update", NODE_POD_PROBES, subresource="status") if c.succeeded]


def set_spec(client, spec):
    """Another writer changes the spec (a new resourceVersion, as the apiserver would give it)."""
    npp = stored(client)
    npp["spec"] = spec
    del npp["metadata"]["resourceVersion"]
    client.put(NODE_POD_PROBES, npp)


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
        for e in (stored(client).get("status") or {}).get("podProbeStatuses") or []
        for s in e["probeStates"]
    }


async def test_initial_delay_then_every_period(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, "")]
    npp = node_probe(probe("m#a", initialDelaySeconds=5, periodSeconds=2))
    client = npp_client(npp)
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
    assert len(status_writes(client)) == 1  # the same state again is not written
    await prober.stop()


async def test_failure_threshold_message_changes_and_conflicts(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, ""), (F, "busy"), (F, "busy"), (F, "still busy"), (S, "")]
    npp = node_probe(probe("m#a", periodSeconds=1, failureThreshold=2))
    client = npp_client(npp)
    client.fail_next("update", NODE_POD_PROBES, "node-1", error=Conflict)
    prober = PodProber(client, None, "node-1", clock=clock)
    prober.start_writer()
    prober.sync(npp)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    clock.step(1)  # first failure: below the threshold
    await settle(lambda: len(calls) == 2)
    assert states(client) == {"m#a": (S, "")}
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (F, "busy")})
    first_failed = stored(client)["status"]["podProbeStatuses"][0]["probeStates"][0]
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (F, "still busy")})
    now = stored(client)["status"]["podProbeStatuses"][0]["probeStates"][0]
    assert now["lastTransitionTime"] == first_failed["lastTransitionTime"]
    assert now["lastProbeTime"] != first_failed["lastProbeTime"]
    clock.step(1)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    assert len(status_writes(client)) == 4
    refused = [c for c in client.calls_to("update", NODE_POD_PROBES) if not c.succeeded]
    assert [type(c.error) for c in refused] == [Conflict]  # the first write conflicted and was retried
    await prober.stop()


async def test_workers_follow_the_spec(scripted):
    script, calls, clock = scripted
    script["m#a"] = [(S, "")]
    script["m#b"] = [(F, "down")]
    npp = node_probe(probe("m#a", periodSeconds=1), probe("m#b", periodSeconds=1, failureThreshold=1))
    client = npp_client(npp)
    prober = PodProber(client, None, "node-1", clock=clock)
    prober.start_writer()
    prober.sync(npp)
    await settle(lambda: states(client) == {"m#a": (S, ""), "m#b": (F, "down")})
    narrowed = node_probe(probe("m#a", periodSeconds=1))
    set_spec(client, narrowed["spec"])
    prober.sync(narrowed)
    await settle(lambda: states(client) == {"m#a": (S, "")})
    calls.clear()
    clock.step(1)
    await settle(lambda: len(calls) == 1)
    assert calls[0][0] == "m#a"  # m#b's worker was stopped
    set_spec(client, {})
    prober.sync({"metadata": {"name": "node-1"}})
    await settle(lambda: stored(client)["status"] == {})
    assert prober.results == {}
    await prober.stop()
