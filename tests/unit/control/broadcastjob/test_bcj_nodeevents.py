"""Node events that wake BroadcastJobs: fitting new nodes, fitness flips, heartbeats ignored."""

from __future__ import annotations

import copy

from bcj_builders import node

from kruise.control.broadcastjob.nodeevents import is_heartbeat, wakes_on_add, wakes_on_update

TEMPLATE = {"spec": {"containers": [{"name": "m"}], "nodeSelector": {"role": "probe"}}}


def with_conditions(n, **conditions):
    n = copy.deepcopy(n)
    n["status"]["conditions"] = [
        {"type": t, "status": s, "lastHeartbeatTime": "2026-01-01T00:00:00Z"} for t, s in conditions.items()
    ]
    return n


def test_a_new_node_wakes_jobs_that_fit_it():
    assert wakes_on_add(TEMPLATE, node("a", labels={"role": "probe"}))
    assert not wakes_on_add(TEMPLATE, node("a"))


def test_heartbeats_are_ignored():
    old = with_conditions(node("a"), Ready="True")
    new = with_conditions(node("a"), Ready="True")
    new["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:01:00Z"
    new["metadata"]["resourceVersion"] = "9"
    assert is_heartbeat(old, new)
    assert not is_heartbeat(old, with_conditions(node("a"), Ready="False"))
    assert not is_heartbeat(old, with_conditions(node("a", labels={"x": "y"}), Ready="True"))


def test_an_update_wakes_jobs_whose_fit_flipped():
    before = node("a")
    after = node("a", labels={"role": "probe"})
    assert wakes_on_update(TEMPLATE, before, after)
    assert wakes_on_update(TEMPLATE, after, before)
    relabelled = node("a", labels={"other": "x"})
    assert not wakes_on_update(TEMPLATE, before, relabelled)
    cordoned = node("a", labels={"role": "probe"}, unschedulable=True)
    assert wakes_on_update(TEMPLATE, after, cordoned)
