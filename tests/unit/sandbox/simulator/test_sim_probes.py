"""The kubelet's probe state machine: delays, periods, thresholds, startup gating."""

from __future__ import annotations

from kruise.sandbox.simulator.probes import ContainerProbes


def scale(seconds: float) -> float:
    return seconds / 10  # speed 10


def exec_probe(**kw) -> dict:
    return {"exec": {"command": ["check"]}, **kw}


class Script:
    """Answers exec probes from a mutable verdict and counts the calls."""

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.calls = 0

    def __call__(self, command: list[str]) -> tuple[bool, str]:
        assert command == ["check"]
        self.calls += 1
        return self.ok, "" if self.ok else "check failed"


def test_readiness_waits_for_initial_delay_then_follows_thresholds():
    probes = ContainerProbes.create(
        {"readinessProbe": exec_probe(initialDelaySeconds=5, periodSeconds=2, failureThreshold=2)},
        100.0,
        scale,
    )
    script = Script()
    assert not probes.ready()
    assert probes.run_due(100.4, script) == [] and script.calls == 0
    assert probes.next_wake() == 100.5
    [outcome] = probes.run_due(100.5, script)
    assert outcome.ok and probes.ready()
    script.ok = False
    probes.run_due(100.7, script)
    assert probes.ready()  # one failure is below failureThreshold 2
    [outcome] = probes.run_due(100.9, script)
    assert not outcome.ok and outcome.output == "check failed"
    assert not probes.ready() and probes.killing() is None  # readiness never kills


def test_non_exec_probes_are_asked_once():
    probes = ContainerProbes.create(
        {"readinessProbe": {"httpGet": {"port": 80}}, "livenessProbe": {"tcpSocket": {"port": 80}}},
        0.0,
        scale,
    )
    script = Script()
    assert len(probes.run_due(0.0, script)) == 1 and probes.ready()
    assert probes.next_wake() is None and script.calls == 0


def test_liveness_failure_threshold_asks_for_a_restart():
    probes = ContainerProbes.create(
        {"livenessProbe": exec_probe(periodSeconds=1, failureThreshold=3)}, 0.0, scale
    )
    script = Script(ok=False)
    for step in range(3):
        assert probes.killing() is None
        probes.run_due(step * 0.1, script)
    assert probes.killing().kind == "liveness"
    assert probes.ready()  # no readiness probe: ready while running


def test_startup_probe_gates_started_readiness_and_liveness():
    probes = ContainerProbes.create(
        {
            "startupProbe": exec_probe(periodSeconds=1, failureThreshold=2),
            "readinessProbe": exec_probe(),
            "livenessProbe": exec_probe(),
        },
        0.0,
        scale,
    )
    script = Script(ok=False)
    [outcome] = probes.run_due(0.0, script)
    assert outcome.prober.kind == "startup" and not probes.started() and not probes.ready()
    script.ok = True
    kinds = [o.prober.kind for o in probes.run_due(0.1, script)]
    assert kinds == ["startup", "readiness", "liveness"]
    assert probes.started() and probes.ready()


def test_startup_failure_threshold_asks_for_a_restart():
    probes = ContainerProbes.create(
        {"startupProbe": exec_probe(periodSeconds=1, failureThreshold=2)}, 0.0, scale
    )
    script = Script(ok=False)
    probes.run_due(0.0, script)
    probes.run_due(0.1, script)
    assert probes.killing().kind == "startup"
