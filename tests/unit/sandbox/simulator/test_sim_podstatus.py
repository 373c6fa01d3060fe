"""Kubelet-owned pod conditions, readiness gates and phase."""

import pytest

from kruise.sandbox.simulator.podstatus import (
    ContainerView,
    kubelet_conditions,
    merge_conditions,
    pod_phase,
    readiness_gate_problem,
)


def gated_pod(*gates, conditions=()):
    return {
        "spec": {"readinessGates": [{"conditionType": g} for g in gates]},
        "status": {"conditions": list(conditions)},
    }


def by_type(conditions):
    return {c["type"]: c for c in conditions}


READY = ContainerView("app", ready=True, started=True)
UNREADY = ContainerView("side", ready=False, started=True)


def test_ready_when_all_containers_ready_and_no_gates():
    conditions = by_type(
        kubelet_conditions(
            gated_pod(), sandbox_ready=True, init_containers=[], containers=[READY], phase="Running"
        )
    )
    assert conditions["Ready"]["status"] == "True"
    assert conditions["ContainersReady"]["status"] == "True"
    assert conditions["Initialized"]["status"] == "True"
    assert conditions["PodReadyToStartContainers"]["status"] == "True"


def test_unready_container_names_listed():
    conditions = by_type(
        kubelet_conditions(
            gated_pod(), sandbox_ready=True, init_containers=[], containers=[READY, UNREADY], phase="Running"
        )
    )
    assert conditions["Ready"] == {
        "type": "Ready",
        "status": "False",
        "reason": "ContainersNotReady",
        "message": "containers with unready status: [side]",
    }


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ([], 'corresponding condition of pod readiness gate "InPlaceUpdateReady" does not exist.'),
        (
            [{"type": "InPlaceUpdateReady", "status": "False"}],
            'the status of pod readiness gate "InPlaceUpdateReady" is not "True", but False',
        ),
        ([{"type": "InPlaceUpdateReady", "status": "True"}], None),
    ],
)
def test_readiness_gates(conditions, message):
    pod = gated_pod("InPlaceUpdateReady", conditions=conditions)
    assert readiness_gate_problem(pod, conditions) == message
    ready = by_type(
        kubelet_conditions(pod, sandbox_ready=True, init_containers=[], containers=[READY], phase="Running")
    )["Ready"]
    assert ready["status"] == ("True" if message is None else "False")
    if message:
        assert ready["reason"] == "ReadinessGatesNotReady"
        assert ready["message"] == message


def test_incomplete_init_containers():
    init = ContainerView("init", ready=False, started=True)
    conditions = by_type(
        kubelet_conditions(
            gated_pod(), sandbox_ready=True, init_containers=[init], containers=[], phase="Pending"
        )
    )
    assert conditions["Initialized"]["message"] == "containers with incomplete status: [init]"
    assert conditions["Initialized"]["reason"] == "ContainersNotInitialized"


def test_completed_pod_is_not_ready_with_pod_completed():
    done = ContainerView("app", ready=False, started=False, terminated=True)
    conditions = by_type(
        kubelet_conditions(
            gated_pod(), sandbox_ready=False, init_containers=[], containers=[done], phase="Succeeded"
        )
    )
    assert conditions["Ready"]["reason"] == "PodCompleted"
    assert conditions["Initialized"]["status"] == "True"


def test_merge_keeps_foreign_conditions_and_transition_times():
    existing = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"},
        {"type": "Ready", "status": "False", "lastTransitionTime": "t0"},
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": "t0"},
        {"type": "InPlaceUpdateReady", "status": "True", "lastTransitionTime": "t0"},
    ]
    owned = [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}]
    merged = by_type(merge_conditions(existing, owned, "t1"))
    assert merged["Ready"]["lastTransitionTime"] == "t1"
    assert merged["ContainersReady"]["lastTransitionTime"] == "t0"
    assert merged["PodScheduled"] == existing[0]
    assert merged["InPlaceUpdateReady"]["status"] == "True"


@pytest.mark.parametrize(
    ("policy", "containers", "phase"),
    [
        ("Always", [ContainerView("a", False, False)], "Pending"),
        ("Always", [ContainerView("a", True, True)], "Running"),
        ("Always", [ContainerView("a", False, False, terminated=True)], "Running"),
        ("Never", [ContainerView("a", False, False, terminated=True)], "Succeeded"),
        ("Never", [ContainerView("a", False, False, terminated=True, exit_code=1)], "Failed"),
        ("OnFailure", [ContainerView("a", False, False, terminated=True, exit_code=1)], "Running"),
        (
            "Never",
            [ContainerView("a", False, False, terminated=True), ContainerView("b", True, True)],
            "Running",
        ),
    ],
)
def test_phase(policy, containers, phase):
    assert pod_phase(policy, initialized=True, init_failed=False, containers=containers) == phase


def test_phase_pending_until_initialized():
    assert pod_phase("Always", initialized=False, init_failed=False, containers=[READY]) == "Pending"
