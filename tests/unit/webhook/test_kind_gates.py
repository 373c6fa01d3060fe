"""Kinds whose webhook refuses objects while their feature gate is off, as upstream does (403)."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImagePullJob",
    "metadata": {"name": "j", "namespace": "default"},
    "spec": {"image": "nginx:1.26", "completionPolicy": {"type": "Always"}},
}


def review(obj, operation="CREATE"):
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "ImagePullJob"},
            "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "imagepulljobs"},
            "namespace": "default",
            "operation": operation,
            "object": obj,
        }
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({}, "feature-gate ImagePullJobGate is not enabled"),
        ({"KruiseDaemon": False, "ImagePullJobGate": True}, "feature-gate KruiseDaemon is not enabled"),
    ],
)
async def test_image_pull_job_needs_its_gates(overrides, message):
    routes = registry.routes(context(gates=FeatureGates(overrides, env={})))
    decision = await routes["/validate-apps-kruise-io-v1alpha1-imagepulljob"](review(JOB))
    assert not decision.allowed and decision.code == 403 and decision.message == message


async def test_image_pull_job_allowed_with_gates_on():
    routes = registry.routes(context(gates=FeatureGates({"ImagePullJobGate": True}, env={})))
    assert (await routes["/validate-apps-kruise-io-v1alpha1-imagepulljob"](review(JOB))).allowed
