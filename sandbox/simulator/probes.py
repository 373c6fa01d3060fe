"""Container probes of the simulated kubelet: startup, readiness and liveness.

Fake containers run no process, so only ``exec`` probes have someone to ask: they go through
the node runtime's ExecSync (``FakeRuntime.exec_handler`` scripts the answer, exit code 0 is a
success — the path kruise-daemon's PodProbeMarker probes take too). ``httpGet``, ``tcpSocket``
and ``grpc`` probes always succeed, so they are asked once and never again. Containers run as
real processes are "live": every probe is asked every period (``run_due_live``, with a check
that really connects, see ``liveprobe``).

Timing and thresholds follow the kubelet: the first probe after ``initialDelaySeconds`` (from
the container's start), then every ``periodSeconds``; ``successThreshold`` consecutive
successes make the result true and ``failureThreshold`` consecutive failures make it false.
Readiness starts false, liveness true; readiness and liveness wait until the startup probe
succeeded, and the container is ``started`` only then. A liveness or startup probe that
reaches its failure threshold gets the container killed and restarted per restartPolicy.
Every duration is in cluster seconds, scaled by the speed factor - except a live container's: a
real process starts and answers at its own pace whatever the speed, so its probes keep the
seconds its spec says (at speed 20 a 10 s liveness period would otherwise kill a Python process
before it listens).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Scale = Callable[[float], float]
Execute = Callable[[list[str]], tuple[bool, str]]  # exec command -> (success, output)
LiveCheck = Callable[["Prober"], Awaitable[tuple[bool, str]]]  # probe -> (success, output)

KINDS = ("startup", "readiness", "liveness")


def real_seconds(seconds: float) -> float:
    """A live container's probe durations: not divided by the speed factor."""
    return seconds


@dataclass
class Prober:
    """One probe of one container instance."""

    kind: str
    spec: Mapping[str, Any]
    next_at: float
    period: float
    result: bool
    successes: int = 0
    failures: int = 0
    failed: bool = False  # failureThreshold reached
    live: bool = False  # a real process answers every kind of probe

    @classmethod
    def create(
        cls, kind: str, spec: Mapping[str, Any], started_at: float, scale: Scale, live: bool = False
    ) -> Prober:
        initial = float(spec.get("initialDelaySeconds") or 0)
        return cls(
            kind=kind,
            spec=spec,
            next_at=started_at + scale(initial),
            period=scale(float(spec.get("periodSeconds") or 10)),
            result=kind == "liveness",
            live=live,
        )

    @property
    def is_exec(self) -> bool:
        return bool((self.spec.get("exec") or {}).get("command"))

    @property
    def settled(self) -> bool:
        """A non-exec probe cannot fail: liveness never needs asking, the others once."""
        if self.is_exec or self.live:
            return False
        return self.kind == "liveness" or self.result

    def record(self, ok: bool, now: float) -> None:
        self.next_at = now + self.period
        if ok:
            self.successes, self.failures = self.successes + 1, 0
            if self.successes >= int(self.spec.get("successThreshold") or 1):
                self.result, self.failed = True, False
        else:
            self.successes, self.failures = 0, self.failures + 1
            if self.failures >= int(self.spec.get("failureThreshold") or 3):
                self.result, self.failed = False, True


@dataclass
class ProbeOutcome:
    prober: Prober
    ok: bool
    output: str


@dataclass
class ContainerProbes:
    """The probes of one container instance, created when it starts."""

    probers: dict[str, Prober] = field(default_factory=dict)

    @classmethod
    def create(
        cls, spec: Mapping[str, Any], started_at: float, scale: Scale, live: bool = False
    ) -> ContainerProbes:
        if live:
            scale = real_seconds
        probers = {
            kind: Prober.create(kind, spec[f"{kind}Probe"], started_at, scale, live)
            for kind in KINDS
            if spec.get(f"{kind}Probe")
        }
        return cls(probers)

    def started(self) -> bool:
        startup = self.probers.get("startup")
        return startup is None or startup.result

    def ready(self) -> bool:
        readiness = self.probers.get("readiness")
        return self.started() and (readiness is None or readiness.result)

    def killing(self) -> Prober | None:
        """The liveness or startup probe that failed, if the container must be restarted."""
        return next((p for p in self.probers.values() if p.failed and p.kind != "readiness"), None)

    def _active(self) -> list[Prober]:
        if not self.started():
            return [self.probers["startup"]]
        return [p for kind, p in self.probers.items() if kind != "startup" and not p.settled]

    def run_due(self, now: float, execute: Execute) -> list[ProbeOutcome]:
        outcomes = []
        for prober in self._active():
            if prober.next_at > now:
                continue
            ok, output = execute(list(prober.spec["exec"]["command"])) if prober.is_exec else (True, "")
            prober.record(ok, now)
            outcomes.append(ProbeOutcome(prober, ok, output))
            if prober.kind == "startup" and prober.result:
                outcomes.extend(self.run_due(now, execute))  # readiness/liveness may be due already
        return outcomes

    async def run_due_live(self, now: float, check: LiveCheck) -> list[ProbeOutcome]:
        """``run_due`` for a real process: ``check(prober)`` asks it, whatever the probe's kind."""
        outcomes = []
        for prober in self._active():
            if prober.next_at > now:
                continue
            ok, output = await check(prober)
            prober.record(ok, now)
            outcomes.append(ProbeOutcome(prober, ok, output))
            if prober.kind == "startup" and prober.result:
                outcomes.extend(await self.run_due_live(now, check))
        return outcomes

    def next_wake(self) -> float | None:
        pending = [p.next_at for p in self._active()]
        return min(pending) if pending else None
