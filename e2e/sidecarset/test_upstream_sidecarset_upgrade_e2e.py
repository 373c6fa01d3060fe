"""Upstream's SidecarSet e2e, context "SidecarSet Upgrade functionality [SidecarSetUpgrade]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset.go), translated to kubectl on the sandbox: same
objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here.

Upstream's v1beta1/sidecarset.go has the same upgrade cases with the SidecarSet at v1beta1 (scoped by a
namespaceSelector); each case runs once per version, writing and reading the SidecarSet at it. Where the
v1beta1 file differs beyond that (the custom version is `spec.customVersion`, not a label; "image only"
adds its namespace label to the selector), the case branches on `case.version` as the two files do."""

from __future__ import annotations

import json

import pytest
from harness import Cluster, until
from sidecarset_tester import (
    API_VERSIONS,
    BUSYBOX_IMAGE,
    INVALID_IMAGE,
    KRUISE_NAMESPACE,
    NEW_NGINX_IMAGE,
    NGINX_IMAGE,
    hash_record,
    pulls_failing,
    upstream_case,
)

WHITELIST_KEY = "SidecarSet_PatchPodMetadata_WhiteList"
# v1alpha1's custom version; v1beta1 has spec.customVersion instead
CUSTOM_VERSION = "apps.kruise.io/sidecarset-custom-version"

pytestmark = pytest.mark.parametrize("api_version", API_VERSIONS)


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


