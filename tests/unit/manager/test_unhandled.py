"""Which kinds are unhandled and why; one warning per object generation."""

from __future__ import annotations

from kruise.manager.context import ControllerSetup, unhandled_kinds
from kruise.manager.controllers.unhandled.reconciler import UnhandledReconciler


def _setup(name: str, kinds: tuple[str, ...], gate: str | None = None) -> ControllerSetup:
    return ControllerSetup(name, lambda ctx: None, gate=gate, kinds=kinds)  # type: ignore[arg-type,return-value]


def test_unhandled_kinds_name_the_reason() -> None:
    clone = _setup("cloneset", ("CloneSet.apps.kruise.io",))
    ipj = _setup("imagepulljob", ("ImagePullJob.apps.kruise.io",), gate="ImagePullJobGate")
    sidecar = _setup("sidecarset", ("SidecarSet.apps.kruise.io",))
    kinds = ["CloneSet.apps.kruise.io", "ImagePullJob.apps.kruise.io", "SidecarSet.apps.kruise.io", "X.a"]
    reasons = unhandled_kinds(kinds, [clone, ipj, sidecar], [sidecar])
    assert set(reasons) == {"CloneSet.apps.kruise.io", "ImagePullJob.apps.kruise.io", "X.a"}
    assert reasons["CloneSet.apps.kruise.io"].endswith("it is disabled (--controllers)")
    assert "feature gate ImagePullJobGate is off" in reasons["ImagePullJob.apps.kruise.io"]
    assert reasons["X.a"] == "kruise-py has no controller for this kind yet"
    assert unhandled_kinds(kinds[:3], [clone, ipj, sidecar], [clone, ipj, sidecar]) == {}


class _Informer:
    def __init__(self) -> None:
        self.objects: dict[str, dict] = {}

    def get(self, key: str) -> dict | None:
        return self.objects.get(key)


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: dict, type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], type_, reason))


async def test_one_warning_per_generation_and_again_after_recreation() -> None:
    informer, recorder = _Informer(), _Recorder()
    reconciler = UnhandledReconciler(recorder, {"E.g": informer}, {"E.g": "no controller yet"})  # type: ignore[arg-type]
    informer.objects["ns/a"] = {"metadata": {"name": "a", "uid": "1", "generation": 1}}
    await reconciler.reconcile("E.g:ns/a")
    await reconciler.reconcile("E.g:ns/a")  # status or label change: same generation
    assert recorder.events == [("a", "Warning", "NoController")]
    informer.objects["ns/a"]["metadata"]["generation"] = 2
    await reconciler.reconcile("E.g:ns/a")
    assert len(recorder.events) == 2
    del informer.objects["ns/a"]
    await reconciler.reconcile("E.g:ns/a")
    informer.objects["ns/a"] = {"metadata": {"name": "a", "uid": "2", "generation": 2}}
    await reconciler.reconcile("E.g:ns/a")
    assert len(recorder.events) == 3
