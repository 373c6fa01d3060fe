"""Pod-template defaulting of workloads obeys gates TemplateNoDefaults and
DefaultHostNetworkHostPortsInPodTemplates, as upstream's mutating webhooks do.

TemplateNoDefaults off (default): the template (and claim templates) get the pod defaults on
CREATE, and on UPDATE only when ``spec.template`` changed. On: never. DefaultHostNetworkHostPorts
InPodTemplates off (default): a hostNetwork template keeps hostPort unset; on: hostPort follows
containerPort. The non-template defaults (replicas, strategies) are applied either way.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import (
    DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES,
    TEMPLATE_NO_DEFAULTS,
    WITHOUT_EFFECT,
    FeatureGates,
)
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

POD = {
    "metadata": {"labels": {"app": "demo"}},
    "spec": {
        "hostNetwork": True,
        "restartPolicy": "Always",
        "containers": [{"name": "main", "image": "nginx:alpine", "ports": [{"containerPort": 8080}]}],
    },
}
JOB_POD = {**POD, "spec": {**POD["spec"], "restartPolicy": "OnFailure"}}
SELECTOR = {"matchLabels": {"app": "demo"}}
CLAIM = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}


def _pod_spec(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    spec = obj["spec"]
    if kind == "UnitedDeployment":
        return spec["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]
    if kind == "AdvancedCronJob":
        return spec["template"]["broadcastJobTemplate"]["spec"]["template"]["spec"]
    return spec["template"]["spec"]


# kind, version, resource, spec, a non-template default the webhook sets whatever the gates
WORKLOADS = [
    (
        "CloneSet",
        "v1alpha1",
        "clonesets",
        {"selector": SELECTOR, "template": POD, "volumeClaimTemplates": [CLAIM]},
        ("revisionHistoryLimit", 10),
    ),
    (
        "StatefulSet",
        "v1beta1",
        "statefulsets",
        {"selector": SELECTOR, "template": POD, "volumeClaimTemplates": [CLAIM]},
        ("revisionHistoryLimit", 10),
    ),
    ("BroadcastJob", "v1alpha1", "broadcastjobs", {"template": JOB_POD}, ("parallelism", 2147483647)),
    (
        "UnitedDeployment",
        "v1alpha1",
        "uniteddeployments",
        {
            "selector": SELECTOR,
            "template": {
                "statefulSetTemplate": {
                    "metadata": {"labels": {"app": "demo"}},
                    "spec": {"selector": SELECTOR, "template": POD, "volumeClaimTemplates": [CLAIM]},
                }
            },
        },
        ("revisionHistoryLimit", 10),
    ),
    (
        "AdvancedCronJob",
        "v1alpha1",
        "advancedcronjobs",
        {"schedule": "*/1 * * * *", "template": {"broadcastJobTemplate": {"spec": {"template": JOB_POD}}}},
        ("concurrencyPolicy", "Allow"),
    ),
]


def _claims(obj: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    if kind == "UnitedDeployment":
        return obj["spec"]["template"]["statefulSetTemplate"]["spec"]["volumeClaimTemplates"]
    return obj["spec"].get("volumeClaimTemplates") or []


def _request(
    op: str, kind: str, version: str, resource: str, obj: dict[str, Any], old: dict[str, Any] | None = None
) -> AdmissionRequest:
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": version, "kind": kind},
            "resource": {"group": "apps.kruise.io", "version": version, "resource": resource},
            "name": "demo",
            "namespace": "default",
            "operation": op,
            "object": obj,
            "oldObject": old,
        }
    )


def _object(kind: str, version: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"apps.kruise.io/{version}",
        "kind": kind,
        "metadata": {"name": "demo", "namespace": "default"},
        "spec": copy.deepcopy(spec),
    }


async def _mutate(gates: dict[str, bool], req: AdmissionRequest, kind: str, version: str) -> dict[str, Any]:
    routes = registry.routes(context(gates=FeatureGates(gates, env={})))
    decision = await routes[f"/mutate-apps-kruise-io-{version}-{kind.lower()}"](req)
    assert decision.allowed, decision.message
    assert decision.mutated is not None
    return decision.mutated


def test_gates_are_off_by_default_and_have_effect() -> None:
    gates = FeatureGates(env={})
    for name in (TEMPLATE_NO_DEFAULTS, DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES):
        assert not gates.enabled(name)
        assert name not in WITHOUT_EFFECT


@pytest.mark.parametrize(("kind", "version", "resource", "spec", "other"), WORKLOADS)
async def test_create_defaults_the_template_unless_template_no_defaults(
    kind, version, resource, spec, other
) -> None:
    obj = _object(kind, version, spec)
    out = await _mutate({}, _request("CREATE", kind, version, resource, obj), kind, version)
    container = _pod_spec(out, kind)["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert _pod_spec(out, kind)["schedulerName"] == "default-scheduler"
    assert all(c["spec"]["volumeMode"] == "Filesystem" for c in _claims(out, kind))

    off = await _mutate(
        {TEMPLATE_NO_DEFAULTS: True}, _request("CREATE", kind, version, resource, obj), kind, version
    )
    assert _pod_spec(off, kind) == _pod_spec(obj, kind)
    assert _claims(off, kind) == _claims(obj, kind)
    field, value = other
    assert off["spec"][field] == value  # the workload's own defaults still apply


@pytest.mark.parametrize(("kind", "version", "resource", "spec", "other"), WORKLOADS)
async def test_update_defaults_the_template_only_when_it_changed(
    kind, version, resource, spec, other
) -> None:
    old = _object(kind, version, spec)
    unchanged = copy.deepcopy(old)
    unchanged["metadata"]["labels"] = {"edited": "yes"}
    out = await _mutate({}, _request("UPDATE", kind, version, resource, unchanged, old), kind, version)
    assert _pod_spec(out, kind) == _pod_spec(old, kind)
    assert _claims(out, kind) == _claims(old, kind)

    changed = copy.deepcopy(old)
    _pod_spec(changed, kind)["containers"][0]["image"] = "nginx:1.27"
    out = await _mutate({}, _request("UPDATE", kind, version, resource, changed, old), kind, version)
    assert _pod_spec(out, kind)["containers"][0]["terminationMessagePolicy"] == "File"

    out = await _mutate(
        {TEMPLATE_NO_DEFAULTS: True}, _request("UPDATE", kind, version, resource, changed, old), kind, version
    )
    assert _pod_spec(out, kind) == _pod_spec(changed, kind)


@pytest.mark.parametrize(("kind", "version", "resource", "spec", "other"), WORKLOADS)
@pytest.mark.parametrize(("gate", "host_port"), [(False, None), (True, 8080)])
async def test_host_network_host_ports_follow_the_gate(
    kind, version, resource, spec, other, gate, host_port
) -> None:
    obj = _object(kind, version, spec)
    out = await _mutate(
        {DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES: gate},
        _request("CREATE", kind, version, resource, obj),
        kind,
        version,
    )
    port = _pod_spec(out, kind)["containers"][0]["ports"][0]
    assert port.get("hostPort") == host_port
    assert port["protocol"] == "TCP"
