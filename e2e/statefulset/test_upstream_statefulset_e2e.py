"""Upstream's Advanced StatefulSet e2e, Describe "StatefulSet v1beta1" — contexts "Basic StatefulSet
functionality [StatefulSetBasic]" and "Scaling StatefulSetStartOrdinal" (openkruise/kruise v1.9.0
test/e2e/apps/v1beta1/statefulset.go) — translated to kubectl on the AllAlpha sandbox: same objects,
same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here, and says
why the others wait."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable

import pytest
from harness import Cluster, json_documents, kubectl_binary
from statefulset_tester import (
    NEW_NGINX_IMAGE,
    NGINX_IMAGE,
    STS,
    StatefulSetTester,
    headless_service,
    new_statefulset,
    revision_of,
    set_image,
    sort_stateful_pods,
    wait_for_partitioned_rolling_update,
    with_specified_deleted,
)
from upstream_kit import Case, Obj, is_ready, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"

# upstream's `httpProbe` (`SetHTTPProbe`)
HTTP_PROBE = {
    "httpGet": {"path": "/index.html", "port": 80},
    "periodSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 1,
}


async def setup(case: Case) -> StatefulSetTester:
    """The context's BeforeEach: the headless service."""
    await case.create(headless_service(HEADLESS_SVC, LABELS))
    return StatefulSetTester(case)


async def get_scale(case: Case, name: str) -> Obj:
    _, out = await case.kubectl("get", STS, name, "--subresource=scale", "-o", "json")
    return json.loads(out)


async def test_should_have_a_working_scale_subresource(kruise_sandbox_all_gates: Cluster):
    """should have a working scale subresource"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 1, [], [], LABELS)
        ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(HTTP_PROBE)
        ss = await sst.create(ss)
        await sst.wait_for_running_and_ready(1, ss)
        ss = await sst.wait_for_status(ss)

        # getting scale subresource
        scale = await get_scale(case, SS_NAME)
        assert scale["spec"]["replicas"] == 1, scale
        assert scale["status"]["replicas"] == 1, scale

        # updating a scale subresource (no resourceVersion: the update is unconditional), as `UpdateScale`
        # does: a PUT of the Scale to the subresource (`kubectl replace -f` maps a file's kind to a
        # resource, and Scale is none)
        scale["metadata"].pop("resourceVersion", None)
        scale["spec"]["replicas"] = 2
        path = f"/apis/apps.kruise.io/v1beta1/namespaces/{case.ns}/statefulsets/{SS_NAME}/scale"
        _, out = await case.cluster.kubectl("replace", "--raw", path, "-f", "-", stdin=json.dumps(scale))
        assert json.loads(out)["spec"]["replicas"] == 2, out

        # verifying the statefulset Spec.Replicas was modified
        ss = await sst.get(SS_NAME)
        assert ss["spec"]["replicas"] == 2, ss["spec"]


async def test_should_perform_rolling_updates_with_specified_deleted(kruise_sandbox_all_gates: Cluster):
    """should perform rolling updates with specified-deleted"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = new_statefulset("ss2", case.ns, HEADLESS_SVC, 3, [], [], LABELS)
        await with_specified_deleted(case, sst, ss)


def expect_revisions(
    pods: list[Obj], partition: int, images: tuple[str, str], revisions: tuple[str, str]
) -> None:
    """Pods below `partition` run the old image at the current revision, the others the new image at the
    update revision (`images` and `revisions` are (old, new))."""
    for i, pod in enumerate(sort_stateful_pods(pods)):
        new = i >= partition
        name = pod["metadata"]["name"]
        image = pod["spec"]["containers"][0]["image"]
        assert image == images[new], f"Pod {name} has image {image}, not {images[new]}"
        assert revision_of(pod) == revisions[new], f"Pod {name} has revision {revision_of(pod)}"


async def delete_stateful_pod_at_index(case: Case, index: int, ss: Obj) -> None:
    """`DeleteStatefulPodAtIndex`. kubectl waits for the pod to be gone, so the wait for 3 running and
    ready pods that follows cannot count the deleted one (upstream races its kubelet on that)."""
    await case.kubectl("delete", "pod", f"{ss['metadata']['name']}-{index}")


def partitioned(partition: int) -> Callable[[Obj], None]:
    """The phase's update: the strategy replaced by a rolling update held at `partition`."""

    def change(update: Obj) -> None:
        update["spec"]["updateStrategy"] = {
            "type": "RollingUpdate",
            "rollingUpdate": {"partition": partition},
        }

    return change


