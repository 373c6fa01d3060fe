"""Container launch priority: barrier env injection on pod create (pure logic + through the app)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from webhook_testkit import apply_patch, post, review

from kruise.control.launchpriority import barriers


def _pod(*envs: list | None, name: str = "demo", annotations: dict | None = None) -> dict:
    containers = [
        {"name": f"c{i}", "image": "busybox", **({"env": e} if e is not None else {})}
        for i, e in enumerate(envs)
    ]
    meta: dict = {"namespace": "default", "annotations": annotations or {}}
    meta["name" if name else "generateName"] = name or "job-"
    return {"metadata": meta, "spec": {"containers": containers}}


def _prio(value: str) -> list:
    return [{"name": "KRUISE_CONTAINER_PRIORITY", "value": value}]


def _barrier_keys(pod: dict) -> list[str | None]:
    keys = []
    for c in pod["spec"]["containers"]:
        found = [e for e in c.get("env", []) if e["name"] == "KRUISE_CONTAINER_BARRIER"]
        keys.append(found[0]["valueFrom"]["configMapKeyRef"]["key"] if found else None)
    return keys


@pytest.mark.parametrize(
    ("pod", "keys"),
    [
        (_pod(None, None, None, annotations={"apps.kruise.io/container-launch-priority": "Ordered"}),
         ["p_0", "p_-1", "p_-2"]),
        (_pod(_prio("10"), _prio("-1"), None), ["p_10", "p_-1", "p_0"]),
        (_pod(_prio("5"), _prio("5")), [None, None]),  # all equal: nothing to order
        (_pod(_prio("5")), [None]),  # single container
        (_pod(None, None), [None, None]),
    ],
)  # fmt: skip
def test_barrier_keys(pod, keys):
    changed = barriers.inject_barriers(pod)
    assert changed is any(keys)
    assert _barrier_keys(pod) == keys
    if changed:
        ref = pod["spec"]["containers"][0]["env"][-1]["valueFrom"]["configMapKeyRef"]
        assert ref["name"] == "demo-barrier"
        assert barriers.inject_barriers(pod) is False  # reinvocation adds nothing


def test_generated_name_feeds_the_configmap_name():
    pod = _pod(_prio("1"), None, name="")
    assert barriers.inject_barriers(pod)
    name = pod["metadata"]["name"]
    assert name.startswith("job-") and len(name) == len("job-") + 5
    ref = pod["spec"]["containers"][1]["env"][0]["valueFrom"]["configMapKeyRef"]
    assert ref == {"name": f"{name}-barrier", "key": "p_0"}


def test_bad_priority_names_the_field():
    with pytest.raises(
        barriers.PriorityError, match=r"spec.containers\[1\].env\[KRUISE_CONTAINER_PRIORITY\]"
    ):
        barriers.inject_barriers(_pod(None, _prio("high")))


@given(st.lists(st.integers(-100, 100), min_size=1, max_size=6), st.sets(st.integers(-100, 100)))
def test_launch_step_releases_from_the_highest_pending_priority(pending, present):
    pending = sorted(pending)
    keys = {barriers.barrier_key(p) for p in present}
    add, complete = barriers.launch_step(pending, keys)
    if barriers.barrier_key(pending[0]) in keys:
        assert (add, complete) == (None, True)
    else:
        highest = barriers.barrier_key(pending[-1])
        assert add == (None if highest in keys else highest)
        assert complete is (pending[0] == pending[-1])
    assert barriers.launch_step([], keys) == (None, True)


def test_pending_priorities_skip_ready_and_ungated_containers():
    def gated(name, priority):
        env = [
            {
                "name": "KRUISE_CONTAINER_BARRIER",
                "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": f"p_{priority}"}},
            }
        ]
        return {"name": name, "env": env}

    pod = {
        "spec": {"containers": [gated("a", 2), gated("b", 1), {"name": "c"}, gated("d", -1)]},
        "status": {"containerStatuses": [{"name": "a", "ready": True}, {"name": "b", "ready": False}]},
    }
    assert barriers.pending_priorities(pod) == [-1, 1]


async def test_pod_webhook_injects_barriers_and_rejects_bad_priority(client):
    pod = _pod(_prio("2"), None)
    resp = await post(
        client, "/mutate-pod", review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=pod)
    )
    assert _barrier_keys(apply_patch(pod, resp)) == ["p_2", "p_0"]
    bad = _pod(_prio("x"), None)
    resp = await post(
        client, "/mutate-pod", review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=bad)
    )
    assert resp["allowed"] is False and resp["status"]["code"] == 400
    assert "KRUISE_CONTAINER_PRIORITY" in resp["status"]["message"]
