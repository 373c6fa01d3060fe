"""SidecarTerminator rules: which pods, which containers, the request body, the image swap, the
terminal status (upstream 1.9 pkg/controller/sidecarterminator)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.sidecarterminator import termination
from tests.kit.pods import pod

SIDECAR_ENV = [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"}]
IGNORE_ENV = [*SIDECAR_ENV, {"name": "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE", "value": "TRUE"}]
IMAGE_ENV = [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE", "value": "exit:0"}]

RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
WAITING = {"waiting": {"reason": "ContainerCreating"}}


def done(code=0):
    return {"terminated": {"exitCode": code}}


def job_pod(policy="Never", phase="Running", containers=(), states=None, deleting=False):
    """A Job's pod on n1. `containers`: (name, env); `states`: name -> state (a container without one
    has no status)."""
    states = states or {}
    return pod(
        "job-1",
        namespace="ns",
        uid="u-1",
        deleting=deleting,
        restartPolicy=policy,
        node="n1",
        containers=[{"name": n, "image": f"{n}:1", "env": env} for n, env in containers],
        phase=phase,
        status={"containerStatuses": [{"name": n, "state": states[n]} for n, _ in containers if n in states]},
    )


MAIN_SIDE = (("main", []), ("side", SIDECAR_ENV))


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (job_pod(states={"main": done(), "side": RUNNING}, containers=MAIN_SIDE), True),
        (job_pod(states={"main": done(1), "side": RUNNING}, containers=MAIN_SIDE), True),
        (job_pod(states={"main": RUNNING, "side": RUNNING}, containers=MAIN_SIDE), False),
        (job_pod(states={"main": done(), "side": done(143)}, containers=MAIN_SIDE), False),  # sidecar gone
        (job_pod(states={"main": done()}, containers=MAIN_SIDE), False),  # statuses incomplete
        (job_pod("OnFailure", states={"main": done(), "side": RUNNING}, containers=MAIN_SIDE), True),
        (job_pod("OnFailure", states={"main": done(2), "side": RUNNING}, containers=MAIN_SIDE), False),
        (job_pod("Always", states={"main": done(), "side": RUNNING}, containers=MAIN_SIDE), False),
        (job_pod(phase="Pending", states={"main": done(), "side": RUNNING}, containers=MAIN_SIDE), False),
        (job_pod(deleting=True, states={"main": done(), "side": RUNNING}, containers=MAIN_SIDE), False),
        (job_pod(states={"main": done(), "side": RUNNING}, containers=(("main", []), ("side", []))), False),
        (
            job_pod(
                states={"main": done(), "side": RUNNING},
                containers=(("main", []), ("side", [{"name": SIDECAR_ENV[0]["name"], "value": "yes"}])),
            ),
            False,
        ),  # only "true" (any case) marks a sidecar
        (job_pod(states={"main": done(), "vk": RUNNING}, containers=(("main", []), ("vk", IMAGE_ENV))), True),
    ],
)
def test_interesting_pods(case, expected):
    assert termination.is_interesting(case) is expected


def test_groups_off_and_on_virtual_kubelet():
    p = job_pod(
        containers=(
            ("main", []),
            ("a", SIDECAR_ENV),
            ("b", IGNORE_ENV),
            ("c", IMAGE_ENV),
            ("d", [*SIDECAR_ENV, *IMAGE_ENV]),
        )
    )
    normal = termination.sidecar_groups(p, virtual_kubelet=False)
    assert normal == termination.SidecarGroups(frozenset({"a", "d"}), frozenset({"b"}), frozenset())
    vk = termination.sidecar_groups(p, virtual_kubelet=True)
    assert vk == termination.SidecarGroups(frozenset(), frozenset(), frozenset({"c", "d"}))
    assert termination.main_and_sidecar_names(p) == (frozenset({"main"}), frozenset({"a", "b", "c", "d"}))


def test_virtual_kubelet_node_label():
    assert termination.is_virtual_kubelet({"metadata": {"labels": {"type": "virtual-kubelet"}}})
    assert not termination.is_virtual_kubelet({"metadata": {"labels": {"type": "real"}}})
    assert not termination.is_virtual_kubelet(None)


def test_kill_request_is_upstreams():
    p = job_pod(containers=MAIN_SIDE)
    body = termination.kill_request(p, ["side", "b"])
    assert body == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": "sidecar-termination-u-1",
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "job-1",
                    "uid": "u-1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "podName": "job-1",
            "containers": [{"name": "b"}, {"name": "side"}],
            "strategy": {"forceRecreate": True, "failurePolicy": "Ignore"},
        },
    }


def test_image_patch_only_for_changed_sidecars():
    p = job_pod(containers=(("main", []), ("vk", IMAGE_ENV), ("vk2", IMAGE_ENV)))
    p["spec"]["containers"][2]["image"] = "exit:0"
    assert termination.image_patch(p, ["vk", "vk2"]) == {
        "spec": {"containers": [{"name": "vk", "image": "exit:0"}]}
    }
    assert termination.image_patch(p, ["vk2"]) is None


@pytest.mark.parametrize(("main_code", "phase"), [(0, "Succeeded"), (3, "Failed")])
def test_terminated_status(main_code, phase):
    p = job_pod(states={"main": done(main_code), "side": RUNNING}, containers=MAIN_SIDE)
    patch = termination.terminated_status_patch(p, "2026-01-01T00:00:00Z")
    assert patch == {
        "status": {
            "phase": phase,
            "conditions": [
                {
                    "type": "SidecarTerminated",
                    "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "message": "Terminated by Sidecar Terminator",
                }
            ],
        }
    }
    p["status"]["phase"] = "Failed"
    assert termination.terminated_status_patch(p, "t") is None


def test_uncompleted_and_event_text():
    p = job_pod(
        states={"main": done(), "a": RUNNING, "b": done(1)},
        containers=(("main", []), ("a", []), ("b", []), ("c", [])),
    )
    assert termination.uncompleted(p, ["a", "b", "c"]) == ["a", "c"]
    assert termination.go_list(["a", "c"]) == "[a c]"


STATE = st.sampled_from(["running", "waiting", "ok", "failed", "missing"])


def _state(kind):
    return {"running": RUNNING, "waiting": WAITING, "ok": done(0), "failed": done(1)}.get(kind)


@given(
    policy=st.sampled_from(["Never", "OnFailure", "Always"]),
    mains=st.lists(STATE, min_size=1, max_size=4),
    sidecars=st.lists(STATE, min_size=0, max_size=3),
)
def test_interesting_matches_the_definition(policy, mains, sidecars):
    containers = [(f"m{i}", []) for i in range(len(mains))] + [
        (f"s{i}", SIDECAR_ENV) for i in range(len(sidecars))
    ]
    kinds = dict(zip([n for n, _ in containers], [*mains, *sidecars], strict=True))
    states = {n: _state(k) for n, k in kinds.items() if k != "missing"}
    p = job_pod(policy, containers=containers, states=states)
    all_reported = "missing" not in kinds.values()
    main_ok = (
        all(k in ("ok", "failed") for k in mains) if policy == "Never" else all(k == "ok" for k in mains)
    )
    sidecar_up = bool(sidecars) and not (all_reported and all(k in ("ok", "failed") for k in sidecars))
    expected = policy != "Always" and all_reported and main_ok and sidecar_up
    assert termination.is_interesting(p) is expected
    if expected:
        # what is left to stop is exactly the sidecars without a terminated state
        left = termination.uncompleted(p, termination.sidecar_groups(p, virtual_kubelet=False).normal)
        assert left == sorted(f"s{i}" for i, k in enumerate(sidecars) if k in ("running", "waiting"))
        assert termination.kill_request(p, left)["spec"]["containers"] == [{"name": n} for n in left]