async def test_should_perform_canary_updates_and_phased_rolling_updates_of_template_modifications(
    kruise_sandbox_all_gates: Cluster,
):
    """should perform canary updates and phased rolling updates of template modifications"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = new_statefulset("ss2", case.ns, HEADLESS_SVC, 3, [], [], LABELS)
        ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(HTTP_PROBE)
        ss["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}
        ss = await sst.create(ss)
        await sst.wait_for_running_and_ready(3, ss)
        ss = await sst.wait_for_status(ss)
        current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
        assert current == update, f"created with update revision {update} not equal to current {current}"
        pods = await sst.pods(ss)
        for pod in pods:
            assert revision_of(pod) == current, pod["metadata"]

        old_image = ss["spec"]["template"]["spec"]["containers"][0]["image"]
        assert old_image != NEW_NGINX_IMAGE, "Incorrect test setup: should update to a different image"
        ss = await sst.update_with_retries("ss2", set_image(NEW_NGINX_IMAGE))

        # Creating a new revision
        ss = await sst.wait_for_status(ss)
        current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
        assert current != update, "Current revision should not equal update revision during rolling update"
        images, revisions = (old_image, NEW_NGINX_IMAGE), (current, update)

        # Not applying an update when the partition is greater than the number of replicas
        expect_revisions(pods, 3, images, revisions)

        # Performing a canary update
        ss = await sst.update_with_retries("ss2", partitioned(2))
        ss, pods = await wait_for_partitioned_rolling_update(sst, ss)
        expect_revisions(pods, 2, images, revisions)

        # Restoring Pods to the correct revision when they are deleted
        await delete_stateful_pod_at_index(case, 0, ss)
        await delete_stateful_pod_at_index(case, 2, ss)
        pods = await sst.wait_for_running_and_ready(3, ss)
        ss = await sst.get("ss2")
        expect_revisions(pods, 2, images, revisions)

        # Performing a phased rolling update
        for partition in range(1, -1, -1):
            ss = await sst.update_with_retries("ss2", partitioned(partition))
            ss, pods = await wait_for_partitioned_rolling_update(sst, ss)
            expect_revisions(pods, partition, images, revisions)
        assert ss["status"]["currentRevision"] == update, (
            f"current revision {ss['status']['currentRevision']} does not equal update revision {update} "
            "on update completion"
        )


async def test_should_implement_legacy_replacement_when_the_update_strategy_is_on_delete(
    kruise_sandbox_all_gates: Cluster,
):
    """should implement legacy replacement when the update strategy is OnDelete"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = new_statefulset("ss2", case.ns, HEADLESS_SVC, 3, [], [], LABELS)
        ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(HTTP_PROBE)
        ss["spec"]["updateStrategy"] = {"type": "OnDelete"}
        ss = await sst.create(ss)
        await sst.wait_for_running_and_ready(3, ss)
        ss = await sst.wait_for_status(ss)
        current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
        assert current == update, f"created with update revision {update} not equal to current {current}"
        for pod in await sst.pods(ss):
            assert revision_of(pod) == current, pod["metadata"]

        # Restoring Pods to the current revision
        for index in range(3):
            await delete_stateful_pod_at_index(case, index, ss)
        await sst.wait_for_running_and_ready(3, ss)
        ss = await sst.get("ss2")
        for pod in await sst.pods(ss):
            assert revision_of(pod) == current, pod["metadata"]

        old_image = ss["spec"]["template"]["spec"]["containers"][0]["image"]
        assert old_image != NEW_NGINX_IMAGE, "Incorrect test setup: should update to a different image"
        ss = await sst.update_with_retries("ss2", set_image(NEW_NGINX_IMAGE))

        # Creating a new revision
        ss = await sst.wait_for_status(ss)
        current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
        assert current != update, "Current revision should not equal update revision during rolling update"

        # Recreating Pods at the new revision
        for index in range(3):
            await delete_stateful_pod_at_index(case, index, ss)
        await sst.wait_for_running_and_ready(3, ss)
        ss = await sst.get("ss2")
        for pod in await sst.pods(ss):
            name, image = pod["metadata"]["name"], pod["spec"]["containers"][0]["image"]
            assert image == NEW_NGINX_IMAGE, f"Pod {name} has image {image}, not {NEW_NGINX_IMAGE}"
            assert revision_of(pod) == update, f"Pod {name} has revision {revision_of(pod)}, not {update}"


