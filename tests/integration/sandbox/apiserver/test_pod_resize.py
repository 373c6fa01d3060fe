"""pods/resize as kube-apiserver 1.33+ serves it: GET shows the pod; PUT and PATCH (merge, strategic,
json) change only containers' resources and resizePolicy, validated like ValidatePodResize, and bump
metadata.generation; a plain pod update still may not touch resources."""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Invalid
from kruise.kube.resources import PODS


def _pod(name: str = "p") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.25",
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "128Mi"},
                    },
                }
            ]
        },
    }


@pytest.fixture
async def kclient(emulator):
    async with await Client.from_kubeconfig(emulator.kubeconfig) as c:
        yield c


@pytest.fixture
async def core(emulator):
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(emulator.kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api_client:
        yield client.CoreV1Api(api_client)


async def test_kruise_client_patches_resize_in_every_patch_type(kclient):
    created = await kclient.create(PODS, _pod(), "default")
    assert created["metadata"]["generation"] == 1
    patched = await kclient.patch(
        PODS,
        "p",
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "150m"}}}]}},
        "default",
        patch_type=PatchType.STRATEGIC,
        subresource="resize",
    )
    res = patched["spec"]["containers"][0]["resources"]
    assert res["requests"] == {"cpu": "150m", "memory": "64Mi"}
    assert patched["metadata"]["generation"] == 2
    json_ops = [{"op": "replace", "path": "/spec/containers/0/resources/limits/cpu", "value": "300m"}]
    patched = await kclient.patch(
        PODS, "p", json_ops, "default", patch_type=PatchType.JSON, subresource="resize"
    )
    assert patched["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "300m"
    assert patched["metadata"]["generation"] == 3
    # a merge patch replaces the containers list: only the resources of the named container are taken
    merge = {
        "metadata": {"labels": {"ignored": "yes"}},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "ignored:2",
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "64Mi"},
                        "limits": {"cpu": "300m", "memory": "256Mi"},
                    },
                }
            ]
        },
    }
    patched = await kclient.patch(
        PODS, "p", merge, "default", patch_type=PatchType.MERGE, subresource="resize"
    )
    container = patched["spec"]["containers"][0]
    assert container["image"] == "nginx:1.25" and container["resources"]["limits"]["memory"] == "256Mi"
    assert "labels" not in patched["metadata"]
    served = await kclient.get(PODS, "p", "default", subresource="resize")
    assert served["kind"] == "Pod" and served["metadata"]["generation"] == 4


async def test_kruise_client_gets_kube_apiserver_refusals(kclient):
    await kclient.create(PODS, _pod(), "default")
    with pytest.raises(Invalid) as exc:
        await kclient.patch(
            PODS,
            "p",
            {
                "spec": {
                    "containers": [
                        {"name": "app", "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}
                    ]
                }
            },
            "default",
            patch_type=PatchType.STRATEGIC,
            subresource="resize",
        )
    assert "Pod QOS Class may not change as a result of resizing" in str(exc.value)
    with pytest.raises(Invalid) as exc:
        await kclient.patch(
            PODS,
            "p",
            {"spec": {"containers": [{"name": "app", "resources": {"limits": {"memory": None}}}]}},
            "default",
            patch_type=PatchType.STRATEGIC,
            subresource="resize",
        )
    assert "resource limits cannot be removed" in str(exc.value)
    pod = await kclient.get(PODS, "p", "default")
    assert pod["metadata"]["generation"] == 1  # nothing was written


async def test_plain_pod_patch_still_refuses_resource_changes(kclient):
    await kclient.create(PODS, _pod(), "default")
    with pytest.raises(Invalid) as exc:
        await kclient.patch(
            PODS,
            "p",
            {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "150m"}}}]}},
            "default",
            patch_type=PatchType.STRATEGIC,
        )
    assert "pod updates may not change fields" in str(exc.value)


async def test_kubernetes_asyncio_resize_calls(core):
    await core.create_namespaced_pod("default", _pod())
    read = await core.read_namespaced_pod_resize("p", "default")
    assert read.metadata.name == "p"
    body = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "120m"}}}]}}
    patched = await core.patch_namespaced_pod_resize("p", "default", body)
    assert patched.spec.containers[0].resources.requests["cpu"] == "120m"
    pod = client.ApiClient().sanitize_for_serialization(patched)
    pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "400m"
    replaced = await core.replace_namespaced_pod_resize("p", "default", pod)
    assert replaced.spec.containers[0].resources.limits["cpu"] == "400m"
    assert replaced.metadata.generation == 3
    bad = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}}
    with pytest.raises(ApiException) as exc:
        await core.patch_namespaced_pod_resize("p", "default", bad)
    assert exc.value.status == 422
    assert "must be less than or equal to cpu limit of 400m" in exc.value.body
