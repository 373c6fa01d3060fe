"""The ImagePullJob mutating webhook adds the deletion-protection finalizer on CREATE only.

Upstream defaults with ``addProtection = operation == Create``: on UPDATE the controller removes
its own finalizer to let the job go, and re-adding it there would keep the job (and its
namespace) terminating forever.
"""

from __future__ import annotations

import copy

import pytest

from kruise.api.features import FeatureGates
from kruise.api.keys import FINALIZER_DELETION_PROTECTION
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

MUTATE = "/mutate-apps-kruise-io-v1alpha1-imagepulljob"
JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImagePullJob",
    "metadata": {"name": "j", "namespace": "default"},
    "spec": {"image": "nginx:1.26", "completionPolicy": {"type": "Always"}},
}


def _request(operation: str, obj: dict, old: dict | None = None) -> AdmissionRequest:
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "ImagePullJob"},
            "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "imagepulljobs"},
            "namespace": "default",
            "operation": operation,
            "object": obj,
            "oldObject": old,
        }
    )


def _finalizers(decision, original: dict) -> list[str]:
    assert decision.allowed
    obj = decision.mutated if decision.mutated is not None else original
    return obj["metadata"].get("finalizers") or []


@pytest.fixture
def mutate():
    return registry.routes(context(gates=FeatureGates({"ImagePullJobGate": True}, env={})))[MUTATE]


async def test_create_adds_the_protection_finalizer(mutate) -> None:
    decision = await mutate(_request("CREATE", copy.deepcopy(JOB)))
    assert _finalizers(decision, JOB) == [FINALIZER_DELETION_PROTECTION]


async def test_update_that_removes_the_finalizer_keeps_it_removed(mutate) -> None:
    old = copy.deepcopy(JOB)
    old["metadata"].update(
        finalizers=[FINALIZER_DELETION_PROTECTION], deletionTimestamp="2026-01-01T00:00:00Z"
    )
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = []
    decision = await mutate(_request("UPDATE", new, old))
    assert _finalizers(decision, new) == []


async def test_update_still_defaults_the_spec(mutate) -> None:
    new = copy.deepcopy(JOB)
    decision = await mutate(_request("UPDATE", new, copy.deepcopy(JOB)))
    assert decision.mutated is not None
    assert decision.mutated["spec"]["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}
    assert not decision.mutated["metadata"].get("finalizers")
