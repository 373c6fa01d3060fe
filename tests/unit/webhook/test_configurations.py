"""The webhook configuration objects and their rebuild for this process."""

from __future__ import annotations

import base64

from kruise.webhook import registry
from kruise.webhook.certsecret import ConfigurationPatcher
from kruise.webhook.configurations import (
    ClientTarget,
    mutating_configuration,
    validating_configuration,
)
from tests.kit.webhook import context

SERVED = frozenset(registry.routes(context()))


def _by_name(config: dict) -> dict[str, dict]:
    return {w["name"]: w for w in config["webhooks"]}


def test_every_configured_path_has_a_handler_when_filtered():
    for config in (mutating_configuration(served=set(SERVED)), validating_configuration(served=set(SERVED))):
        for hook in config["webhooks"]:
            assert hook["clientConfig"]["service"]["path"] in SERVED


def test_unserved_entries_are_dropped_but_kept_for_helm():
    full = _by_name(validating_configuration())
    served = _by_name(validating_configuration(served=set(SERVED)))
    assert "vpod.kb.io" in full and "vpod.kb.io" not in served  # PUB checks are not served yet


def test_upstream_shapes():
    mutating = mutating_configuration(ClientTarget(namespace="kruise"), b"CA")
    assert mutating["metadata"]["name"] == "kruise-mutating-webhook-configuration"
    hooks = _by_name(mutating)
    pod = hooks["mpod.kb.io"]
    assert pod["clientConfig"]["service"] == {
        "namespace": "kruise", "name": "kruise-webhook-service", "port": 443, "path": "/mutate-pod",
    }  # fmt: skip
    assert pod["clientConfig"]["caBundle"] == base64.b64encode(b"CA").decode()
    assert pod["rules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}
    ]
    exprs = pod["namespaceSelector"]["matchExpressions"]
    assert {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]} in exprs
    assert (
        hooks["mcloneset.kb.io"]["clientConfig"]["service"]["path"]
        == "/mutate-apps-kruise-io-v1alpha1-cloneset"
    )
    assert all(h["failurePolicy"] == "Fail" and h["sideEffects"] == "None" for h in hooks.values())

    validating = _by_name(validating_configuration())
    assert validating["vcloneset.kb.io"]["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]
    ns = validating["vnamespace.kb.io"]
    assert ns["failurePolicy"] == "Ignore"
    assert ns["objectSelector"] == {
        "matchExpressions": [{"key": "policy.kruise.io/delete-protection", "operator": "Exists"}]
    }
    assert ns["rules"][0]["operations"] == ["DELETE"]


def test_url_mode():
    config = mutating_configuration(ClientTarget(url="https://127.0.0.1:9876/"))
    assert _by_name(config)["mpod.kb.io"]["clientConfig"] == {"url": "https://127.0.0.1:9876/mutate-pod"}


def test_rebuild_keeps_a_template_and_restores_ca_after_a_reset():
    patcher = ConfigurationPatcher(client=None, target=ClientTarget(), served=SERVED)  # type: ignore[arg-type]
    chart = validating_configuration()  # as Helm would apply it: every entry, no caBundle
    first = patcher.rebuild(chart, b"CA1")
    assert "template" in first["metadata"]["annotations"]
    assert {w["name"] for w in first["webhooks"]} == {
        w["name"] for w in validating_configuration(served=set(SERVED))["webhooks"]
    }
    assert all(w["clientConfig"]["caBundle"] == base64.b64encode(b"CA1").decode() for w in first["webhooks"])
    reset = {
        **first,
        "webhooks": [
            {**w, "clientConfig": {"service": w["clientConfig"]["service"]}} for w in first["webhooks"]
        ],
    }
    again = patcher.rebuild(reset, b"CA1")
    assert again == first
    assert patcher.rebuild(first, b"CA1") == first  # steady state: nothing to write


def test_pod_deletion_and_eviction_are_registered_as_upstream():
    """WorkloadSpread and PUB book pod DELETEs and pods/eviction CREATEs: upstream's vpod.kb.io
    (pods UPDATE, DELETE) and vpodeviction.kb.io (pods/eviction CREATE), both failurePolicy Fail."""
    hooks = _by_name(validating_configuration())
    for name, resource, operations in (
        ("vpod.kb.io", "pods", ["UPDATE", "DELETE"]),
        ("vpodeviction.kb.io", "pods/eviction", ["CREATE"]),
    ):
        hook = hooks[name]
        assert hook["clientConfig"]["service"]["path"] == "/validate-pod"
        assert hook["rules"] == [
            {"apiGroups": [""], "apiVersions": ["v1"], "resources": [resource], "operations": operations}
        ]
        assert hook["failurePolicy"] == "Fail"


def test_an_emptied_template_is_reseeded_from_the_webhooks_helm_wrote():
    """`helm upgrade --set webhookConfiguration.timeoutSeconds=10` patches every hook's timeout and, since
    the chart renders `template: ""`, clears the stored template; the rebuild must keep the new timeout
    (not revert to the install's from a stale template) and store it as the template."""
    patcher = ConfigurationPatcher(client=None, target=ClientTarget(), served=SERVED)  # type: ignore[arg-type]
    chart = validating_configuration()
    chart["metadata"]["annotations"] = {"template": ""}  # as the chart renders it
    installed = patcher.rebuild(chart, b"CA1")
    assert {w["timeoutSeconds"] for w in installed["webhooks"]} == {30}
    assert installed["metadata"]["annotations"]["template"]

    upgraded = {
        **installed,
        "metadata": {**installed["metadata"], "annotations": {"template": ""}},
        "webhooks": [{**w, "timeoutSeconds": 10} for w in installed["webhooks"]],
    }
    rebuilt = patcher.rebuild(upgraded, b"CA1")
    assert {w["timeoutSeconds"] for w in rebuilt["webhooks"]} == {10}
    assert patcher.rebuild(rebuilt, b"CA1") == rebuilt  # the new template holds: nothing more to write

    # with the template left in place (not a chart upgrade), the stored webhooks win, as upstream
    edited = {**installed, "webhooks": [{**w, "timeoutSeconds": 5} for w in installed["webhooks"]]}
    assert {w["timeoutSeconds"] for w in patcher.rebuild(edited, b"CA1")["webhooks"]} == {30}
