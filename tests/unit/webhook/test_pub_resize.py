"""`/validate-pod` under a PodUnavailableBudget: a pod UPDATE that only resizes containers in place
is the RESIZE operation (upstream 1.9). With InPlacePodVerticalScaling on, a PUB protecting only
UPDATE lets such a resize through without taking a slot, and a PUB listing RESIZE weighs it against
the budget; with the gate off, RESIZE is protected wherever UPDATE is. A change that restarts a
container (resizePolicy RestartContainer) stays an UPDATE.
"""

from __future__ import annotations

import copy

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.pub import BudgetKeeper
from kruise.webhook.routes import build_routes
from tests.kit import RecordingClient

NS = "shop"


class NoContents:
    def active_pods(self, namespace):
        return 0

    def bound_pvcs(self, namespace):
        return 0


class Source:
    def __init__(self, pub):
        self._pub = pub

    def pub(self, namespace, name):
        return self._pub if (namespace, name) == (NS, "web-pub") else None

    def pod(self, namespace, name):
        return None

    def in_namespace(self, namespace):
        return [self._pub]

    def workload_of(self, owner, namespace):
        return owner


def a_pub(operations, allowed=1):
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {
            "name": "web-pub",
            "namespace": NS,
            "uid": "pub-uid",
            "resourceVersion": "5",
            "annotations": {"kruise.io/pub-protect-operations": ",".join(operations)},
        },
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {
            "desiredAvailable": 2,
            "currentAvailable": 2 + allowed,
            "unavailableAllowed": allowed,
            "disruptedPods": {},
            "unavailablePods": {},
        },
    }


def a_pod(cpu="500m", *, policy="NotRequired"):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": NS,
            "labels": {"app": "web"},
            "annotations": {"kruise.io/related-pub": "web-pub"},
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "nginx:1.25",
                    "resources": {
                        "requests": {"cpu": cpu, "memory": "128Mi"},
                        "limits": {"cpu": "2", "memory": "1Gi"},
                    },
                    "resizePolicy": [
                        {"resourceName": "cpu", "restartPolicy": policy},
                        {"resourceName": "memory", "restartPolicy": "NotRequired"},
                    ],
                }
            ]
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def update_review(old, new):
    return AdmissionRequest.model_validate(
        {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": NS,
            "name": old["metadata"]["name"],
            "operation": "UPDATE",
            "object": new,
            "oldObject": old,
        }
    )


def validate_pod(pub, *, vertical_scaling):
    client = RecordingClient()
    client.put(PODUNAVAILABLEBUDGETS, pub)
    client.clear()
    gates = FeatureGates(
        {"PodUnavailableBudgetUpdateGate": True, "InPlacePodVerticalScaling": vertical_scaling}, env={}
    )
    budgets = BudgetKeeper(client, Source(pub), backoff=0.0)
    return client, build_routes(NoContents(), None, gates, budgets)[paths.POD_VALIDATE]


def recorded(client):
    pub = client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS)
    return pub["status"]


async def test_gate_on_resize_only_under_update_protection_takes_no_slot():
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=0), vertical_scaling=True)
    decision = await handle(update_review(a_pod("500m"), a_pod("1")))
    assert decision.allowed, decision.message
    assert client.writes == []


async def test_gate_on_resize_under_resize_protection_takes_a_slot():
    client, handle = validate_pod(a_pub(["UPDATE", "RESIZE"], allowed=1), vertical_scaling=True)
    decision = await handle(update_review(a_pod("500m"), a_pod("1")))
    assert decision.allowed, decision.message
    status = recorded(client)
    assert status["unavailableAllowed"] == 0
    assert set(status["disruptedPods"]) == {"web-0"} and status["unavailablePods"] == {}


async def test_gate_on_resize_under_resize_protection_refused_when_spent():
    client, handle = validate_pod(a_pub(["RESIZE"], allowed=0), vertical_scaling=True)
    decision = await handle(update_review(a_pod("500m"), a_pod("1")))
    assert not decision.allowed and decision.code == 403
    assert decision.message.endswith("pub unavailable allowed is negative")
    assert client.writes == []


async def test_gate_off_resize_is_protected_as_update():
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=0), vertical_scaling=False)
    decision = await handle(update_review(a_pod("500m"), a_pod("1")))
    assert not decision.allowed and decision.code == 403
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=1), vertical_scaling=False)
    assert (await handle(update_review(a_pod("500m"), a_pod("1")))).allowed
    assert set(recorded(client)["disruptedPods"]) == {"web-0"}  # checked as RESIZE, recorded so


@pytest.mark.parametrize("operations", [["UPDATE"], ["UPDATE", "RESIZE"]])
async def test_restart_container_policy_makes_it_an_update(operations):
    client, handle = validate_pod(a_pub(operations, allowed=0), vertical_scaling=True)
    decision = await handle(
        update_review(a_pod("500m", policy="RestartContainer"), a_pod("1", policy="RestartContainer"))
    )
    assert not decision.allowed and decision.code == 403
    client, handle = validate_pod(a_pub(operations, allowed=1), vertical_scaling=True)
    assert (
        await handle(
            update_review(a_pod("500m", policy="RestartContainer"), a_pod("1", policy="RestartContainer"))
        )
    ).allowed
    status = recorded(client)
    assert set(status["unavailablePods"]) == {"web-0"} and status["disruptedPods"] == {}


async def test_an_update_passes_a_pub_protecting_only_resize():
    """An image change is an UPDATE; a PUB protecting only RESIZE lets it through."""
    client, handle = validate_pod(a_pub(["RESIZE"], allowed=0), vertical_scaling=True)
    new = copy.deepcopy(a_pod("500m"))
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert (await handle(update_review(a_pod("500m"), new))).allowed
    assert client.writes == []
