"""Upstream's SidecarSet e2e, context "SidecarSet Injecting functionality [SidecarSetInject]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset.go), translated to kubectl on the sandbox: same
objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here.

Upstream's v1beta1/sidecarset.go has the same injection cases with the SidecarSet at v1beta1 (scoped by a
namespaceSelector); each case runs once per version, writing and reading the SidecarSet at it."""

from __future__ import annotations

import pytest
from harness import Cluster
from sidecarset_tester import API_VERSIONS, upstream_case

pytestmark = pytest.mark.parametrize("api_version", API_VERSIONS)


async def test_pods_dont_have_matched_sidecarset(kruise_sandbox_all_gates: Cluster, api_version: str):
    """pods don't have matched sidecarSet"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        sidecarset["spec"]["selector"]["matchLabels"]["app"] = "nomatched"
        await case.create(sidecarset)
        deployment = case.base_deployment()
        await case.create_deployment(deployment)
        pods = await case.pods()
        assert len(pods) == deployment["spec"]["replicas"]
        assert len(pods[0]["spec"]["containers"]) == len(deployment["spec"]["template"]["spec"]["containers"])


async def test_sidecarset_with_volumes_downward_api(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarset with volumes.downwardAPI

    Upstream only creates it (CreateSidecarSet fails the case when the create is refused)."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        sidecarset["spec"]["volumes"] = [
            {
                "name": "podinfo",
                "downwardAPI": {
                    "items": [
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                        {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
                    ]
                },
            }
        ]
        sidecarset["spec"]["containers"][0]["volumeMounts"] = [
            {"name": "podinfo", "mountPath": "/etc/podinfo"}
        ]
        created = await case.create(sidecarset)
        stored = await case.get(case.sidecarsets, created["metadata"]["name"])
        assert stored["spec"]["volumes"][0]["downwardAPI"]["items"][1]["fieldRef"]["fieldPath"] == (
            "metadata.annotations"
        )


async def test_sidecarset_inject_pod_sidecar_container(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarSet inject pod sidecar container"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        await case.create(sidecarset)
        deployment = case.base_deployment()
        await case.create_deployment(deployment)
        pod = (await case.pods())[0]
        template = deployment["spec"]["template"]["spec"]
        spec = sidecarset["spec"]
        assert len(pod["spec"]["containers"]) == len(template["containers"]) + len(spec["containers"])
        assert len(pod["spec"]["initContainers"]) == len(template.get("initContainers") or []) + len(
            spec["initContainers"]
        )
        # containers order: nginx-sidecar (BeforeAppContainer), main, busybox-sidecar (AfterAppContainer)
        names = [c["name"] for c in pod["spec"]["containers"]]
        assert names == [spec["containers"][0]["name"], "main", spec["containers"][1]["name"]]


def _one_sidecar_with_volume(case) -> dict:
    sidecarset = case.base_sidecarset()
    sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
    sidecarset["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "nginx-volume", "mountPath": "/nginx-volume"}
    ]
    sidecarset["spec"]["volumes"] = [{"name": "nginx-volume", "emptyDir": {}}]
    return sidecarset


def _assert_injected(pod: dict, volumes: list[str], mount_paths: list[str], envs: list[str]) -> None:
    """upstream's GetPodVolume / GetContainerVolumeMount (by mountPath) / GetContainerEnvVar on the
    first container (the BeforeAppContainer sidecar)."""
    assert set(volumes) <= {v["name"] for v in pod["spec"].get("volumes") or []}
    sidecar = pod["spec"]["containers"][0]
    assert set(mount_paths) <= {m["mountPath"] for m in sidecar.get("volumeMounts") or []}
    assert set(envs) <= {e["name"] for e in sidecar.get("env") or []}


async def test_sidecarset_inject_pod_sidecar_container_volume_mounts(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod sidecar container volumeMounts

    Case "append normal volumeMounts": the sidecar shares the app's volumeMounts (shareVolumePolicy)."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        await case.create(_one_sidecar_with_volume(case))
        deployment = case.base_deployment()
        template = deployment["spec"]["template"]["spec"]
        template["containers"][0]["volumeMounts"] = [{"name": "main-volume", "mountPath": "/main-volume"}]
        template["volumes"] = [{"name": "main-volume", "emptyDir": {}}]
        await case.create_deployment(deployment)
        pod = (await case.pods())[0]
        _assert_injected(pod, ["main-volume", "nginx-volume"], ["/main-volume", "/nginx-volume"], [])


async def test_sidecarset_inject_volume_mounts_subpathexpr_with_expanded_subpath(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod sidecar container volumeMounts, SubPathExpr with expanded subpath

    Case "append volumeMounts SubPathExpr, volumes with expanded subpath": the shared mount's subPathExpr
    names env vars, so the sidecar gets those env vars too."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        await case.create(_one_sidecar_with_volume(case))
        deployment = case.base_deployment()
        template = deployment["spec"]["template"]["spec"]
        template["containers"][0]["volumeMounts"] = [
            {
                "name": "main-volume",
                "mountPath": "/main-volume",
                "subPathExpr": "foo/$(POD_NAME)/$(OD_NAME)/conf",
            }
        ]
        template["containers"][0]["env"] = [
            {"name": "POD_NAME", "value": "bar"},
            {"name": "OD_NAME", "value": "od_name"},
        ]
        template["volumes"] = [{"name": "main-volume", "emptyDir": {}}]
        await case.create_deployment(deployment)
        pod = (await case.pods())[0]
        _assert_injected(
            pod, ["main-volume", "nginx-volume"], ["/main-volume", "/nginx-volume"], ["POD_NAME", "OD_NAME"]
        )


async def _transfer_envs_case(
    cluster: Cluster, version: str, transfer: list[dict], template_meta: dict
) -> None:
    """The three "transfer Envs" cases: the sidecar's own OD_NAME wins over the transferred one."""
    async with upstream_case(cluster, version) as case:
        sidecarset = case.base_sidecarset()
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        sidecar = sidecarset["spec"]["containers"][0]
        sidecar["env"] = [
            {"name": "OD_NAME", "value": "sidecar_name"},
            {"name": "SidecarName", "value": sidecar["name"]},
        ]
        sidecar["transferEnv"] = transfer
        await case.create(sidecarset)
        deployment = case.base_deployment()
        meta = deployment["spec"]["template"]["metadata"]
        meta["labels"].update(template_meta.get("labels") or {})
        if template_meta.get("annotations"):
            meta["annotations"] = template_meta["annotations"]
        deployment["spec"]["template"]["spec"]["containers"][0]["env"] = [
            {"name": "POD_NAME", "value": "bar"},
            {"name": "OD_NAME", "value": "od_name"},
            {"name": "PROXY_IP", "value": "127.0.0.1"},
        ]
        await case.create_deployment(deployment)
        pod = (await case.pods())[0]
        assert len(pod["spec"]["containers"]) == 2
        env = pod["spec"]["containers"][0]["env"]
        expected = {
            "POD_NAME": "bar",
            "OD_NAME": "sidecar_name",
            "PROXY_IP": "127.0.0.1",
            "SidecarName": sidecar["name"],
        }
        for key, value in expected.items():
            # upstream's GetContainerEnvValue: the first env var of that name
            assert next(e.get("value") for e in env if e["name"] == key) == value, key