async def test_sidecarset_patch_pod_metadata(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarSet patch pod metadata

    A MergePatchJson annotation is written at injection; changing only patchPodMetadata touches no pod
    (the SidecarSet hash covers containers only); the next image upgrade re-applies the new value."""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, api_version) as case:
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


async def test_sidecarset_injection_strategy_revision_checker(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet InjectionStrategy.Revision checker

    Six image versions stored as revisions while paused; a new pod gets the one customVersion 3 names
    (and records that revision); after unpausing it is upgraded in place and records the newest one."""
    cluster = kruise_sandbox_all_gates
    tags = ["latest", "1.21.1", "1.21", "1.20.1", "1.20", "1.19.10"]
    async with upstream_case(cluster, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        # v1alpha1: upstream sets the custom-version label only when the base SidecarSet has no labels
        # (it has); v1beta1 starts at spec.customVersion "0"
        if case.version == "v1beta1":
            sidecarset["spec"]["customVersion"] = "0"
        sidecarset["spec"]["updateStrategy"] = {"paused": True}
        sidecarset["spec"]["containers"][0]["image"] = f"nginx:{tags[0]}"
        await case.create(sidecarset)
        for i in range(1, 6):

            def next_version(obj, i=i):
                obj["spec"]["containers"][0]["image"] = f"nginx:{tags[i]}"
                if case.version == "v1beta1":
                    obj["spec"]["customVersion"] = str(i)
                else:
                    obj["metadata"].setdefault("labels", {})[CUSTOM_VERSION] = str(i)

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


def _condition(pod: dict, type_: str) -> dict:
    return next(c for c in pod["status"].get("conditions") or [] if c["type"] == type_)


async def test_sidecarset_upgrade_cold_sidecar_container_image_only(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container image only

    The SidecarSet selects namespaces by label: pods created before the namespace gets it stay without
    the sidecar; recreated afterwards they get it; an image change then reaches both in place."""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate", "maxUnavailable": 2}
        if case.version == "v1beta1":
            # v1beta1 merges the label into the selector that scopes the case's namespace
            sidecarset["spec"]["namespaceSelector"]["matchLabels"]["inject"] = "sidecar"
        else:
            sidecarset["spec"]["namespaceSelector"] = {"matchLabels": {"inject": "sidecar"}}
            del sidecarset["spec"]["namespace"]
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        created = await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=2))
        pods = await case.pods()
        assert [len(p["spec"]["containers"]) for p in pods] == [1, 1]

        await cluster.kubectl("label", "namespace", case.ns, "inject=sidecar")
        for pod in pods:
            await cluster.kubectl("delete", "pod", pod["metadata"]["name"], "-n", case.ns, "--wait=false")

        async def replaced():
            return await case.pods()

        gone = {p["metadata"]["uid"] for p in pods}
        pods = await until(
            replaced,
            lambda ps: len(ps) == 2 and not gone & {p["metadata"]["uid"] for p in ps},
            "both pods recreated",
            timeout=120,
        )
        for pod in pods:
            assert len(pod["spec"]["containers"]) == 2
            assert pod["spec"]["containers"][0]["image"] == created["spec"]["containers"][0]["image"]
        await case.deployment_running()

        def new_image(obj):
            obj["spec"]["containers"][0]["image"] = BUSYBOX_IMAGE

        await case.update_sidecarset(name, new_image)
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)
        for pod in await case.pods():
            assert pod["spec"]["containers"][0]["image"] == BUSYBOX_IMAGE
            assert _condition(pod, "SidecarSetUpgradable")["status"] == "True"


async def test_sidecarset_upgrade_more_than_image_field_updates_no_pod(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade sidecar container (more than image field), no pod should be updated"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        del sidecarset["spec"]["initContainers"]
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        await case.create(sidecarset)
        deployment = case.base_deployment(replicas=1)
        await case.create_deployment(deployment)

        current = await case.get(case.sidecarsets, name)
        listed = sorted(c["name"] for c in current["spec"]["containers"])
        for pod in await case.pods():
            for key in ("kruise.io/sidecarset-hash", "kruise.io/sidecarset-hash-without-image"):
                record = json.loads(pod["metadata"]["annotations"][key])[name]
                assert record["sidecarSetName"] == name
                assert record["hash"] == current["metadata"]["annotations"][key]
                assert sorted(set(record["sidecarList"])) == listed

        def new_env(obj):
            obj["spec"]["containers"][0]["env"] = [{"name": "version", "value": "v2"}]

        await case.update_sidecarset(name, new_env)
        await case.sidecarset_status(name, matched=1, updated=0, ready=1, updated_ready=0)

        async def marked():
            return await case.pods()

        # upstream reads the condition right after the status; here the poll covers the pod write after it
        await until(
            marked,
            lambda ps: all(
                any(
                    c["type"] == "SidecarSetUpgradable" and c["status"] == "False"
                    for c in p["status"]["conditions"]
                )
                for p in ps
            ),
            "SidecarSetUpgradable=False on every pod",
        )

        await case.cluster.kubectl("scale", "deployment", "deployment-test", "-n", case.ns, "--replicas=2")
        await case.deployment_running()

        def newer_image(obj):
            obj["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE

        await case.update_sidecarset(name, newer_image)
        await case.sidecarset_status(name, matched=2, updated=1, ready=2, updated_ready=1)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_partition(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container image, and partition"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=2))
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)

        def image_and_partition(obj):
            obj["spec"]["containers"][0]["image"] = BUSYBOX_IMAGE
            obj["spec"]["updateStrategy"]["partition"] = "50%"

        await case.update_sidecarset(name, image_and_partition)
        await case.sidecarset_status(name, matched=2, updated=1, ready=2, updated_ready=1)

        def no_partition(obj):
            del obj["spec"]["updateStrategy"]["partition"]

        await case.update_sidecarset(name, no_partition)
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)


async def test_sidecarset_update_init_sidecar_container_does_not_upgrade(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet update init sidecar container, and don't upgrade"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        created = await case.create(sidecarset)
        assert created["spec"]["initContainers"][0]["podInjectPolicy"] == "AfterAppContainer"
        assert created["spec"]["containers"][0]["podInjectPolicy"] == "BeforeAppContainer"
        await case.create_deployment(case.base_deployment(replicas=1))
        await case.sidecarset_status(name, matched=1, updated=1, ready=1, updated_ready=1)
        hash1 = (await case.get(case.sidecarsets, name))["metadata"]["annotations"][
            "kruise.io/sidecarset-hash"
        ]

        def invalid_init_image(obj):
            obj["spec"]["initContainers"][0]["image"] = INVALID_IMAGE

        await case.update_sidecarset(name, invalid_init_image)
        # upstream sleeps 5s; the controller's pass over this generation is the event to wait for
        await case.sidecarset_status(name, matched=1, updated=1, ready=1, updated_ready=1)
        hash2 = (await case.get(case.sidecarsets, name))["metadata"]["annotations"][
            "kruise.io/sidecarset-hash"
        ]
        assert hash1 == hash2


async def test_sidecarset_history_revision_checker(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarSet history revision checker"""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]

        async def check(count: int, order: list[int] | None) -> None:
            revisions = await case.revisions(name)
            assert len(revisions) == count
            for revision in revisions:
                assert {"volumes", "containers", "initContainers", "imagePullSecrets"} <= set(
                    revision["data"]["spec"]
                )
            if order is not None:
                assert [r["revision"] for r in revisions] == order

        sidecarset["spec"]["imagePullSecrets"] = [{"name": "secret-1"}]
        await case.create(sidecarset)
        await case.reconciled(name)
        await check(1, None)
        for i in range(2, 16):

            def secret(obj, i=i):
                obj["spec"]["imagePullSecrets"] = [{"name": f"secret-{i}"}]

            await case.update_sidecarset(name, secret)
            await case.reconciled(name)
        await check(10, list(range(6, 16)))

        def old_secret(obj):
            obj["spec"]["imagePullSecrets"] = [{"name": "secret-12"}]

        await case.update_sidecarset(name, old_secret)
        await case.reconciled(name)
        await check(10, [6, 7, 8, 9, 10, 11, 13, 14, 15, 16])


async def test_sidecarset_history_revision_data_checker(kruise_sandbox_all_gates: Cluster, api_version: str):
    """sidecarSet history revision data checker

    The SidecarSet patches an annotation with no whitelist configured: admitted through
    SidecarSetPatchPodMetadataDefaultsAllowed, on in upstream's e2e (AllAlpha)."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["imagePullSecrets"] = [{"name": "secret-1"}]
        sidecarset["spec"]["patchPodMetadata"] = [
            {"patchPolicy": "Retain", "annotations": {"sidecarset.kruise.io/test": "version-1"}}
        ]
        await case.create(sidecarset)
        await case.reconciled(name)

        def version_2(obj):
            obj["spec"]["patchPodMetadata"] = [
                {"patchPolicy": "Retain", "annotations": {"sidecarset.kruise.io/test": "version-2"}}
            ]

        await case.update_sidecarset(name, version_2)
        await case.reconciled(name)
        revisions = await case.revisions(name)
        assert len(revisions) == 2
        for revision in revisions:
            spec = revision["data"]["spec"]
            assert {"volumes", "containers", "initContainers", "imagePullSecrets", "patchPodMetadata"} <= set(
                spec
            )
        values = [
            r["data"]["spec"]["patchPodMetadata"][0]["annotations"]["sidecarset.kruise.io/test"]
            for r in revisions
        ]
        assert values == ["version-1", "version-2"]


async def test_multi_sidecarset_upgrade_check_pod_condition(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """multi sidecarSet upgrade sidecar container, check pod condition

    SidecarSetUpgradable is one condition for all SidecarSets of a pod: False while any of them cannot
    update in place, True once every one has."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        first = case.base_sidecarset()
        first["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        first["spec"]["containers"] = first["spec"]["containers"][:1]
        await case.create(first)
        second = case.base_sidecarset()
        second["metadata"]["name"] += "-2"  # upstream draws a second random suffix
        second["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        second["spec"]["initContainers"] = []
        second["spec"]["containers"] = second["spec"]["containers"][1:2]
        await case.create(second)
        await case.create_deployment(case.base_deployment(replicas=2))
        name1, name2 = first["metadata"]["name"], second["metadata"]["name"]

        def new_command(obj):
            obj["spec"]["containers"][0]["command"] = ["sleep", "1000"]

        await case.update_sidecarset(name1, new_command)
        await case.sidecarset_status(name1, matched=2, updated=0, ready=2, updated_ready=0)

        def nginx_image(obj):
            obj["spec"]["containers"][0]["image"] = NGINX_IMAGE

        await case.update_sidecarset(name2, nginx_image)
        await case.sidecarset_status(name2, matched=2, updated=2, ready=2, updated_ready=2)
        for pod in await case.pods():
            assert _condition(pod, "SidecarSetUpgradable")["status"] == "False"

        def image_and_command_back(obj):
            obj["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
            obj["spec"]["containers"][0]["command"] = ["tail", "-f", "/dev/null"]

        await case.update_sidecarset(name1, image_and_command_back)
        await case.sidecarset_status(name1, matched=2, updated=2, ready=2, updated_ready=2)
        for pod in await case.pods():
            assert _condition(pod, "SidecarSetUpgradable")["status"] == "True"


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_selector(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container image, and selector"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=2))
        pods = await case.pods()
        assert len(pods) == 2
        canary = pods[0]["metadata"]["name"]
        await cluster.kubectl("label", "pod", canary, "-n", case.ns, "canary.release=true")

        def image_and_selector(obj):
            obj["spec"]["containers"][0]["image"] = BUSYBOX_IMAGE
            obj["spec"]["updateStrategy"]["selector"] = {"matchLabels": {"canary.release": "true"}}

        await case.update_sidecarset(name, image_and_selector)
        await case.sidecarset_status(name, matched=2, updated=1, ready=2, updated_ready=1)
        pods = await case.pods()
        assert len(pods) == 2
        for pod in pods:
            expected = BUSYBOX_IMAGE if "canary.release" in pod["metadata"]["labels"] else NGINX_IMAGE
            assert pod["spec"]["containers"][0]["image"] == expected

        def no_selector(obj):
            del obj["spec"]["updateStrategy"]["selector"]

        await case.update_sidecarset(name, no_selector)
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)


async def test_sidecarset_inject_pod_sidecar_during_canary_upgrades(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet inject pod sidecar during canary upgrades

    A change that cannot be rolled in place, canaried by updateStrategy.selector: with
    injectionStrategy.revision (customVersion 0, Partial) new pods outside the selector still get the
    stable sidecar and new canary pods the new one."""
    cluster = kruise_sandbox_all_gates
    stable_tag, canary_tag = "1.20.1", "1.21.1"
    async with upstream_case(cluster, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        if case.version == "v1beta1":
            sidecarset["spec"]["customVersion"] = "0"
        else:
            sidecarset["metadata"]["labels"] = {CUSTOM_VERSION: "0"}
        sidecarset["spec"]["containers"][0]["image"] = f"nginx:{stable_tag}"
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        await case.create(sidecarset)
        deployments = {}
        for version in ("stable", "canary"):
            deployment = case.base_deployment(replicas=1)
            deployment["metadata"]["name"] += f"-{version}"
            template = deployment["spec"]["template"]
            template["metadata"]["labels"]["version"] = version
            template["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
            template["spec"]["terminationGracePeriodSeconds"] = 0
            await case.create(deployment)
            deployments[version] = deployment["metadata"]["name"]
        for deployment in deployments.values():
            await case.deployment_running(deployment)

        async def images(version: str) -> tuple[int, int, int]:
            pods = await case.pods(f"app=sidecarset,version={version}")
            found = [c["image"] for p in pods for c in p["spec"]["containers"]]
            return len(pods), found.count(f"nginx:{stable_tag}"), found.count(f"nginx:{canary_tag}")

        assert await images("stable") == (1, 1, 0)
        assert await images("canary") == (1, 1, 0)

        def canary_update(obj):
            container = obj["spec"]["containers"][0]
            container["image"] = f"nginx:{canary_tag}"
            container["env"] = [{"name": "SOME_ENV", "value": "SOME_VAL"}]  # make in-place upgrade impossible
            obj["spec"]["updateStrategy"]["selector"] = {"matchLabels": {"version": "canary"}}
            obj["spec"].setdefault("injectionStrategy", {})["revision"] = {
                "customVersion": "0",
                "policy": "Partial",
            }
            if case.version == "v1beta1":
                obj["spec"]["customVersion"] = "1"
            else:
                obj["metadata"]["labels"] = {CUSTOM_VERSION: "1"}

        await case.update_sidecarset(name, canary_update)
        await case.sidecarset_status(name, matched=2, updated=0, ready=2, updated_ready=0)

        for deployment in deployments.values():
            await cluster.kubectl("scale", "deployment", deployment, "-n", case.ns, "--replicas=2")
        for deployment in deployments.values():
            await case.deployment_running(deployment)
        assert await images("stable") == (2, 2, 0)
        assert await images("canary") == (2, 1, 1)


def _set_image(value: str):
    def change(obj):
        obj["spec"]["containers"][0]["image"] = value

    return change


async def _assert_upgrade_specs(case, name: str) -> None:
    """Every pod's hash and hash-without-image entries name the SidecarSet, carry its current
    annotations and list its sidecars (init containers only when they are native sidecars)."""
    current = await case.get(case.sidecarsets, name)
    listed = {c["name"] for c in current["spec"]["containers"]}
    listed |= {
        c["name"] for c in current["spec"].get("initContainers") or [] if c.get("restartPolicy") == "Always"
    }
    for pod in await case.pods():
        for key in ("kruise.io/sidecarset-hash", "kruise.io/sidecarset-hash-without-image"):
            record = json.loads(pod["metadata"]["annotations"][key])[name]
            assert record["sidecarSetName"] == name
            assert record["hash"] == current["metadata"]["annotations"][key]
            assert set(record["sidecarList"]) == listed


async def test_sidecarset_upgrade_cold_sidecar_container_failed_image_only_update_one_pod(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container failed image, and only update one pod

    The image that cannot be pulled (the sandbox's --fail-image) holds the rollout at one pod
    (maxUnavailable 1); a good image then finishes both and the pods' hash entries follow."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=2))
        await _assert_upgrade_specs(case, name)

        await case.update_sidecarset(name, _set_image(INVALID_IMAGE))
        await case.sidecarset_status(name, matched=2, updated=1, ready=1, updated_ready=0)
        await pulls_failing(case, INVALID_IMAGE, 1)

        await case.update_sidecarset(name, _set_image(BUSYBOX_IMAGE))
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)
        await _assert_upgrade_specs(case, name)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_paused(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container image, and paused

    Upstream pauses 5 s after the image change and expects one pod updated; here the sidecar carries a
    readiness delay (200 s of cluster time), so the first upgraded pod stays unready and maxUnavailable 1
    holds the second until the pause is written: the half-way state is certain, not a race."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        sidecarset["spec"]["containers"][0]["readinessProbe"] = {
            "tcpSocket": {"port": 80}, "initialDelaySeconds": 200, "periodSeconds": 10,
        }  # fmt: skip
        await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=2))

        await case.update_sidecarset(name, _set_image(BUSYBOX_IMAGE))
        await case.sidecarset_status(name, matched=2, updated=1, ready=1, updated_ready=0)

        def paused(value: bool):
            def change(obj):
                obj["spec"]["updateStrategy"]["paused"] = value

            return change

        await case.update_sidecarset(name, paused(True))
        await case.sidecarset_status(name, matched=2, updated=1, ready=2, updated_ready=1)

        await case.update_sidecarset(name, paused(False))
        await case.sidecarset_status(name, matched=2, updated=2, ready=2, updated_ready=2)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_max_unavailable(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """sidecarSet upgrade cold sidecar container image, and maxUnavailable

    maxUnavailable 50% of 4 pods: an image that cannot be pulled reaches exactly two pods; a good image
    then finishes all four."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        sidecarset = case.base_sidecarset()
        name = sidecarset["metadata"]["name"]
        sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
        await case.create(sidecarset)
        await case.create_deployment(case.base_deployment(replicas=4))

        def failed_image_half_unavailable(obj):
            obj["spec"]["containers"][0]["image"] = INVALID_IMAGE
            obj["spec"]["updateStrategy"]["maxUnavailable"] = "50%"

        await case.update_sidecarset(name, failed_image_half_unavailable)
        await case.sidecarset_status(name, matched=4, updated=2, ready=2, updated_ready=0)
        await pulls_failing(case, INVALID_IMAGE, 2)

        await case.update_sidecarset(name, _set_image(BUSYBOX_IMAGE))
        await case.sidecarset_status(name, matched=4, updated=4, ready=4, updated_ready=4)
