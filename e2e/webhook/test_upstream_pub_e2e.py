"""Upstream's PodUnavailableBudget e2e (openkruise/kruise v1.9.0
test/e2e/policy/v1alpha1/podunavailablebudget.go), translated to kubectl on the AllAlpha sandbox: the
manager keeps the budget's status (`setPubStatus` compares it without disruptedPods, unavailablePods and
observedGeneration), the webhook refuses the evictions, pod updates and unavailable-label patches that
would break it. Helpers stand in for upstream's `PodUnavailableBudgetTester`
(framework/v1alpha1/podunavailablebudget_util.go)."""

from __future__ import annotations

import json

import pytest
from harness import Cluster
from upstream_kit import NEW_WEBSERVER_IMAGE, WEBSERVER_IMAGE, Case, Obj, upstream_case

PUB = "podunavailablebudgets.v1alpha1.policy.kruise.io"
INVALID_IMAGE = "invalid.registry.k8s.io/invalid/invalid:1.0"  # upstream's common.InvalidImage
NO_PROTECT = "pub.kruise.io/no-protect"
PROTECT_OPERATION = "kruise.io/pub-protect-operations"
UNAVAILABLE_LABEL = "unavailable-pod.kruise.io/data"  # PubUnavailablePodLabelPrefix + "data"
SELECTOR = {"app": "webserver", "pub-controller": "true"}


def new_base_pub(ns: str) -> Obj:
    """`NewBasePub`: selector pub-controller=true, maxUnavailable 1."""
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "webserver-pub", "namespace": ns},
        "spec": {"selector": {"matchLabels": {"pub-controller": "true"}}, "maxUnavailable": 1},
    }


def new_base_deployment(ns: str) -> Obj:
    """`NewBaseDeployment`: 2 httpd replicas, RollingUpdate maxUnavailable 50% maxSurge 0."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "webserver", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": dict(SELECTOR)},
                "spec": {"containers": [
                    {"name": "main", "image": WEBSERVER_IMAGE, "imagePullPolicy": "IfNotPresent"},
                ]},
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}},
        },
    }  # fmt: skip


def budget(allowed: int, desired: int, current: int, total: int) -> dict[str, int]:
    return {
        "unavailableAllowed": allowed,
        "desiredAvailable": desired,
        "currentAvailable": current,
        "totalReplicas": total,
    }


def compared(status: Obj | None) -> dict[str, int]:
    """`setPubStatus`: the status without disruptedPods, unavailablePods and observedGeneration (Go's
    zero values stand in for absent counts)."""
    status = status or {}
    return {key: int(status.get(key, 0)) for key in budget(0, 0, 0, 0)}


async def pub_status_is(case: Case, name: str, want: dict[str, int]) -> None:
    async def status() -> dict[str, int]:
        return compared((await case.must_get(PUB, name)).get("status"))

    await case.eventually(status, lambda got: got == want, f"pub {name} status == {want}")


async def create_deployment(case: Case, deployment: Obj) -> None:
    """`CreateDeployment`: create, then `WaitForDeploymentReadyAndRunning`."""
    await case.create(deployment)
    await deployment_ready(case, deployment["metadata"]["name"])


async def deployment_ready(case: Case, name: str) -> None:
    """`WaitForDeploymentReadyAndRunning`: observed, and every replica updated and ready."""

    async def done() -> bool:
        d = await case.must_get("deployment", name)
        count, status = d["spec"]["replicas"], d.get("status") or {}
        return (
            d["metadata"].get("generation") == status.get("observedGeneration")
            and status.get("updatedReplicas", 0) == count
            and status.get("readyReplicas", 0) == count
            and status.get("replicas", 0) == count
        )

    await case.eventually(done, bool, f"deployment {name} ready and running", timeout=300)


async def selector_pods(case: Case, selector: dict[str, str]) -> list[Obj]:
    return await case.list("pods", selector)


def live(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


async def evict(case: Case, pod: str) -> tuple[int, str]:
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": case.ns},
    }
    return await case.cluster.kubectl(
        "create", "--raw", f"/api/v1/namespaces/{case.ns}/pods/{pod}/eviction", "-f", "-",
        stdin=json.dumps(eviction), check=False,
    )  # fmt: skip


async def replace(case: Case, obj: Obj) -> tuple[int, str]:
    return await case.kubectl("replace", "-f", "-", "-o", "json", stdin=json.dumps(obj), check=False)


async def set_pod_image(case: Case, pod: str, image: str) -> tuple[int, str]:
    """`Pods().Get` then `Update` with the first container's image changed."""
    obj = await case.must_get("pod", pod)
    obj["spec"]["containers"][0]["image"] = image
    return await replace(case, obj)


