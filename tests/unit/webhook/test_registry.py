"""The webhook registry: handler modules register their paths, and the table stays consistent."""

from __future__ import annotations

import pytest

from kruise.api import features
from kruise.api.apisets import API_SETS
from kruise.api.features import FeatureGates
from kruise.webhook import paths, registry
from kruise.webhook.admission import allow
from kruise.webhook.configurations import mutating_configuration, validating_configuration
from kruise.webhook.context import WebhookContext


async def _allow(_req: object) -> object:
    return allow()


def _reg(name: str, *route: str, fallback: bool = False) -> registry.Registration:
    return registry.Registration(name, route, lambda _ctx: _allow, fallback=fallback)


def test_every_registered_path_is_answered_by_exactly_one_registration() -> None:
    found = registry.discover()
    every = [path for reg in found for path in reg.paths]
    assert len(every) == len(set(every))
    assert paths.POD_MUTATE in every and paths.NAMESPACE in every


def test_two_registrations_of_one_path_are_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="/x is registered by both a and b"):
        registry.resolve([_reg("a", "/x"), _reg("b", "/x")])


def test_a_repeated_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"repeated: \['a'\]"):
        registry.resolve([_reg("a", "/x"), _reg("a", "/y")])


def test_a_fallback_gives_way_to_a_registration_of_its_path() -> None:
    chosen = registry.resolve([_reg("generic", "/x", "/y", fallback=True), _reg("special", "/x", "/y")])
    assert [r.name for r in chosen] == ["special"]


def test_concern_modules_replace_the_generic_kind_webhooks() -> None:
    names = {r.name for r in registry.discover()}
    assert "validate SidecarSet.apps.kruise.io" in names
    assert "validate SidecarSet.apps.kruise.io (generic)" not in names
    assert "validate CloneSet.apps.kruise.io (generic)" in names


def test_gated_registrations_disappear_when_their_gate_is_off() -> None:
    gated = [r for r in registry.discover() if r.gates]
    assert gated, "at least the pod webhook is gated"
    for reg in gated:
        for gate in reg.gates:
            off = WebhookContext(gates=FeatureGates({gate: False}, env={}))
            on = WebhookContext(gates=FeatureGates({g: True for g in reg.gates}, env={}))
            assert not set(reg.paths) & set(registry.routes(off)), (reg.name, gate)
            assert set(reg.paths) <= set(registry.routes(on)), reg.name


def test_pod_webhook_gate_off_drops_only_the_pod_mutation() -> None:
    on = set(registry.routes(WebhookContext(gates=FeatureGates({features.POD_WEBHOOK: True}, env={}))))
    off = set(registry.routes(WebhookContext(gates=FeatureGates({features.POD_WEBHOOK: False}, env={}))))
    assert on - off == {paths.POD_MUTATE}


def _entry_paths(api_set: str, served: set[str] | None = None) -> set[str]:
    hooks = [
        *mutating_configuration(api_set=api_set, served=served)["webhooks"],
        *validating_configuration(api_set=api_set, served=served)["webhooks"],
    ]
    return {hook["clientConfig"]["service"]["path"] for hook in hooks}


@pytest.mark.parametrize("api_set", sorted(API_SETS))
def test_configurations_list_exactly_the_registered_webhooks(api_set: str) -> None:
    registered = registry.webhooks()
    hooks = [
        *mutating_configuration(api_set=api_set)["webhooks"],
        *validating_configuration(api_set=api_set)["webhooks"],
    ]
    assert sorted(h["name"] for h in hooks) == sorted(w.name for w in registered)
    by_name = {w.name: w for w in registered}
    for hook in hooks:
        spec = by_name[hook["name"]]
        assert hook["clientConfig"]["service"]["path"] == spec.path
        assert hook["rules"][0]["operations"] == list(spec.operations)
        assert hook["failurePolicy"] == spec.failure_policy
    assert _entry_paths(api_set) <= {path for reg in registry.discover() for path in reg.paths}


def test_a_webhook_outside_its_registration_paths_is_refused() -> None:
    spec = registry.WebhookSpec("vx.kb.io", "/validate-y", ("xs",), ("CREATE",))
    with pytest.raises(ValueError, match=r"webhook vx\.kb\.io path /validate-y is not one it registers"):
        registry.Registration("x", ("/validate-x",), lambda _ctx: _allow, webhooks=(spec,))


def test_a_repeated_webhook_name_is_refused() -> None:
    def reg(name: str, path: str) -> registry.Registration:
        spec = registry.WebhookSpec("vx.kb.io", path, ("xs",), ("CREATE",))
        return registry.Registration(name, (path,), lambda _ctx: _allow, webhooks=(spec,))

    with pytest.raises(ValueError, match=r"entry names must be unique, repeated: \['vx.kb.io'\]"):
        registry.resolve([reg("a", "/validate-a"), reg("b", "/validate-b")])


def test_configurations_follow_what_the_registry_serves() -> None:
    """Served with every source present and the gates as given, the configurations keep exactly the
    entries whose path the registry answers (a gate off removes its webhook from them)."""
    gates = FeatureGates({features.POD_WEBHOOK: False}, env={})
    served = set(registry.routes(WebhookContext(gates=gates)))
    kept = _entry_paths(next(iter(sorted(API_SETS))), served)
    assert paths.POD_MUTATE not in kept
    assert kept == _entry_paths(next(iter(sorted(API_SETS)))) & served
