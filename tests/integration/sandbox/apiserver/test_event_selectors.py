"""Event field selectors as kube-apiserver 1.36 serves them: core/v1 Events select on
`involvedObject.*`, `reason`, `type`, `source`, `reportingComponent`; events.k8s.io/v1 Events on
`regarding.*`, `reason`, `type`, `reportingController` and `source` — and each refuses the
other's names with `field label not supported`."""

from __future__ import annotations

import json

import pytest


def core_event(name: str, kind: str, obj: str, reason: str, type_: str, component: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "ev"},
        "involvedObject": {"apiVersion": "v1", "kind": kind, "name": obj, "namespace": "ev"},
        "reason": reason,
        "type": type_,
        "message": f"{reason} {obj}",
        "source": {"component": component},
        "reportingComponent": f"{component}-reporter",
        "count": 1,
    }


def v1_event(name: str, kind: str, obj: str, reason: str, type_: str, controller: str) -> dict:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "ev"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "regarding": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": kind, "name": obj, "namespace": "ev"},
        "reason": reason,
        "type": type_,
        "note": f"{reason} {obj}",
        "action": "Update",
        "reportingController": controller,
        "reportingInstance": f"{controller}-1",
        "deprecatedSource": {"component": controller},
    }


@pytest.fixture
async def events(kubectl):
    await kubectl("create", "namespace", "ev")
    items = [
        core_event("c1", "Pod", "web-0", "Pulled", "Normal", "kubelet"),
        core_event("c2", "Pod", "web-1", "BackOff", "Warning", "kubelet"),
        core_event("c3", "Deployment", "web", "ScalingReplicaSet", "Normal", "deployment-controller"),
        v1_event("e1", "CloneSet", "cs", "SuccessfulCreate", "Normal", "cloneset-controller"),
        v1_event("e2", "CloneSet", "cs", "FailedCreate", "Warning", "cloneset-controller"),
        v1_event("e3", "Pod", "cs-abc", "SuccessfulUpdatePodInPlace", "Normal", "cloneset-controller"),
        v1_event("e4", "SidecarSet", "sc", "Updated", "Normal", "sidecarset-controller"),
    ]
    await kubectl("create", "-f", "-", stdin="\n---\n".join(json.dumps(item) for item in items))
    return kubectl


async def names(kubectl, resource: str, selector: str) -> set[str]:
    out = await kubectl("-n", "ev", "get", resource, "--field-selector", selector, "-o", "json")
    return {item["metadata"]["name"] for item in out.json()["items"]}


V1 = "events.v1.events.k8s.io"


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("regarding.kind=CloneSet", {"e1", "e2"}),
        ("regarding.kind=CloneSet,type=Warning", {"e2"}),
        ("regarding.name=cs-abc", {"e3"}),
        ("regarding.namespace=ev,regarding.kind!=CloneSet", {"e3", "e4"}),
        ("reason=Updated", {"e4"}),
        ("type=Normal,reportingController=cloneset-controller", {"e1", "e3"}),
        ("source=sidecarset-controller", {"e4"}),
        ("regarding.apiVersion=apps.kruise.io/v1alpha1,metadata.name=e1", {"e1"}),
    ],
)
async def test_events_v1_selectors(events, selector, expected):
    assert await names(events, V1, selector) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("involvedObject.kind=Pod", {"c1", "c2"}),
        ("involvedObject.kind=Pod,involvedObject.name=web-1", {"c2"}),
        ("involvedObject.namespace=ev,type=Normal", {"c1", "c3"}),
        ("reason=ScalingReplicaSet", {"c3"}),
        ("source=kubelet", {"c1", "c2"}),
        ("reportingComponent=deployment-controller-reporter", {"c3"}),
        ("involvedObject.apiVersion=v1,type!=Warning", {"c1", "c3"}),
    ],
)
async def test_core_event_selectors(events, selector, expected):
    assert await names(events, "events", selector) == expected


@pytest.mark.parametrize(
    ("resource", "label"),
    [
        (V1, "involvedObject.kind"),
        (V1, "reportingComponent"),
        ("events", "regarding.kind"),
        ("events", "note"),
    ],
)
async def test_the_other_api_names_are_refused(events, resource, label):
    result = await events("-n", "ev", "get", resource, "--field-selector", f"{label}=x", check=False)
    assert result.code != 0
    assert f"field label not supported: {label}" in result.err


async def test_kubectl_events_for_an_object(events):
    # `kubectl events --for` selects on involvedObject.kind/name of core Events
    out = (await events("-n", "ev", "events", "--for", "pod/web-1")).out
    lines = out.strip().splitlines()
    assert len(lines) == 2 and "BackOff" in lines[1] and "Pod/web-1" in lines[1]
