"""The emulator reporting v1.31.4 resizes as kube-apiserver 1.31 with InPlacePodVerticalScaling: no
pods/resize (404, absent from discovery), cpu/memory changed by a plain pod update, QoS kept."""

from __future__ import annotations

import pytest

from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Invalid, NotFound
from kruise.kube.resources import PODS
from tests.integration.sandbox.apiserver.test_pod_resize import _pod


@pytest.fixture
def emulator(emulator):
    emulator.server.git_version = "v1.31.4"
    return emulator


@pytest.fixture
async def kclient(emulator):
    async with await Client.from_kubeconfig(emulator.kubeconfig) as c:
        yield c


def _cpu(request: str) -> dict:
    return {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": request}}}]}}


async def test_no_resize_subresource_before_1_32(kclient):
    await kclient.create(PODS, _pod(), "default")
    for call in (
        kclient.get(PODS, "p", "default", subresource="resize"),
        kclient.patch(
            PODS, "p", _cpu("150m"), "default", patch_type=PatchType.STRATEGIC, subresource="resize"
        ),
    ):
        with pytest.raises(NotFound) as exc:
            await call
        assert "the server could not find the requested resource" in str(exc.value)
    listed = await kclient.request("GET", "/api/v1")
    subresources = {r["name"] for r in listed["resources"] if r["name"].startswith("pods/")}
    assert "pods/status" in subresources and "pods/resize" not in subresources
    pod = await kclient.get(PODS, "p", "default")
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"


async def test_plain_pod_update_resizes_cpu_and_memory(kclient):
    await kclient.create(PODS, _pod(), "default")
    patched = await kclient.patch(PODS, "p", _cpu("150m"), "default", patch_type=PatchType.STRATEGIC)
    assert patched["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "150m", "memory": "64Mi"}
    patched["spec"]["containers"][0]["resources"]["limits"]["memory"] = "256Mi"
    updated = await kclient.update(PODS, patched)
    assert updated["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "200m", "memory": "256Mi"}
    assert updated["status"]["qosClass"] == "Burstable"


async def test_plain_pod_update_keeps_qos_and_other_fields(kclient):
    await kclient.create(PODS, _pod(), "default")
    guaranteed = {
        "requests": {"cpu": "200m", "memory": "128Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }
    with pytest.raises(Invalid) as exc:
        await kclient.patch(
            PODS,
            "p",
            {"spec": {"containers": [{"name": "app", "resources": guaranteed}]}},
            "default",
            patch_type=PatchType.STRATEGIC,
        )
    assert 'metadata: Invalid value: "Burstable": Pod QoS is immutable' in str(exc.value)
    with pytest.raises(Invalid) as exc:
        await kclient.patch(
            PODS,
            "p",
            {
                "spec": {
                    "containers": [{"name": "app", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}]
                }
            },
            "default",
            patch_type=PatchType.STRATEGIC,
        )
    assert "`spec.containers[*].resources` (for CPU/memory only)" in str(exc.value)


async def test_1_32_serves_resize_again(emulator, kclient):
    await kclient.create(PODS, _pod(), "default")
    emulator.server.git_version = "v1.32.0"
    patched = await kclient.patch(
        PODS, "p", _cpu("150m"), "default", patch_type=PatchType.STRATEGIC, subresource="resize"
    )
    assert patched["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "150m"
    with pytest.raises(Invalid):
        await kclient.patch(PODS, "p", _cpu("120m"), "default", patch_type=PatchType.STRATEGIC)
