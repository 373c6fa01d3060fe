"""`/validate-pod` under a PodUnavailableBudget: a pod UPDATE that only resizes containers in place
is the RESIZE operation (upstream 1.9). With InPlacePodVerticalScaling on, a PUB protecting only
UPDATE lets such a resize through without taking a slot, and a PUB listing RESIZE weighs it against
the budget; with the gate off, RESIZE is protected wherever UPDATE is. A change that restarts a
container (resizePolicy RestartContainer) stays an UPDATE.
"""

from __future__ import annotations

from functools import partial

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.webhook import paths, registry
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.pub import BudgetKeeper
from tests.kit import RecordingClient
from tests.kit.pods import pod
from tests.kit.pubs import FakePubSource
from tests.kit.webhook import context

NS = "shop"


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


def main(cpu="500m", *, policy="NotRequired"):
    """The pod's one container: requesting `cpu`, resized in place for cpu unless `policy` says otherwise."""
    return {
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


# pod web-0, running and Ready, protected by PUB web-pub
protected_pod = partial(
    pod, "web-0", typed=True, namespace=NS, labels={"app": "web"},
    annotations={"kruise.io/related-pub": "web-pub"}, phase="Running", ready=True,
)  # fmt: skip


def cpu_resize(policy="NotRequired"):
    """The UPDATE review of web-0 raising its cpu request from 500m to 1."""
    return update_review(
        protected_pod(containers=[main("500m", policy=policy)]),
        protected_pod(containers=[main("1", policy=policy)]),
    )


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
    budgets = BudgetKeeper(client, FakePubSource(pub), backoff=0.0)
    return client, registry.routes(context(gates=gates, budgets=budgets))[paths.POD_VALIDATE]


def recorded(client):
    pub = client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS)
    return pub["status"]


async def test_gate_on_resize_only_under_update_protection_takes_no_slot():
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=0), vertical_scaling=True)
    decision = await handle(cpu_resize())
    assert decision.allowed, decision.message
    assert client.writes == []


async def test_gate_on_resize_under_resize_protection_takes_a_slot():
    client, handle = validate_pod(a_pub(["UPDATE", "RESIZE"], allowed=1), vertical_scaling=True)
    decision = await handle(cpu_resize())
    assert decision.allowed, decision.message
    status = recorded(client)
    assert status["unavailableAllowed"] == 0
    assert set(status["disruptedPods"]) == {"web-0"} and status["unavailablePods"] == {}


async def test_gate_on_resize_under_resize_protection_refused_when_spent():
    client, handle = validate_pod(a_pub(["RESIZE"], allowed=0), vertical_scaling=True)
    decision = await handle(cpu_resize())
    assert not decision.allowed and decision.code == 403
    assert decision.message.endswith("pub unavailable allowed is negative")
    assert client.writes == []


async def test_gate_off_resize_is_protected_as_update():
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=0), vertical_scaling=False)
    decision = await handle(cpu_resize())
    assert not decision.allowed and decision.code == 403
    client, handle = validate_pod(a_pub(["UPDATE"], allowed=1), vertical_scaling=False)
    assert (await handle(cpu_resize())).allowed
    assert set(recorded(client)["disruptedPods"]) == {"web-0"}  # checked as RESIZE, recorded so


@pytest.mark.parametrize("operations", [["UPDATE"], ["UPDATE", "RESIZE"]])
async def test_restart_container_policy_makes_it_an_update(operations):
    client, handle = validate_pod(a_pub(operations, allowed=0), vertical_scaling=True)
    decision = await handle(cpu_resize(policy="RestartContainer"))
    assert not decision.allowed and decision.code == 403
    client, handle = validate_pod(a_pub(operations, allowed=1), vertical_scaling=True)
    assert (await handle(cpu_resize(policy="RestartContainer"))).allowed
    status = recorded(client)
    assert set(status["unavailablePods"]) == {"web-0"} and status["disruptedPods"] == {}


async def test_an_update_passes_a_pub_protecting_only_resize():
    """An image change is an UPDATE; a PUB protecting only RESIZE lets it through."""
    client, handle = validate_pod(a_pub(["RESIZE"], allowed=0), vertical_scaling=True)
    new = protected_pod(containers=[{**main("500m"), "image": "nginx:1.26"}])
    assert (await handle(update_review(protected_pod(containers=[main("500m")]), new))).allowed
    assert client.writes == []
