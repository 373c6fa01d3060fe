"""Upstream's SidecarSet e2e, context "SidecarSet HotUpgrade functionality [SidecarSetHotUpgrade]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset_hotupgrade.go), translated to kubectl on the sandbox:
same objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here.

Upstream's v1beta1/sidecarset_hotupgrade.go is the same three cases with the SidecarSet at v1beta1 (scoped
by a namespaceSelector); each case runs once per version, writing and reading the SidecarSet at it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness import Cluster
from sidecarset_tester import (
    API_VERSIONS,
    BUSYBOX_IMAGE,
    INVALID_IMAGE,
    NEW_NGINX_IMAGE,
    NGINX_IMAGE,
    Case,
    pulls_failing,
    upstream_case,
)

WORKING = "kruise.io/sidecarset-working-hotupgrade-container"

pytestmark = pytest.mark.parametrize("api_version", API_VERSIONS)


def _container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    found = [c for c in pod["spec"]["containers"] if c["name"] == name]
    assert found, f"pod {pod['metadata']['name']} has no container {name}"
    return found[0]


def _working_and_empty(pod: dict[str, Any], sidecar: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """upstream's `GetPodHotUpgradeInfoInAnnotations` / `GetPodHotUpgradeContainers`: the container the
    working annotation names, and its twin (`-1` unless the working one is `-1`)."""
    working = json.loads(pod["metadata"]["annotations"].get(WORKING) or "{}").get(sidecar)
    empty = f"{sidecar}-2" if working == f"{sidecar}-1" else f"{sidecar}-1"
    return _container(pod, working), _container(pod, empty)


def _hot_sidecarset(case: Case, rolling: bool) -> tuple[dict[str, Any], str]:
    sidecarset = case.base_sidecarset()
    if rolling:
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
    sidecar = sidecarset["spec"]["containers"][0]
    sidecar["image"] = NGINX_IMAGE
    sidecar["upgradeStrategy"] = {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": BUSYBOX_IMAGE}
    return sidecarset, sidecar["name"]


def _assert_versions(pod: dict[str, Any], sidecar: str) -> None:
    annotations = pod["metadata"]["annotations"]
    assert annotations[f"version.sidecarset.kruise.io/{sidecar}-1"] == "1"
    assert annotations[f"versionalt.sidecarset.kruise.io/{sidecar}-1"] == "0"
    assert annotations[f"version.sidecarset.kruise.io/{sidecar}-2"] == "0"
    assert annotations[f"versionalt.sidecarset.kruise.io/{sidecar}-2"] == "1"


def _assert_working(pod: dict[str, Any], sidecar: str, working: str, image: str) -> None:
    work, empty = _working_and_empty(pod, sidecar)
    other = "-2" if working == "-1" else "-1"
    assert (work["name"], work["image"]) == (sidecar + working, image)
    assert (empty["name"], empty["image"]) == (sidecar + other, BUSYBOX_IMAGE)


async def test_sidecarset_inject_pod_hot_upgrade_sidecar_container(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod hot upgrade sidecar container

    A HotUpgrade sidecar is injected as two containers, `-1` working on the image, `-2` on the empty
    image, with version/versionalt annotations 1/0 and 0/1."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset, sidecar = _hot_sidecarset(case, rolling=False)
        await case.until_injecting(await case.create(sidecarset))
        deployment = case.base_deployment()
        await case.create_deployment(deployment)
        pods = await case.pods()
        assert len(pods[0]["spec"]["containers"]) == 1 + 1 + 1
        _assert_versions(pods[0], sidecar)
        assert _container(pods[0], f"{sidecar}-1")["image"] == NGINX_IMAGE
        assert _container(pods[0], f"{sidecar}-2")["image"] == BUSYBOX_IMAGE


async def test_sidecarset_upgrade_hot_sidecar_container_image(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade hot sidecar container image

    Each image change moves the work to the twin container (`-1` -> `-2` -> `-1`), the old one goes back
    to the empty image; a change beyond the image upgrades no pod."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset, sidecar = _hot_sidecarset(case, rolling=True)
        name = sidecarset["metadata"]["name"]
        await case.until_injecting(await case.create(sidecarset))
        await case.create_deployment(case.base_deployment(replicas=1))
        pods = await case.pods()
        assert len(pods) == 1
        _assert_working(pods[0], sidecar, "-1", NGINX_IMAGE)
        _assert_versions(pods[0], sidecar)

        def image(value: str):
            def change(obj):
                obj["spec"]["containers"][0]["image"] = value

            return change

        await case.update_sidecarset(name, image(NEW_NGINX_IMAGE))
        await case.sidecarset_status(name, matched=1, updated=1, ready=1, updated_ready=1)
        pods = await case.pods()
        assert len(pods) == 1
        _assert_working(pods[0], sidecar, "-2", NEW_NGINX_IMAGE)

        await case.update_sidecarset(name, image(NGINX_IMAGE))
        await case.sidecarset_status(name, matched=1, updated=1, ready=1, updated_ready=1)
        pods = await case.pods()
        assert len(pods) == 1
        _assert_working(pods[0], sidecar, "-1", NGINX_IMAGE)

        # update sidecarSet sidecar container others parameters, then don't upgrade
        def env(obj):
            obj["spec"]["containers"][0]["env"] = [{"name": "PROXY", "value": "127.0.0.1"}]

        await case.update_sidecarset(name, env)
        await case.sidecarset_status(name, matched=1, updated=0, ready=1, updated_ready=0)


async def test_sidecarset_upgrade_hot_sidecar_container_failed_image(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade hot sidecar container failed image

    A hot upgrade to an image that cannot be pulled stops after one pod (maxUnavailable 1, the pod never
    ready); the next good image finishes both pods, the work on `-2`."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset, sidecar = _hot_sidecarset(case, rolling=True)
        name = sidecarset["metadata"]["name"]
        await case.until_injecting(await case.create(sidecarset))
        await case.create_deployment(case.base_deployment(replicas=2))
        pods = await case.pods()
        assert len(pods) == 2
        _assert_working(pods[0], sidecar, "-1", NGINX_IMAGE)

        def image(value: str):
            def change(obj):
                obj["spec"]["containers"][0]["image"] = value

            return change

        await case.update_sidecarset(name, image(INVALID_IMAGE))
        await case.sidecarset_status(name, matched=2, updated=1, ready=1, updated_ready=0)
        await pulls_failing(case, INVALID_IMAGE, 1)

        await case.update_sidecarset(name, image(NEW_NGINX_IMAGE))
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)
        pods = await case.pods()
        assert len(pods) == 2
        for pod in pods:
            _assert_working(pod, sidecar, "-2", NEW_NGINX_IMAGE)
