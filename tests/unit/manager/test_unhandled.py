"""Which kinds are unhandled and why; one warning per object generation."""

from __future__ import annotations

from kruise.manager.context import ControllerSetup, unhandled_kinds
from kruise.manager.controllers.unhandled.reconciler import UnhandledReconciler
from tests.kit import FakeInformer, RecordingEventRecorder


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


def unhandled(uid: str, generation: int) -> dict:
    return {"metadata": {"name": "a", "namespace": "ns", "uid": uid, "generation": generation}}


async def test_one_warning_per_generation_and_again_after_recreation() -> None:
    informer, recorder = FakeInformer(), RecordingEventRecorder()
    reconciler = UnhandledReconciler(recorder, {"E.g": informer}, {"E.g": "no controller yet"})  # type: ignore[arg-type]
    informer.add(unhandled(uid="1", generation=1))
    await reconciler.reconcile("E.g:ns/a")
    await reconciler.reconcile("E.g:ns/a")  # status or label change: same generation
    assert [(e.involved["name"], e.type, e.reason) for e in recorder.events] == [
        ("a", "Warning", "NoController")
    ]
    informer.add(unhandled(uid="1", generation=2))
    await reconciler.reconcile("E.g:ns/a")
    assert len(recorder.events) == 2
    informer.remove("ns/a")
    await reconciler.reconcile("E.g:ns/a")
    informer.add(unhandled(uid="2", generation=2))
    await reconciler.reconcile("E.g:ns/a")
    assert len(recorder.events) == 3