async def patch_pod(case: Case, pod: str, kind: str, patch: Obj) -> tuple[int, str]:
    return await case.kubectl("patch", "pod", pod, "--type", kind, "-p", json.dumps(patch), check=False)


async def test_selector_no_matched_pods(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector no matched pods"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        deployment = new_base_deployment(case.ns)
        deployment["spec"]["selector"]["matchLabels"]["pub-controller"] = "false"
        deployment["spec"]["template"]["metadata"]["labels"]["pub-controller"] = "false"
        await create_deployment(case, deployment)

        pub = await case.create(new_base_pub(case.ns))
        await pub_status_is(case, pub["metadata"]["name"], budget(0, 0, 0, 0))


async def test_selector_pods_and_delete_deployment_ignore(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector pods and delete deployment ignore"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        pub = new_base_pub(case.ns)
        pub["spec"]["maxUnavailable"] = 0
        pub_name = (await case.create(pub))["metadata"]["name"]

        deployment = new_base_deployment(case.ns)
        deployment["spec"]["replicas"] = 1
        await create_deployment(case, deployment)
        await pub_status_is(case, pub_name, budget(0, 1, 1, 1))

        # an eviction of a protected pod is refused
        pods = await selector_pods(case, SELECTOR)
        assert len(pods) == 1
        code, out = await evict(case, pods[0]["metadata"]["name"])
        assert code != 0, out

        # pods with pub.kruise.io/no-protect="true" are no longer checked against the budget
        pod = (await selector_pods(case, SELECTOR))[0]
        pod["metadata"].setdefault("annotations", {})[NO_PROTECT] = "true"
        code, out = await replace(case, pod)
        assert code == 0, out

        # upstream sleeps a second for the webhook's cache to see the annotation; the translation retries
        await case.eventually(
            lambda: evict(case, pod["metadata"]["name"]), lambda r: r[0] == 0, "eviction of no-protect pod"
        )

        await case.kubectl("delete", "deployment", deployment["metadata"]["name"], "--wait=false")
        await pub_status_is(case, pub_name, budget(0, 0, 0, 0))

        await case.eventually(lambda: selector_pods(case, SELECTOR), lambda p: not p, "no pods left")


async def test_selector_pods_and_scale_down_deployment_ignore(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector pods and scale down deployment ignore"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        pub_name = (await case.create(new_base_pub(case.ns)))["metadata"]["name"]

        deployment = new_base_deployment(case.ns)
        deployment["spec"]["replicas"] = 4
        await create_deployment(case, deployment)
        await pub_status_is(case, pub_name, budget(1, 3, 4, 4))

        # scale down: the pods' deletions are the ReplicaSet controller's, not disruptions
        await case.update("deployment", "webserver", lambda d: d["spec"].update(replicas=0))

        async def scaled() -> dict[str, int]:
            return compared((await case.must_get(PUB, pub_name)).get("status"))

        # upstream copies unavailableAllowed and currentAvailable from what it reads
        await case.eventually(
            scaled,
            lambda s: s["desiredAvailable"] == 0 and s["totalReplicas"] == 0,
            "pub desiredAvailable 0 and totalReplicas 0",
        )
        await case.eventually(lambda: selector_pods(case, SELECTOR), lambda p: not p, "no pods left")


async def test_target_reference_pods_update_failed_image_and_block(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget targetReference pods, update failed image and block"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        pub = new_base_pub(case.ns)
        del pub["spec"]["selector"]
        pub["spec"]["targetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "webserver"}
        pub_name = (await case.create(pub))["metadata"]["name"]

        await create_deployment(case, new_base_deployment(case.ns))
        await pub_status_is(case, pub_name, budget(1, 1, 2, 2))

        # update failed image: the budget lets one pod go, the other stays on the old image
        def image(value: str):
            return lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image=value)

        await case.update("deployment", "webserver", image(INVALID_IMAGE))
        await pub_status_is(case, pub_name, budget(0, 1, 1, 2))
        pods = await selector_pods(case, SELECTOR)
        not_updated = [p for p in live(pods) if p["spec"]["containers"][0]["image"] != INVALID_IMAGE]
        assert len(not_updated) == 1, [p["metadata"]["name"] for p in not_updated]

        # update success image
        await case.update("deployment", "webserver", image(NEW_WEBSERVER_IMAGE))
        await deployment_ready(case, "webserver")
        await pub_status_is(case, pub_name, budget(1, 1, 2, 2))
        new_pods = live(await selector_pods(case, SELECTOR))
        assert [p["spec"]["containers"][0]["image"] for p in new_pods] == [NEW_WEBSERVER_IMAGE] * 2
        first, second = (p["metadata"]["name"] for p in new_pods)

        # the unavailable label takes a pod out of the budget
        label = {"metadata": {"labels": {UNAVAILABLE_LABEL: "true"}}}
        code, out = await patch_pod(case, first, "merge", label)
        assert code == 0, out
        await pub_status_is(case, pub_name, budget(0, 1, 1, 2))

        # updating the image of the pod already unavailable is not a further disruption
        code, out = await set_pod_image(case, first, WEBSERVER_IMAGE)
        assert code == 0, out

        # the other pod may neither be labelled unavailable nor updated
        code, out = await patch_pod(case, second, "merge", label)
        assert code != 0, out
        code, out = await set_pod_image(case, second, WEBSERVER_IMAGE)
        assert code != 0, out

        # once the budget protects only DELETE, the update goes through
        await case.patch(PUB, pub_name, "merge", {"metadata": {"annotations": {PROTECT_OPERATION: "DELETE"}}})

        async def update_second() -> tuple[int, str]:
            return await set_pod_image(case, second, WEBSERVER_IMAGE)

        # upstream sleeps 3s for the webhook's PUB cache; the translation retries until it has it
        await case.eventually(update_second, lambda r: r[0] == 0, "pod update allowed under DELETE-only")

        for pod in live(await selector_pods(case, SELECTOR)):
            assert pod["spec"]["containers"][0]["image"] == WEBSERVER_IMAGE, pod["metadata"]["name"]
        await pub_status_is(case, pub_name, budget(0, 1, 1, 2))

        # delete the unavailable label
        code, out = await patch_pod(
            case, first, "strategic", {"metadata": {"labels": {UNAVAILABLE_LABEL: None}}}
        )
        assert code == 0, out
        await pub_status_is(case, pub_name, budget(1, 1, 2, 2))


async def test_selector_two_deployments_25_percent_update_success_image(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector two deployments, deployment.strategy.maxUnavailable=25% and maxSurge=25%, pub.spec.maxUnavailable=25%, and update success image"""  # noqa: E501
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        pub = new_base_pub(case.ns)
        pub["spec"]["maxUnavailable"] = "25%"
        pub_name = (await case.create(pub))["metadata"]["name"]

        base = new_base_deployment(case.ns)
        base["spec"]["strategy"]["rollingUpdate"] = {"maxUnavailable": "25%", "maxSurge": "25%"}
        base["spec"]["replicas"] = 5
        names = ["webserver-1", "webserver-1-2"]  # upstream names the second after the first
        for name in names:
            deployment = json.loads(json.dumps(base))
            deployment["metadata"]["name"] = name
            await create_deployment(case, deployment)
        await pub_status_is(case, pub_name, budget(3, 7, 10, 10))

        for name in names:
            await case.update(
                "deployment",
                name,
                lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image=NEW_WEBSERVER_IMAGE),
            )
        for name in names:
            await deployment_ready(case, name)
        for pod in await selector_pods(case, SELECTOR):
            assert pod["spec"]["containers"][0]["image"] == NEW_WEBSERVER_IMAGE, pod["metadata"]["name"]
        await pub_status_is(case, pub_name, budget(3, 7, 10, 10))

        await case.update("deployment", names[0], lambda d: d["spec"].update(replicas=0))
        await deployment_ready(case, names[0])
        await pub_status_is(case, pub_name, budget(2, 3, 5, 5))

        await case.kubectl("delete", "deployment", names[1], "--wait=false")
        await pub_status_is(case, pub_name, budget(0, 0, 0, 0))


CLONESET = "clonesets.v1alpha1.apps.kruise.io"


def new_base_cloneset(ns: str) -> Obj:
    """`NewBaseCloneSet`: 2 httpd replicas, ReCreate, maxUnavailable 100%, maxSurge 0."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "webserver", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": dict(SELECTOR)},
                "spec": {"containers": [
                    {"name": "main", "image": WEBSERVER_IMAGE, "imagePullPolicy": "IfNotPresent"},
                ]},
            },
            "updateStrategy": {"type": "ReCreate", "maxUnavailable": "100%", "maxSurge": 0},
        },
    }  # fmt: skip


async def clonesets_min_ready_and_running(case: Case, names: list[str], min_ready: int) -> None:
    """`WaitForCloneSetMinReadyAndRunning`: every CloneSet done, and never fewer than `min_ready` ready
    replicas among them on the way (upstream fails the poll the moment there are)."""

    async def done() -> bool:
        ready, completed = 0, 0
        for name in names:
            cs = await case.must_get(CLONESET, name)
            count, status = cs["spec"]["replicas"], cs.get("status") or {}
            ready += status.get("readyReplicas", 0)
            completed += (
                cs["metadata"].get("generation") == status.get("observedGeneration")
                and status.get("updatedReplicas", 0) == count
                and status.get("readyReplicas", 0) == count
                and status.get("replicas", 0) == count
            )
        assert ready >= min_ready, f"CloneSets {names}: readyReplicas {ready} < {min_ready}"
        return completed == len(names)

    await case.eventually(done, bool, f"CloneSets {names} ready and running", timeout=600)


async def create_cloneset(case: Case, cloneset: Obj) -> None:
    """`CreateCloneSet`: create, then wait for it to run every replica."""
    await case.create(cloneset)
    await clonesets_min_ready_and_running(case, [cloneset["metadata"]["name"]], 0)


def set_image(image: str):
    return lambda obj: obj["spec"]["template"]["spec"]["containers"][0].update(image=image)


async def cloneset_update_failed_image_and_block(case: Case, strategy: str) -> None:
    pub_name = (await case.create(new_base_pub(case.ns)))["metadata"]["name"]
    cloneset = new_base_cloneset(case.ns)
    cloneset["spec"]["updateStrategy"]["type"] = strategy
    await create_cloneset(case, cloneset)
    await pub_status_is(case, pub_name, budget(1, 1, 2, 2))

    await case.update(CLONESET, "webserver", set_image(INVALID_IMAGE))
    await pub_status_is(case, pub_name, budget(0, 1, 1, 2))
    pods = live(await selector_pods(case, SELECTOR))
    not_updated = [p for p in pods if p["spec"]["containers"][0]["image"] != INVALID_IMAGE]
    assert len(not_updated) == 1, [p["metadata"]["name"] for p in not_updated]

    await case.update(CLONESET, "webserver", set_image(NEW_WEBSERVER_IMAGE))
    await clonesets_min_ready_and_running(case, ["webserver"], 1)
    await pub_status_is(case, pub_name, budget(1, 1, 2, 2))
    pods = live(await selector_pods(case, SELECTOR))
    assert len([p for p in pods if p["spec"]["containers"][0]["image"] == NEW_WEBSERVER_IMAGE]) == 2


async def test_selector_cloneset_recreate_update_failed_image_and_block(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector cloneSet, strategy.type=recreate, update failed image and block"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        await cloneset_update_failed_image_and_block(case, "ReCreate")


async def test_selector_cloneset_in_place_update_failed_image_and_block(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector cloneSet, strategy.type=in-place, update failed image and block"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        await cloneset_update_failed_image_and_block(case, "InPlaceOnly")


async def test_selector_two_clonesets_in_place_update_success_image(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector two cloneSets, strategy.type=in-place, update success image"""
    async with upstream_case(kruise_sandbox_all_gates, "podunavailablebudget") as case:
        pub = new_base_pub(case.ns)
        pub["spec"]["maxUnavailable"] = "20%"
        pub_name = (await case.create(pub))["metadata"]["name"]

        names = ["webserver-1", "webserver-2"]
        for name in names:
            cloneset = new_base_cloneset(case.ns)
            cloneset["metadata"]["name"] = name
            cloneset["spec"]["replicas"] = 5
            cloneset["spec"]["updateStrategy"]["type"] = "InPlaceIfPossible"
            await create_cloneset(case, cloneset)
        await pub_status_is(case, pub_name, budget(2, 8, 10, 10))

        # a failed image on both: the budget stops the in-place updates at two pods
        for name in names:
            await case.update(CLONESET, name, set_image(INVALID_IMAGE))
        await pub_status_is(case, pub_name, budget(0, 8, 8, 10))

        # upstream sleeps 5s and then counts; the count must hold over that window
        def eight_not_updated(pods: list[Obj]) -> bool:
            return len([p for p in live(pods) if p["spec"]["containers"][0]["image"] != INVALID_IMAGE]) == 8

        await case.consistently(
            lambda: selector_pods(case, SELECTOR), eight_not_updated, "8 pods keep the old image", 5
        )

        for name in names:
            await case.update(CLONESET, name, set_image(NEW_WEBSERVER_IMAGE))
        await clonesets_min_ready_and_running(case, names, 7)
        await pub_status_is(case, pub_name, budget(2, 8, 10, 10))
        pods = live(await selector_pods(case, SELECTOR))
        assert len([p for p in pods if p["spec"]["containers"][0]["image"] == NEW_WEBSERVER_IMAGE]) == 10


SIDECARSET = "sidecarsets.v1alpha1.apps.kruise.io"
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"  # upstream's common.NginxImage
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"  # common.NewNginxImage


def pub_sidecarset(ns: str, rand: str) -> Obj:
    """`NewBaseSidecarSet` as both SidecarSet cases change it: no init container, one `nginx-sidecar`
    for the namespace's app=webserver pods, rolling update with maxUnavailable 100%."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": f"test-sidecarset-{ns}-{rand[:5]}", "labels": {"app": "sidecar"}},
        "spec": {
            "namespace": ns,
            "selector": {"matchLabels": {"app": "webserver"}},
            "containers": [
                {"name": "nginx-sidecar", "image": NGINX_IMAGE, "command": ["tail", "-f", "/dev/null"]},
            ],
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "100%"},
        },
    }


async def sidecarset_min_ready_and_upgrade(
    case: Case, name: str, want: dict[str, int], min_ready: int
) -> None:
    """`WaitForSidecarSetMinReadyAndUpgrade`: the counts reach `want`, and readyPods never drops below
    `min_ready` on the way (upstream fails the poll the moment it does). Upstream's 5 minutes: under a
    PodUnavailableBudget each pod waits for the last one's 10 s unavailable record to expire."""

    async def done() -> bool:
        status = (await case.must_get(SIDECARSET, name)).get("status") or {}
        if min_ready > 0:
            assert status.get("readyPods", 0) >= min_ready, (
                f"sidecarSet {name} readyPods < {min_ready}: {status}"
            )
        return all(status.get(key, 0) == value for key, value in want.items())

    await case.eventually(done, bool, f"sidecarSet {name} status {want}", timeout=300)


def sidecar_status(matched: int, updated: int, updated_ready: int, ready: int) -> dict[str, int]:
    return {
        "matchedPods": matched,
        "updatedPods": updated,
        "updatedReadyPods": updated_ready,
        "readyPods": ready,
    }


def set_sidecar_image(image: str):
    return lambda obj: obj["spec"]["containers"][0].update(image=image)


@pytest.mark.timeout(600)
async def test_selector_sidecarset_update_failed_sidecar_image_block(kruise_sandbox_all_gates: Cluster):
    """PodUnavailableBudget selector SidecarSet, inject sidecar container, update failed sidecar image, block"""  # noqa: E501
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "podunavailablebudget") as case:
        pub_name = (await case.create(new_base_pub(case.ns)))["metadata"]["name"]
        sidecarset = pub_sidecarset(case.ns, case.rand)
        name = sidecarset["metadata"]["name"]
        await cluster.kubectl("create", "-f", "-", stdin=json.dumps(sidecarset))
        try:
            deployment = new_base_deployment(case.ns)
            deployment["spec"]["replicas"] = 5
            await create_deployment(case, deployment)

            pods = await selector_pods(case, SELECTOR)
            assert len(pods[0]["spec"]["containers"]) == 2
            await pub_status_is(case, pub_name, budget(1, 4, 5, 5))

            await case.update(SIDECARSET, name, set_sidecar_image(INVALID_IMAGE))
            await sidecarset_min_ready_and_upgrade(case, name, sidecar_status(5, 1, 0, 4), 4)

            async def unavailable() -> int:
                return len(
                    ((await case.must_get(PUB, pub_name)).get("status") or {}).get("unavailablePods") or {}
                )

            await case.eventually(unavailable, lambda n: n == 1, "one pub unavailablePods entry")
            await pub_status_is(case, pub_name, budget(0, 4, 4, 5))

            await case.update(SIDECARSET, name, set_sidecar_image(NEW_NGINX_IMAGE))
            await sidecarset_min_ready_and_upgrade(case, name, sidecar_status(5, 5, 5, 5), 4)
            await pub_status_is(case, pub_name, budget(1, 4, 5, 5))
        finally:
            await cluster.kubectl(
                "delete", SIDECARSET, name, "--ignore-not-found", "--wait=false", check=False
            )


async def test_selector_cloneset_and_sidecarset_in_place_update_success_image(
    kruise_sandbox_all_gates: Cluster,
):
    """PodUnavailableBudget selector cloneSet and sidecarSet, strategy.type=in-place, update success image"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "podunavailablebudget") as case:
        pub = new_base_pub(case.ns)
        pub["spec"]["maxUnavailable"] = "20%"
        pub_name = (await case.create(pub))["metadata"]["name"]
        sidecarset = pub_sidecarset(case.ns, case.rand)
        name = sidecarset["metadata"]["name"]
        await cluster.kubectl("create", "-f", "-", stdin=json.dumps(sidecarset))
        try:
            cloneset = new_base_cloneset(case.ns)
            cloneset["spec"]["updateStrategy"]["type"] = "InPlaceOnly"
            cloneset["spec"]["replicas"] = 10
            await create_cloneset(case, cloneset)

            pods = await selector_pods(case, SELECTOR)
            assert len(pods[0]["spec"]["containers"]) == 2
            await pub_status_is(case, pub_name, budget(2, 8, 10, 10))

            await case.update(CLONESET, "webserver", set_image(NEW_WEBSERVER_IMAGE))
            await case.update(SIDECARSET, name, set_sidecar_image(NEW_NGINX_IMAGE))
            await clonesets_min_ready_and_running(case, ["webserver"], 2)
            await sidecarset_min_ready_and_upgrade(case, name, sidecar_status(10, 10, 10, 10), 2)
            await pub_status_is(case, pub_name, budget(2, 8, 10, 10))

            done = [
                p
                for p in live(await selector_pods(case, SELECTOR))
                if p["spec"]["containers"][1]["image"] == NEW_WEBSERVER_IMAGE
                and p["spec"]["containers"][0]["image"] == NEW_NGINX_IMAGE
            ]
            assert len(done) == 10
        finally:
            await cluster.kubectl(
                "delete", SIDECARSET, name, "--ignore-not-found", "--wait=false", check=False
            )
