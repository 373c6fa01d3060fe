"""Gate EnhancedLivenessProbe through the live kruise-webhook and kubectl: a CloneSet's pod that asks for
enhanced liveness is stored without its livenessProbe, kept in `apps.kruise.io/container-probe-context`."""

from __future__ import annotations

import json

import pytest

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "annotations": {"apps.kruise.io/using-enhanced-liveness": "true"},
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "name": "web",
                "uid": "5f1a0b52-0c0f-4f7e-9f55-2a4a2d1b7c11",
                "controller": True,
            }
        ],
    },
    "spec": {
        "containers": [
            {"name": "app", "image": "nginx", "livenessProbe": {"httpGet": {"path": "/health", "port": 80}}},
            {"name": "log", "image": "busybox"},
        ]
    },
}


@pytest.fixture
def live_webhook_feature_gates() -> str:
    return "EnhancedLivenessProbe=true"


async def test_the_liveness_probe_moves_into_the_annotation(live_webhook):
    _, out, _ = await live_webhook.kubectl(
        "apply", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(POD)
    )
    pod = json.loads(out)
    assert [("livenessProbe" in c) for c in pod["spec"]["containers"]] == [False, False]
    # the apiserver defaulted the probe before admission: the defaults travel in the annotation
    assert pod["metadata"]["annotations"]["apps.kruise.io/container-probe-context"] == (
        '[{"name":"app","livenessProbe":{"httpGet":{"path":"/health","port":80,"scheme":"HTTP"},'
        '"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}}]'
    )
