"""Upstream's SidecarSet e2e, context "SidecarSet Injecting functionality [SidecarSetInject]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset.go), translated to kubectl on the sandbox: same
objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here."""

from __future__ import annotations

from harness import Cluster
from sidecarset_tester import upstream_case


async def test_pods_dont_have_matched_sidecarset(kruise_sandbox_all_gates: Cluster):
    """pods don't have matched sidecarSet"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        sidecarset = case.base_sidecarset()
        sidecarset["spec"]["selector"]["matchLabels"]["app"] = "nomatched"
        await case.create(sidecarset)
        deployment = case.base_deployment()
        await case.create_deployment(deployment)
        pods = await case.pods()
        assert len(pods) == deployment["spec"]["replicas"]
        assert len(pods[0]["spec"]["containers"]) == len(deployment["spec"]["template"]["spec"]["containers"])


async def test_sidecarset_with_volumes_downward_api(kruise_sandbox_all_gates: Cluster):
    """sidecarset with volumes.downwardAPI

    Upstream only creates it (CreateSidecarSet fails the case when the create is refused)."""
    async with upstream_case(kruise_sandbox_all_gates) as case:
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
        stored = await case.get("sidecarset", created["metadata"]["name"])
        assert stored["spec"]["volumes"][0]["downwardAPI"]["items"][1]["fieldRef"]["fieldPath"] == (
            "metadata.annotations"
        )


async def test_sidecarset_inject_pod_sidecar_container(kruise_sandbox_all_gates: Cluster):
    """sidecarSet inject pod sidecar container"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
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