def in_place_set(case: Case) -> Obj:
    """The in-place cases' set: 3 nginx pods with the http probe, `InPlaceIfPossible` with a 10 s grace
    period, and the `InPlaceUpdateReady` readiness gate."""
    ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 3, [], [], LABELS)
    ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(HTTP_PROBE)
    ss["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "podUpdatePolicy": "InPlaceIfPossible",
            "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
        },
    }
    ss["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    return ss


async def in_place_rollout(
    case: Case,
    sst: StatefulSetTester,
    ss: Obj,
    change: Callable[[Obj], None],
    before_update: list[Obj] | None = None,
) -> tuple[Obj, list[Obj], str]:
    """The steps the in-place cases share: create, check every pod at the one revision, delete and get
    them back at it, apply `change` held at partition 3 (a new revision, nothing updated), then
    partition 0 and wait for pod 0 — the last one updated — to leave the old revision and be ready, and
    for all 3 to be running and ready. Returns the set, its pods and the update revision; the pods as
    they were just before `change` go to `before_update` when given."""
    ss = await sst.create(ss)
    await sst.wait_for_running_and_ready(3, ss)
    ss = await sst.wait_for_status(ss)
    current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
    assert current == update, f"created with update revision {update} not equal to current {current}"
    pods = sort_stateful_pods(await sst.pods(ss))
    for pod in pods:
        assert revision_of(pod) == current, pod["metadata"]

    # Restoring Pods to the current revision
    for index in range(3):
        await delete_stateful_pod_at_index(case, index, ss)
    await sst.wait_for_running_and_ready(3, ss)
    ss = await sst.get(SS_NAME)
    restored = await sst.pods(ss)
    for pod in restored:
        assert revision_of(pod) == current, pod["metadata"]
    if before_update is not None:
        before_update.extend(restored)

    def held(update: Obj) -> None:
        change(update)
        update["spec"]["updateStrategy"].setdefault("rollingUpdate", {})["partition"] = 3

    ss = await sst.update_with_retries(SS_NAME, held)

    # Creating a new revision
    ss = await sst.wait_for_status(ss)
    current, update = ss["status"]["currentRevision"], ss["status"]["updateRevision"]
    assert current != update, "Current revision should not equal update revision during rolling update"
    ss = await sst.update_with_retries(
        SS_NAME, lambda s: s["spec"]["updateStrategy"]["rollingUpdate"].update({"partition": 0})
    )

    # InPlace update Pods at the new revision (`WaitForPodUpdatedAndRunning`)
    first = pods[0]["metadata"]["name"]

    def updated(_: Obj, current_pods: list[Obj]) -> bool:
        return any(
            p["metadata"]["name"] == first and revision_of(p) != current and is_ready(p) for p in current_pods
        )

    await sst.wait_for_state(ss, updated, f"pod {first} updated and ready")
    await sst.wait_for_running_and_ready(3, ss)
    ss = await sst.get(SS_NAME)
    return ss, await sst.pods(ss), update


async def test_should_in_place_update_pods_when_the_pod_update_strategy_is_in_place(
    kruise_sandbox_all_gates: Cluster,
):
    """should in-place update pods when the pod update strategy is InPlace"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = in_place_set(case)
        assert ss["spec"]["template"]["spec"]["containers"][0]["image"] != NEW_NGINX_IMAGE
        ss, pods, update = await in_place_rollout(case, sst, ss, set_image(NEW_NGINX_IMAGE))
        for pod in pods:
            name, image = pod["metadata"]["name"], pod["spec"]["containers"][0]["image"]
            assert image == NEW_NGINX_IMAGE, f"Pod {name} has image {image}, not {NEW_NGINX_IMAGE}"
            assert revision_of(pod) == update, f"Pod {name} has revision {revision_of(pod)}, not {update}"


def guaranteed(update: Obj) -> None:
    """The QoS case's update: requests equal to limits, so the pods turn from Burstable to Guaranteed."""
    both = {"cpu": "1", "memory": "1Gi"}
    update["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": dict(both),
        "limits": dict(both),
    }


async def test_should_recreate_update_when_pod_qos_changed(kruise_sandbox_all_gates: Cluster):
    """should recreate update when pod qos changed"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = in_place_set(case)
        template = ss["spec"]["template"]
        template["metadata"]["labels"] = {"test-env": "foo", **LABELS}
        template["spec"]["containers"][0]["env"] = [
            {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
        ]
        # Updating stateful set template: change pod qos; recreate update Pods at the new revision
        before: list[Obj] = []
        ss, pods, update = await in_place_rollout(case, sst, ss, guaranteed, before)
        old_uids = {p["metadata"]["uid"] for p in before}
        for pod in pods:
            name = pod["metadata"]["name"]
            restarts = pod["status"]["containerStatuses"][0]["restartCount"]
            assert restarts == 0, f"Pod {name} restarted {restarts} times"
            # upstream: created after the update began (`CreationTimestamp.After(updateTime)`); here by
            # identity, as no wall clock is compared: none of the pods from before the update is left
            assert pod["metadata"]["uid"] not in old_uids, f"Pod {name} was not recreated"
            assert revision_of(pod) == update, f"Pod {name} has revision {revision_of(pod)}, not {update}"


async def test_should_in_place_update_env_from_label(kruise_sandbox_all_gates: Cluster):
    """should in-place update env from label"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst = await setup(case)
        ss = in_place_set(case)
        template = ss["spec"]["template"]
        template["metadata"]["labels"] = {"test-env": "foo", **LABELS}
        template["spec"]["containers"][0]["env"] = [
            {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
        ]

        def relabel(update: Obj) -> None:
            update["spec"]["template"]["metadata"]["labels"]["test-env"] = "bar"

        ss, pods, update = await in_place_rollout(case, sst, ss, relabel)
        for pod in pods:
            restarts = pod["status"]["containerStatuses"][0]["restartCount"]
            assert restarts == 1, f"Pod {pod['metadata']['name']} restarted {restarts} times"
            assert revision_of(pod) == update, pod["metadata"]


# Context "Scaling StatefulSetStartOrdinal": a 2-replica set (no claims), its pods named from
# `.spec.ordinals.start`.


def active_pod_names(pods: list[Obj]) -> list[str]:
    """`expectPodNames`' view: by ordinal, without terminating or finished pods (as the controller
    counts them)."""
    return [
        p["metadata"]["name"]
        for p in sort_stateful_pods(pods)
        if not p["metadata"].get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


async def start_ordinal_case(
    cluster: Cluster,
    start: int | None,
    first: list[str],
    change: Callable[[Obj], None],
    then: list[str],
    replicas_after: int = 2,
) -> None:
    async with upstream_case(cluster, "statefulset") as case:
        sst = await setup(case)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 2, [], [], LABELS)
        if start is not None:
            ss["spec"]["ordinals"] = {"start": start}
        ss = await sst.create(ss)
        await sst.wait_for_status(ss)
        await sst.wait_for_status_replicas(ss, 2)
        await sst.wait_for_status_ready_replicas(ss, 2)

        # Confirming 2 replicas, with the first start ordinal
        assert active_pod_names(await sst.pods(ss)) == first

        ss = await sst.update_with_retries(SS_NAME, change)
        # we need to ensure we wait for all the new ones to show up, not just for any random ones
        await sst.wait_for_status(ss)
        await sst.wait_for_state(ss, lambda _, pods: active_pod_names(pods) == then, f"pods {then}")
        await sst.wait_for_status_replicas(ss, replicas_after)
        await sst.wait_for_status_ready_replicas(ss, replicas_after)


def ordinals(start: int | None, replicas: int | None = None) -> Callable[[Obj], None]:
    def change(update: Obj) -> None:
        if start is None:
            update["spec"].pop("ordinals", None)
        else:
            update["spec"]["ordinals"] = {"start": start}
        if replicas is not None:
            update["spec"]["replicas"] = replicas

    return change


async def test_setting_start_ordinal(kruise_sandbox_all_gates: Cluster):
    """Setting .start.ordinal"""
    await start_ordinal_case(
        kruise_sandbox_all_gates, None, ["ss-0", "ss-1"], ordinals(2, 3), ["ss-2", "ss-3", "ss-4"], 3
    )


async def test_increasing_start_ordinal(kruise_sandbox_all_gates: Cluster):
    """Increasing .start.ordinal"""
    await start_ordinal_case(kruise_sandbox_all_gates, 2, ["ss-2", "ss-3"], ordinals(4), ["ss-4", "ss-5"])


async def test_decreasing_start_ordinal(kruise_sandbox_all_gates: Cluster):
    """Decreasing .start.ordinal"""
    await start_ordinal_case(kruise_sandbox_all_gates, 3, ["ss-3", "ss-4"], ordinals(2), ["ss-2", "ss-3"])


async def test_removing_start_ordinal(kruise_sandbox_all_gates: Cluster):
    """Removing .start.ordinal"""
    await start_ordinal_case(kruise_sandbox_all_gates, 3, ["ss-3", "ss-4"], ordinals(None), ["ss-0", "ss-1"])


STATEFUL_POD_TIMEOUT = 300.0  # `StatefulPodTimeout` (and the framework's pod start timeout)


async def ready_schedulable_nodes(case: Case) -> list[str]:
    """`GetReadySchedulableNodesOrDie`: Ready, not cordoned, no NoSchedule/NoExecute taint."""
    _, out = await case.cluster.kubectl("get", "nodes", "-o", "json")
    names = []
    for node in json.loads(out)["items"]:
        ready = next((c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), None)
        tainted = any(
            t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints") or []
        )
        if not node["spec"].get("unschedulable") and ready and ready["status"] == "True" and not tainted:
            names.append(node["metadata"]["name"])
    assert names, "no ready, schedulable nodes"
    return sorted(names)


@contextlib.asynccontextmanager
async def watch_pod(case: Case, name: str) -> AsyncIterator[asyncio.Queue[tuple[str, Obj]]]:
    """`Pods(ns).Watch(SingleObject(name))` as `kubectl get pods --watch` on the name: the pod's current
    state (if any) as ADDED, then each change, as (event type, pod) on a queue."""
    process = await asyncio.create_subprocess_exec(
        kubectl_binary(), "--kubeconfig", str(case.cluster.kubeconfig), "get", "pods", "-n", case.ns,
        "--field-selector", f"metadata.name={name}", "--watch", "--output-watch-events", "-o", "json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    events: asyncio.Queue[tuple[str, Obj]] = asyncio.Queue()

    async def read() -> None:
        assert process.stdout is not None
        async for event in json_documents(process.stdout):
            events.put_nowait((event["type"], event["object"]))

    reader = asyncio.create_task(read())
    try:
        yield events
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def test_should_recreate_evicted_statefulset(kruise_sandbox_all_gates: Cluster):
    """Should recreate evicted statefulset

    StatefulSet MUST delete and recreate Pods it owns that go into a Failed state, such as when they are
    rejected or evicted by a Node: the sandbox kubelet rejects the stateful pod whose hostPort another pod
    on its node holds (phase Failed, reason `NodePorts`), as a real kubelet's admission does."""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        await setup(case)
        pod_name = "test-pod"
        stateful_pod_name = f"{SS_NAME}-0"
        # Looking for a node to schedule stateful set and pod
        node = (await ready_schedulable_nodes(case))[0]

        # Creating pod with conflicting port
        conflicting_port = {"hostPort": 21017, "containerPort": 21017, "name": "conflict"}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod_name},
            "spec": {
                "containers": [{"name": "nginx", "image": NGINX_IMAGE, "ports": [dict(conflicting_port)]}],
                "nodeName": node,
            },
        }
        await case.create(pod)

        # Creating statefulset with conflicting port
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 1, [], [], LABELS)
        stateful_container = ss["spec"]["template"]["spec"]["containers"][0]
        stateful_container.setdefault("ports", []).append(dict(conflicting_port))
        ss["spec"]["template"]["spec"]["nodeName"] = node
        await case.create(ss)

        # Waiting until pod test-pod will start running (`WaitForPodRunning`: a pod that ends fails it)
        def running(current: Obj | None) -> bool:
            phase = ((current or {}).get("status") or {}).get("phase")
            assert phase not in ("Failed", "Succeeded"), f"Pod {pod_name} did not start running: {phase}"
            return phase == "Running"

        await case.eventually(
            lambda: case.get("pod", pod_name), running, f"pod {pod_name} running", STATEFUL_POD_TIMEOUT
        )

        # Waiting until stateful pod ss-0 will be recreated and deleted at least once: the UID of the pod in
        # any state is kept until the controller has deleted it once
        initial_uid = ""
        async with watch_pod(case, stateful_pod_name) as events:
            async with asyncio.timeout(STATEFUL_POD_TIMEOUT):
                while True:
                    kind, watched = await events.get()
                    if kind == "DELETED":
                        if initial_uid:
                            break
                    elif kind in ("ADDED", "MODIFIED"):
                        initial_uid = watched["metadata"]["uid"]

        # Removing pod with conflicting port
        await case.kubectl("delete", "pod", pod_name, "--grace-period=0", "--force", "--wait=false")

        # Waiting when stateful pod ss-0 will be recreated and will be in running state (a deletion may be
        # caught in between, hence the poll)
        async def stateful_pod() -> Obj | None:
            return await case.get("pod", stateful_pod_name)

        def recreated_and_running(current: Obj | None) -> bool:
            if current is None:
                return False
            return current["status"].get("phase") == "Running" and current["metadata"]["uid"] != initial_uid

        await case.eventually(
            stateful_pod,
            recreated_and_running,
            f"pod {stateful_pod_name} recreated and running",
            STATEFUL_POD_TIMEOUT,
        )
