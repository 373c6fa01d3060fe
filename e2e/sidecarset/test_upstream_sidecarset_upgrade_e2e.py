"""Upstream's SidecarSet e2e, context "SidecarSet Upgrade functionality [SidecarSetUpgrade]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset.go), translated to kubectl on the sandbox: same
objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here."""

from __future__ import annotations

import json

from harness import Cluster, until
from sidecarset_tester import BUSYBOX_IMAGE, KRUISE_NAMESPACE, hash_record, upstream_case

WHITELIST_KEY = "SidecarSet_PatchPodMetadata_WhiteList"


async def _replace_configuration(cluster: Cluster, data: dict[str, str]) -> str | None:
    """Swap in ConfigMap kruise-configuration with `data`; the previous one as JSON (None if absent)."""
    code, previous = await cluster.kubectl(
        "get", "configmap", "kruise-configuration", "-n", KRUISE_NAMESPACE, "-o", "json", check=False
    )
    await cluster.kubectl(
        "delete", "configmap", "kruise-configuration", "-n", KRUISE_NAMESPACE, "--ignore-not-found"
    )
    body = {"apiVersion": "v1", "kind": "ConfigMap", "data": data,
            "metadata": {"name": "kruise-configuration", "namespace": KRUISE_NAMESPACE}}  # fmt: skip
    await cluster.kubectl("create", "-f", "-", stdin=json.dumps(body))
    return previous if code == 0 else None


async def _restore_configuration(cluster: Cluster, previous: str | None) -> None:
    await cluster.kubectl(
        "delete", "configmap", "kruise-configuration", "-n", KRUISE_NAMESPACE, "--ignore-not-found"
    )
    if previous is not None:
        old = json.loads(previous)
        old["metadata"] = {k: old["metadata"][k] for k in ("name", "namespace", "labels", "annotations")
                           if k in old["metadata"]}  # fmt: skip
        await cluster.kubectl("create", "-f", "-", stdin=json.dumps(old))


async def test_sidecarset_patch_pod_metadata(kruise_sandbox_all_gates: Cluster):
    """sidecarSet patch pod metadata

    A MergePatchJson annotation is written at injection; changing only patchPodMetadata touches no pod
    (the SidecarSet hash covers containers only); the next image upgrade re-applies the new value."""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster) as case:
        sidecarset = case.base_sidecarset()
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        sidecar = sidecarset["spec"]["containers"][0]["name"]
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["patchPodMetadata"] = [
            {
                "patchPolicy": "MergePatchJson",
                "annotations": {"key": json.dumps({sidecar: 1}, separators=(",", ":"))},
            }
        ]
        # upstream's whitelist, key `annotationKeyExprs` included: it admits nothing by itself, the
        # SidecarSetPatchPodMetadataDefaultsAllowed gate (AllAlpha) lets the SidecarSet in
        whitelist = '{"rules":[{"annotationKeyExprs":["key"],"selector":{"matchLabels":{"app":"sidecar"}}}]}'
        previous = await _replace_configuration(cluster, {WHITELIST_KEY: whitelist})
        try:
            created = await case.create(sidecarset)
            deployment = case.base_deployment(replicas=2)
            await case.create_deployment(deployment)
            first = json.dumps({sidecar: 1}, separators=(",", ":"))
            pods = await case.pods()
            assert len(pods) == 2
            for pod in pods:
                assert pod["spec"]["containers"][0]["image"] == created["spec"]["containers"][0]["image"]
                assert pod["metadata"]["annotations"]["key"] == first

            # only modify annotations, and do not trigger in-place update
            second = json.dumps({sidecar: 2}, separators=(",", ":"))

            def annotations_only(obj):
                obj["spec"]["patchPodMetadata"] = [
                    {"patchPolicy": "MergePatchJson", "annotations": {"key": second}}
                ]

            await case.update_sidecarset(name, annotations_only)
            await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)
            for pod in await case.pods():
                assert pod["spec"]["containers"][0]["image"] == created["spec"]["containers"][0]["image"]
                assert pod["metadata"]["annotations"]["key"] == first

            # upgrade sidecar container image version
            def new_image(obj):
                obj["spec"]["containers"][0]["image"] = BUSYBOX_IMAGE

            await case.update_sidecarset(name, new_image)
            await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)
            pods = await case.pods()
            assert len(pods) == 2
            for pod in pods:
                assert pod["spec"]["containers"][0]["image"] == BUSYBOX_IMAGE
                assert pod["metadata"]["annotations"]["key"] == second
        finally:
            await _restore_configuration(cluster, previous)


async def test_sidecarset_injection_strategy_revision_checker(kruise_sandbox_all_gates: Cluster):
    """sidecarSet InjectionStrategy.Revision checker

    Six image versions stored as revisions while paused; a new pod gets the one customVersion 3 names
    (and records that revision); after unpausing it is upgraded in place and records the newest one."""
    cluster = kruise_sandbox_all_gates
    tags = ["latest", "1.21.1", "1.21", "1.20.1", "1.20", "1.19.10"]
    async with upstream_case(cluster) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        # upstream sets the custom-version label only when the base SidecarSet has no labels (it has)
        sidecarset["spec"]["updateStrategy"] = {"paused": True}
        sidecarset["spec"]["containers"][0]["image"] = f"nginx:{tags[0]}"
        await case.create(sidecarset)
        for i in range(1, 6):

            def next_version(obj, i=i):
                obj["spec"]["containers"][0]["image"] = f"nginx:{tags[i]}"
                obj["metadata"].setdefault("labels", {})["apps.kruise.io/sidecarset-custom-version"] = str(i)

            await case.update_sidecarset(name, next_version)

            async def stored():
                return await case.revisions(name)

            await until_count(stored, i + 1, f"{i + 1} revisions of {name}")

        pick = 3
        revisions = await case.revisions(name)
        assert len(revisions) == 6

        def inject_pick(obj):
            obj["spec"].setdefault("injectionStrategy", {})["revision"] = {
                "customVersion": str(pick),
                "policy": "Always",
            }

        await case.update_sidecarset(name, inject_pick)
        await case.create_deployment(case.base_deployment(replicas=1))
        pods = await case.pods()
        assert len(pods) == 1
        assert pods[0]["spec"]["containers"][0]["image"] == f"nginx:{tags[pick]}"
        assert hash_record(pods[0], name)["controllerRevision"] == revisions[pick]["metadata"]["name"]

        # check again after sidecarSet upgrade
        def unpause(obj):
            obj["spec"]["updateStrategy"]["paused"] = False

        await case.update_sidecarset(name, unpause)
        await case.sidecarset_status(name, matched=1, updated=1, ready=1, updated_ready=1)
        pods = await case.pods()
        assert len(pods) == 1
        assert pods[0]["spec"]["containers"][0]["image"] == f"nginx:{tags[5]}"
        assert hash_record(pods[0], name)["controllerRevision"] == revisions[5]["metadata"]["name"]


async def until_count(probe, count: int, what: str) -> None:
    """upstream's `Eventually(len(ListControllerRevisions)).Should(Equal(n))`."""
    await until(probe, lambda items: len(items) == count, what, timeout=30)
