"""Gates kruise-py accepts but does not act on are named at start, never silently ignored."""

from __future__ import annotations

import pytest
import structlog
from structlog.testing import capture_logs

from kruise.api.features import DEFAULT_GATES, WITHOUT_EFFECT, FeatureGates
from kruise.kube.logging import warn_gates_without_effect


def test_defaults_name_nothing():
    assert FeatureGates(env={}).without_effect() == []


@pytest.mark.parametrize("name", sorted(WITHOUT_EFFECT))
def test_a_gate_without_effect_set_away_from_its_default_is_named(name):
    default = DEFAULT_GATES[name].default
    gates = FeatureGates.from_flag(f"{name}={str(not default).lower()}", env={})
    assert gates.without_effect() == [name]
    with capture_logs() as logs:
        warn_gates_without_effect(structlog.get_logger("test"), gates)
    assert [(e["gate"], e["value"], e["log_level"]) for e in logs] == [(name, not default, "warning")]


def test_a_gate_that_works_is_not_named():
    spec = "ResourcesDeletionProtection=true,InPlaceWorkloadVerticalScaling=true"
    assert FeatureGates.from_flag(spec, env={}).without_effect() == []


def test_every_gate_without_effect_is_a_known_gate():
    assert DEFAULT_GATES.keys() >= WITHOUT_EFFECT
