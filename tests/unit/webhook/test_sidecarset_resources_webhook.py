"""resourcesPolicy and shareVolumeDevicePolicy through the webhook app: the SidecarSet is defaulted
and validated by its webhooks, then a pod created through /mutate-pod gets the computed resources."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator

import httpx
import pytest
from webhook_testkit import apply_patch, post, review

from kruise.webhook import registry
from kruise.webhook.app import create_app
from tests.kit.sidecarsets import FakeSidecarSetSource
from tests.kit.webhook import context

SIDECARSET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "SidecarSet",
    "metadata": {"name": "mesh"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [
            {
                "name": "envoy",
                "image": "envoy:1.30",
                "shareVolumeDevicePolicy": {"type": "enabled"},
                "resourcesPolicy": {
                    "targetContainersMode": "sum",
                    "resourcesExpr": {
                        "limits": {"cpu": "max(cpu*50%, 50m)", "memory": "200Mi"},
                        "requests": {"cpu": "cpu*10%", "memory": "memory*25%"},
                    },
                },
            }
        ],
    },
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "nginx",
                "resources": {
                    "limits": {"cpu": "1", "memory": "1Gi"},
                    "requests": {"cpu": "500m", "memory": "1Gi"},
                },
                "volumeDevices": [{"name": "disk", "devicePath": "/dev/xvda"}],
            },
            {
                "name": "worker",
                "image": "worker",
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            },
        ],
        "volumes": [{"name": "disk", "persistentVolumeClaim": {"claimName": "data"}}],
    },
}


@pytest.fixture
def sidecarsets() -> FakeSidecarSetSource:
    return FakeSidecarSetSource()


@pytest.fixture
async def client(sidecarsets: FakeSidecarSetSource) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(registry.routes(context(sidecarsets=sidecarsets)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://w.test") as c:
        yield c


def sidecarset_review(obj: dict) -> dict:
    return review("CREATE", group="apps.kruise.io", version="v1alpha1", kind="SidecarSet",
                  resource="sidecarsets", obj=obj)  # fmt: skip


async def admit(client: httpx.AsyncClient, sidecarsets: FakeSidecarSetSource, obj: dict) -> dict:
    """Mutate then validate, as the apiserver does; keep what it would store."""
    resp = await post(client, "/mutate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review(obj))
    stored = apply_patch(obj, resp)
    verdict = await post(client, "/validate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review(stored))
    assert verdict["allowed"] is True, verdict
    sidecarsets.items[stored["metadata"]["name"]] = stored
    return stored


async def create_pod(client: httpx.AsyncClient, pod: dict) -> dict:
    body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=copy.deepcopy(pod))
    return await post(client, "/mutate-pod", body)


async def test_pod_gets_sidecar_resources_and_shared_devices(client, sidecarsets):
    stored = await admit(client, sidecarsets, copy.deepcopy(SIDECARSET))
    assert stored["spec"]["containers"][0]["resourcesPolicy"]["targetContainersNameRegex"] == ".*"
    pod = apply_patch(POD, await create_pod(client, POD))
    envoy = pod["spec"]["containers"][0]
    assert envoy["name"] == "envoy"
    assert envoy["resources"] == {
        "limits": {"cpu": "1500m", "memory": "200Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert envoy["volumeDevices"] == [{"name": "disk", "devicePath": "/dev/xvda"}]
    assert "resourcesPolicy" not in envoy and "shareVolumeDevicePolicy" not in envoy
    assert [c["resources"] for c in pod["spec"]["containers"][1:]] == [
        c["resources"] for c in POD["spec"]["containers"]
    ]


async def test_unlimited_app_container_leaves_the_sidecar_limit_unset(client, sidecarsets):
    await admit(client, sidecarsets, copy.deepcopy(SIDECARSET))
    pod_in = copy.deepcopy(POD)
    del pod_in["spec"]["containers"][1]["resources"]["limits"]["cpu"]
    pod = apply_patch(pod_in, await create_pod(client, pod_in))
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"memory": "200Mi"}


async def test_pod_no_container_matches_is_refused(client, sidecarsets):
    narrow = copy.deepcopy(SIDECARSET)
    narrow["spec"]["containers"][0]["resourcesPolicy"]["targetContainersNameRegex"] = "^db$"
    await admit(client, sidecarsets, narrow)
    resp = await create_pod(client, POD)
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 500
    assert resp["status"]["message"] == 'no containers match the regex pattern "^db$"'


async def test_validation_refuses_policy_beside_static_resources(client, sidecarsets):
    both = copy.deepcopy(SIDECARSET)
    both["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    resp = await post(client, "/mutate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review(both))
    stored = apply_patch(both, resp)
    verdict = await post(client, "/validate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review(stored))
    assert verdict["allowed"] is False
    assert "spec[0].resourcesPolicy: Invalid value" in verdict["status"]["message"]
    assert "resourcesPolicy and resources cannot be configured together" in verdict["status"]["message"]
