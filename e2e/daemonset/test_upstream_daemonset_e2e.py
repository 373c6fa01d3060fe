"""Upstream's Advanced DaemonSet e2e, context "Basic DaemonSet functionality [DaemonSetBasic]"
(openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/daemonset.go and its v1beta1 copy
test/e2e/apps/v1beta1/daemonset.go), translated to kubectl on the AllAlpha sandbox: same objects, same
steps, same assertions. The two files differ only in the API version their clientset speaks (and v1beta1
reads the update revision from `status.updateRevision`, v1alpha1's `status.daemonSetHash`), so every case
runs once per version, ids `[v1alpha1]` and `[v1beta1]`. docs/upstream-e2e.md maps every upstream case to its
test here. The sandbox's nodes are shared by the session: a case that labels a node takes the label off
again, as the next case on a kind cluster would otherwise see it too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from daemonset_tester import (
    API_VERSIONS,
    COLOR_LABEL,
    NAME_LABEL,
    RETRY_TIMEOUT,
    REVISION_HASH,
    DaemonSetTester,
    has_readiness_gate,
    lifecycle_state,
    pod_names,
    pods_not_recreated,
    update_revision_field,
)
from harness import Cluster
from upstream_kit import NEW_WEBSERVER_IMAGE, WEBSERVER_IMAGE, Case, Obj, is_ready, upstream_case

# DaemonSetRetryTimeout is 5 minutes per wait; a case waits several times. Every case takes the API
# version of the upstream file it translates.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.parametrize("api_version", [pytest.param(v, id=v) for v in API_VERSIONS]),
]

DS_NAME = "e2e-ds"
LABEL = {NAME_LABEL: DS_NAME}


def inplace(max_unavailable: int | str) -> dict[str, Any]:
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": max_unavailable},
    }


async def create_and_wait(case: Case, tester: DaemonSetTester, ds: Obj) -> Obj:
    """Create, then "Check that daemon pods launch on every node of the cluster." and the status."""
    created = await tester.create(ds)
    await tester.wait_running_on_all_nodes(created, "daemon pods running on every node")
    await tester.check_status(DS_NAME)
    return created


async def generation_observed(tester: DaemonSetTester) -> Obj:
    def seen(ds: Obj) -> bool:
        return (ds.get("status") or {}).get("observedGeneration") == ds["metadata"]["generation"]

    return await tester.case.eventually(lambda: tester.get(DS_NAME), seen, "DaemonSet generation observed")


async def test_should_run_and_stop_simple_daemon(kruise_sandbox_all_gates: Cluster, api_version: str):
    """should run and stop simple daemon"""
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = await create_and_wait(case, tester, tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, {}))

        # Stop a daemon pod, check that the daemon pod is revived.
        pods = await tester.pods(LABEL)
        assert len(pods) > 0
        await case.kubectl("delete", "pod", pods[0]["metadata"]["name"], "--wait=false")
        await tester.wait_running_on_all_nodes(ds, "daemon pod revived")


async def test_should_run_and_stop_complex_daemon(kruise_sandbox_all_gates: Cluster, api_version: str):
    """should run and stop complex daemon"""
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        node_selector = {COLOR_LABEL: "blue"}
        ds = tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, {})
        ds["spec"]["template"]["spec"]["nodeSelector"] = dict(node_selector)
        ds = await tester.create(ds)

        # Initially, daemon pods should not be running on any nodes.
        await case.eventually(lambda: tester.running_on_no_nodes(ds), bool, "no daemon pods", RETRY_TIMEOUT)

        nodes = await tester.ready_schedulable_nodes()
        assert len(nodes) > 0
        try:
            # Change node label to blue, check that daemon pod is launched.
            new_node = await tester.set_node_labels(nodes[0], node_selector)
            blue = new_node["metadata"]["name"]
            await case.eventually(
                lambda: tester.daemon_pods_on(ds, [blue]), bool, "daemon pod on the blue node", RETRY_TIMEOUT
            )
            await tester.check_status(DS_NAME)

            # Update the node label to green, and wait for daemons to be unscheduled
            green_node = await tester.set_node_labels(nodes[0], {COLOR_LABEL: "green"})
            await case.eventually(
                lambda: tester.running_on_no_nodes(ds), bool, "daemon pod off the green node", RETRY_TIMEOUT
            )

            # Update DaemonSet node selector to green, and change its update strategy to RollingUpdate
            patch = {
                "spec": {
                    "template": {
                        "spec": {"nodeSelector": {COLOR_LABEL: green_node["metadata"]["labels"][COLOR_LABEL]}}
                    },
                    "updateStrategy": {"type": "RollingUpdate"},
                }
            }
            ds = await tester.patch(DS_NAME, "merge", patch)
            green = green_node["metadata"]["name"]
            await case.eventually(
                lambda: tester.daemon_pods_on(ds, [green]),
                bool,
                "daemon pod on the green node",
                RETRY_TIMEOUT,
            )
            await tester.check_status(DS_NAME)
        finally:
            await tester.set_node_labels(nodes[0], {})


async def test_should_retry_creating_failed_daemon_pods(kruise_sandbox_all_gates: Cluster, api_version: str):
    """should retry creating failed daemon pods"""
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = await create_and_wait(case, tester, tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, {}))

        # Set a daemon pod's phase to 'Failed', check that the daemon pod is revived.
        pod = (await tester.pods(LABEL))[0]
        name = pod["metadata"]["name"]
        await case.kubectl(
            "patch",
            "pod",
            name,
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            '{"status":{"phase":"Failed"}}',
        )
        await tester.wait_running_on_all_nodes(ds, "daemon pod revived")

        # Wait for the failed daemon pod to be completely deleted.
        await case.eventually(
            lambda: case.get("pod", name), lambda p: p is None, f"failed pod {name} deleted"
        )


async def test_should_only_inplace_image_if_update_daemonset_image_with_inplace_update_strategy(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """should only inplace image if update daemonset image with inplace update strategy"""
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, inplace(5))
        await create_and_wait(case, tester, ds)

        old_nodes = await tester.ready_schedulable_nodes()
        old_pods = await tester.pods(LABEL)
        assert len(old_pods) > 0

        def new_image(ds: Obj) -> None:
            ds["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_WEBSERVER_IMAGE

        await tester.update(DS_NAME, new_image)

        # Compare container info
        await case.eventually(
            lambda: tester.pods_have_image(LABEL, NEW_WEBSERVER_IMAGE),
            bool,
            "pods run the new image",
            RETRY_TIMEOUT,
        )
        # Compare Node info
        await case.eventually(
            tester.ready_schedulable_nodes, lambda n: n == old_nodes, "same nodes", RETRY_TIMEOUT
        )

        new_pods = await tester.pods(LABEL)
        assert len(new_pods) > 0
        # All pods should have readiness gate
        assert all(has_readiness_gate(p) for p in new_pods)
        # No pod recreate during updating
        assert pods_not_recreated(old_pods, new_pods)


async def test_should_upgrade_inplace_if_update_image_and_recreate_if_update_others(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Should upgrade inplace if update image and recreate if update others

    Upstream sleeps 5 s after each update "to make sure" the controller saw it before it waits for the
    DaemonSet to be ready; the translation waits for `status.observedGeneration` to reach the update's
    generation instead."""

    def new_image(ds: Obj) -> None:
        ds["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_WEBSERVER_IMAGE

    def new_env(ds: Obj) -> None:
        ds["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "foo", "value": "bar"}]

    # (update, pods keep their names): upstream's `expectRecreate` is compared with CheckPodHasNotRecreate
    cases = [(new_image, True), (new_env, False)]
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = await tester.create(tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, inplace(20)))
        await tester.wait_running_on_all_nodes(ds, "daemon pods running on every node")

        for update, not_recreated in cases:
            await tester.check_status(DS_NAME)
            old_nodes = await tester.ready_schedulable_nodes()
            old_pods = await tester.pods(LABEL)
            assert len(old_pods) > 0

            # Update daemonset spec
            await tester.update(DS_NAME, update)
            await generation_observed(tester)

            # Compare container info
            await case.eventually(
                lambda: tester.pods_have_image(LABEL, NEW_WEBSERVER_IMAGE),
                bool,
                "pods run the new image",
                RETRY_TIMEOUT,
            )
            # Compare Node info
            await case.eventually(
                tester.ready_schedulable_nodes, lambda n, old=old_nodes: n == old, "same nodes", RETRY_TIMEOUT
            )
            # Wait for daemonset ready
            await case.eventually(lambda: tester.ready(DS_NAME), bool, "DaemonSet ready", RETRY_TIMEOUT)

            new_pods = await tester.pods(LABEL)
            assert len(new_pods) > 0
            # All pods should have readiness gate
            assert all(has_readiness_gate(p) for p in new_pods)
            # No pod recreate during updating, expect ...
            assert pods_not_recreated(old_pods, new_pods) is not_recreated, (
                update.__name__,
                pod_names(old_pods),
                pod_names(new_pods),
            )


async def test_should_upgrade_one_by_one_on_steps_if_there_is_pre_delete_hook(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """should upgrade one by one on steps if there is pre-delete hook"""
    hook = "my-pre-delete"
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = tester.new_daemonset(DS_NAME, LABEL, WEBSERVER_IMAGE, inplace(1))
        ds["spec"]["lifecycle"] = {"preDelete": {"labelsHandler": {hook: "true"}}}
        ds["spec"]["template"]["metadata"]["labels"] = {NAME_LABEL: DS_NAME, hook: "true"}
        ds["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
        await create_and_wait(case, tester, ds)
        old_pods = await tester.pods(LABEL)

        def new_resources(ds: Obj) -> None:
            container = ds["spec"]["template"]["spec"]["containers"][0]
            container["resources"] = {"requests": {"cpu": "120m"}}
            # with InPlaceWorkloadVerticalScaling a resize of requests alone would not delete the pod
            container["env"] = [*(container.get("env") or []), {"name": "test", "value": "test"}]

        await tester.update(DS_NAME, new_resources)
        updated = await case.eventually(
            lambda: tester.get(DS_NAME),
            lambda d: (d.get("status") or {}).get("observedGeneration") == 2,
            "observedGeneration 2",
            timeout=30,
        )
        new_hash = updated["status"][update_revision_field(api_version)]

        # There should be one pod with PreparingDelete and no pods been deleted
        def one_preparing(pods: list[Obj]) -> bool:
            return sum(lifecycle_state(p) == "PreparingDelete" for p in pods) == 1

        pods = await case.eventually(lambda: tester.pods(LABEL), one_preparing, "one pod PreparingDelete", 30)
        assert pod_names(pods) == pod_names(old_pods)
        preparing = next(p for p in pods if lifecycle_state(p) == "PreparingDelete")["metadata"]["name"]

        # Remove the hook label and wait it to be recreated
        await case.kubectl(
            "patch",
            "pod",
            preparing,
            "--type",
            "strategic",
            "-p",
            f'{{"metadata":{{"labels":{{"{hook}":null}}}}}}',
        )
        await case.eventually(
            lambda: case.get("pod", preparing), lambda p: p is None, f"{preparing} deleted", 60
        )

        def one_updated(pods: list[Obj]) -> bool:
            return sum((p["metadata"].get("labels") or {}).get(REVISION_HASH) == new_hash for p in pods) == 1

        await case.eventually(lambda: tester.pods(LABEL), one_updated, "one pod of the new revision", 60)


async def test_should_successfully_surging_update_daemonset_with_min_ready_seconds(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """should successfully surging update daemonset with minReadySeconds

    Upstream drops the errors of its two last polls (only the assertions inside them can fail it); here
    both must also finish. Upstream truncates the new pod's ready age to whole seconds before comparing
    it with minReadySeconds (> 10 s read as >= 11 s); the translation compares the age itself, since the
    sandbox deletes the old pod within a second of the new one becoming available."""
    async with upstream_case(kruise_sandbox_all_gates, "daemonset") as case:
        tester = DaemonSetTester(case, api_version)
        ds = tester.new_daemonset(
            DS_NAME, LABEL, WEBSERVER_IMAGE,
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}},
        )  # fmt: skip
        ds["spec"]["minReadySeconds"] = 10
        await create_and_wait(case, tester, ds)
        ds = await tester.get(DS_NAME)
        desired = ds["status"]["desiredNumberScheduled"]

        # Get all old daemon pods on nodes
        old = await tester.nodes_to_pods(LABEL)
        assert len(old) == desired
        waiting = set(old)
        for pods in old.values():
            assert len(pods) == 1
            assert is_ready(pods[0])

        def new_image(ds: Obj) -> None:
            ds["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_WEBSERVER_IMAGE

        await tester.update(DS_NAME, new_image)

        # Check all surging Pods created
        async def surged() -> bool:
            by_node = await tester.nodes_to_pods(LABEL)
            assert len(by_node) == desired, sorted(by_node)
            for node in sorted(waiting):
                pods = by_node.get(node, [])
                if len(pods) < 2:
                    continue
                for pod in pods:
                    if pod["metadata"]["name"] == old[node][0]["metadata"]["name"]:
                        assert not pod["metadata"].get("deletionTimestamp"), pod["metadata"]["name"]
                waiting.discard(node)
            return not waiting

        await case.eventually(surged, bool, "a surge pod beside every old pod", timeout=60)

        # Check all old Pods deleted
        async def replaced() -> bool:
            by_node = await tester.nodes_to_pods(LABEL)
            assert len(by_node) == desired, sorted(by_node)
            finished = True
            for node, pods in by_node.items():
                if len(pods) != 1:
                    finished = False
                    continue
                pod = pods[0]
                assert pod["metadata"]["name"] != old[node][0]["metadata"]["name"]
                assert is_ready(pod)
                ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
                since = datetime.fromisoformat(ready["lastTransitionTime"].replace("Z", "+00:00"))
                assert (datetime.now(UTC) - since).total_seconds() > ds["spec"]["minReadySeconds"], pod[
                    "metadata"
                ]["name"]
            return finished

        await case.eventually(replaced, bool, "every old pod replaced", timeout=60)
