"""What every controller is given by the manager: one client, shared informers, gates, recorders.

A controller package never builds its own client or informers: sharing one informer per resource is
what keeps memory flat as controllers are added, and building everything from a context makes each
controller testable against the emulator without the process around it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kruise.api.features import FeatureGates
from kruise.control.common.inplace.serverversion import should_resize_through_subresource
from kruise.kube.client import Client, ServerVersion
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Controller
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import EXPECTATIONS_TIMEOUT
from kruise.kube.informer import SharedInformerFactory

DEFAULT_WORKERS = 3


@dataclass
class ManagerContext:
    client: Client
    informers: SharedInformerFactory
    feature_gates: FeatureGates
    namespace: str = "kruise-system"
    """The namespace kruise itself runs in (POD_NAMESPACE upstream)."""
    workers: Mapping[str, int] = field(default_factory=dict)
    """Per-controller worker counts by controller name; missing names get DEFAULT_WORKERS."""
    clock: Clock = field(default_factory=RealClock)
    host: str = ""
    nodeimage_creation_delay: float = 30.0
    """Seconds after a Node turns Ready before its NodeImage is created (`--nodeimage-creation-delay`)."""
    assign_bcj_pods_by_scheduler: bool = True
    """BroadcastJob pods bound by node affinity through the scheduler, else by spec.nodeName
    (`--assign-bcj-pods-by-scheduler`)."""
    expectation_timeout: float = EXPECTATIONS_TIMEOUT
    """Seconds expectations wait for the informer before a controller trusts its cache again
    (`--expectation-timeout`, upstream's 5 min)."""
    unhandled_kinds: Mapping[str, str] = field(default_factory=dict)
    """Kruise kinds (`Kind.group`) no running controller reconciles, with why; set by the Manager."""
    server_version: ServerVersion | None = None
    """The apiserver's version, read once at start (`Manager.read_server_version`); None when unread."""
    _recorders: dict[str, EventRecorder] = field(default_factory=dict)

    @property
    def resize_subresource(self) -> bool:
        """In-place cpu/memory changes go through `pods/resize` (server 1.32+) rather than in the pod
        object write; an unread or unparsable version is the pre-1.32 write, as upstream's parse failure."""
        version = self.server_version
        return version is not None and should_resize_through_subresource(version.git_version)

    def workers_for(self, controller: str) -> int:
        return self.workers.get(controller, DEFAULT_WORKERS)

    def recorder(self, component: str) -> EventRecorder:
        """One recorder per component (upstream names them `<kind>-controller`), stopped by the manager."""
        recorder = self._recorders.get(component)
        if recorder is None:
            recorder = EventRecorder(self.client, component, self.host, clock=self.clock)
            self._recorders[component] = recorder
        return recorder

    @property
    def recorders(self) -> list[EventRecorder]:
        return list(self._recorders.values())


@dataclass(frozen=True)
class ControllerSetup:
    """How the manager finds a controller: each `kruise.manager.controllers.<pkg>` exposes `SETUP`.

    `build` registers informers on `ctx.informers` and returns the wired `Controller`; the manager
    then starts the informers, waits for their sync, and starts the controllers — only while leading.
    `gate`, when set, names the feature gate that must be on for the controller to run.
    `pod_fields` are the pod paths it reads from the pod cache.
    `kinds` are the Kruise kinds (`Kind.group`) it reconciles: a kind whose controller does not run gets
    a Warning event on each object instead of silence (`controllers/unhandled`).
    """

    name: str
    build: Callable[[ManagerContext], Controller]
    gate: str | None = None
    kinds: tuple[str, ...] = ()
    pod_fields: tuple[str, ...] = ()
    """The pod fields the controller reads from the shared pod cache (`kruise.manager.cachefields`):
    the cache keeps the union over the running controllers and drops the rest, so a field read but
    not declared here is missing in production and fails the controller's tests (the cache guard)."""

    def enabled(self, gates: FeatureGates) -> bool:
        return self.gate is None or gates.enabled(self.gate)


def unhandled_kinds(
    all_kinds: Sequence[str], setups: Sequence[ControllerSetup], running: Sequence[ControllerSetup]
) -> dict[str, str]:
    """Each Kruise kind no running controller reconciles, mapped to the reason a user can act on."""
    running_kinds = {kind for setup in running for kind in setup.kinds}
    reasons: dict[str, str] = {}
    for setup in setups:
        if setup in running:
            continue
        why = (
            f"its feature gate {setup.gate} is off (--feature-gates)"
            if setup.gate
            else "it is disabled (--controllers)"
        )
        for kind in setup.kinds:
            if kind not in running_kinds:
                reasons[kind] = f"controller {setup.name} of kruise-manager does not run: {why}"
    for kind in all_kinds:
        if kind not in running_kinds and kind not in reasons:
            reasons[kind] = "kruise-py has no controller for this kind yet"
    return reasons
