"""Lifecycle hook matching and state patches."""

from __future__ import annotations

import pytest

from kruise.control.common import lifecycle
from tests.kit.control_builders import NOW, build_pod

HOOK = {"labelsHandler": {"hold": "true"}, "finalizersHandler": ["example.com/guard"]}


@pytest.mark.parametrize(
    ("labels", "finalizers", "hooked", "all_hooked"),
    [
        ({}, [], False, False),
        ({"hold": "true"}, [], True, False),
        ({"hold": "false"}, [], False, False),
        ({}, ["example.com/guard"], True, False),
        ({"hold": "true"}, ["example.com/guard"], True, True),
    ],
)
def test_hook_matching(labels: dict, finalizers: list, hooked: bool, all_hooked: bool) -> None:
    pod = build_pod(labels=labels, finalizers=finalizers)
    assert lifecycle.is_hooked(HOOK, pod) is hooked
    assert lifecycle.is_all_hooked(HOOK, pod) is all_hooked
    assert not lifecycle.is_hooked(None, pod) and not lifecycle.is_all_hooked(None, pod)


def test_state_patch_sets_label_and_timestamp() -> None:
    patch = lifecycle.state_patch("PreparingDelete", NOW)
    assert patch["metadata"]["labels"] == {"lifecycle.apps.kruise.io/state": "PreparingDelete"}
    assert patch["metadata"]["annotations"] == {"lifecycle.apps.kruise.io/timestamp": "2026-01-01T12:00:00Z"}
    with pytest.raises(ValueError, match="unknown lifecycle state 'Bogus'"):
        lifecycle.state_patch("Bogus", NOW)


def test_pre_delete_hook_decisions() -> None:
    spec = {"preDelete": HOOK}
    held = build_pod(labels={"hold": "true"})
    assert lifecycle.deletion_needs_preparing(spec, held)
    assert not lifecycle.deletion_allowed(spec, held)
    preparing = build_pod(labels={"hold": "true", "lifecycle.apps.kruise.io/state": "PreparingDelete"})
    assert not lifecycle.deletion_needs_preparing(spec, preparing)
    released = build_pod(labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})
    assert lifecycle.deletion_allowed(spec, released)
    assert lifecycle.pod_state(released) == "PreparingDelete" and lifecycle.pod_state(build_pod()) == ""