async def test_sidecarset_inject_transfer_envs(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarSet inject pod sidecar container transfer Envs"""
    transfer = [
        {"sourceContainerName": "main", "envName": name} for name in ("POD_NAME", "OD_NAME", "PROXY_IP")
    ]
    await _transfer_envs_case(kruise_sandbox_all_gates, api_version, transfer, {})


async def test_sidecarset_inject_transfer_envs_downward_api_labels(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod sidecar container transfer Envs with downward API by metadata.labels"""
    transfer = [
        {
            "sourceContainerNameFrom": {
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['biz']"}
            },
            "envNames": ["POD_NAME", "OD_NAME", "PROXY_IP"],
        }
    ]
    await _transfer_envs_case(kruise_sandbox_all_gates, api_version, transfer, {"labels": {"biz": "main"}})


async def test_sidecarset_inject_transfer_envs_downward_api_annotations(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod sidecar container transfer Envs with downward API by metadata.annotations"""
    transfer = [
        {
            "sourceContainerNameFrom": {
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['biz']"}
            },
            "envNames": ["POD_NAME", "OD_NAME", "PROXY_IP"],
        }
    ]
    await _transfer_envs_case(
        kruise_sandbox_all_gates, api_version, transfer, {"annotations": {"biz": "main"}}
    )
