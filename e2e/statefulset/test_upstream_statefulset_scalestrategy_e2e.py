"""Upstream's Advanced StatefulSet e2e, Describe "StatefulSet v1beta1", context "Basic StatefulSet
functionality [StatefulSetBasic]" (openkruise/kruise v1.9.0 test/e2e/apps/v1beta1/statefulset.go): the
scale-strategy case, translated to kubectl on the AllAlpha sandbox with the same objects, steps and
assertions. It lives apart from test_upstream_statefulset_e2e.py (the rest of that context) because it
leans on the fake runtime knowing busybox: with its command removed, busybox runs its default `sh`, which
exits at once without stdin, so every pod crash-loops - Running and not Ready - as on a node
(docs/sandbox.md, "What a simulated image's command does")."""

from __future__ import annotations

import logging

import pytest
from harness import Cluster
from statefulset_tester import (
    REVISION_LABEL,
    STS_WAIT,
    StatefulSetTester,
    headless_service,
    new_statefulset,
    ordinal,
    revision_of,
    sort_stateful_pods,
)
from upstream_kit import BUSYBOX_IMAGE, Obj, is_ready, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
log = logging.getLogger(__name__)

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"
IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"


async def wait_for_running(sst: StatefulSetTester, running: int, ready: int, sts: Obj) -> list[Obj]:
    """`WaitForRunning`: exactly `running` pods, all Running, those with an ordinal below `ready` Ready
    and the others not (more pods is a failure, as upstream's poll returns an error)."""

    async def probe() -> list[Obj]:
        pods = await sst.pods(sts)
        assert len(pods) <= running, f"Too many pods scheduled, expected {running} got {len(pods)}"
        return pods

    def done(pods: list[Obj]) -> bool:
        return len(pods) == running and all(
            (p.get("status") or {}).get("phase") == "Running" and is_ready(p) == (ordinal(p) < ready)
            for p in pods
        )

    what = f"{running} pods running, ordinals below {ready} ready and the rest not"
    return await sst.case.eventually(probe, done, what, STS_WAIT)


async def test_should_can_update_pods_when_the_statefulset_scale_strategy_is_set(
    kruise_sandbox_all_gates: Cluster,
):
    """Should can update pods when the statefulset scale strategy is set

    Upstream's `ConfirmStatefulPodCount(5, ss, time.Second, false)` is not hard: a count other than 5 is
    only logged, so it asserts nothing; here it is one logged read of the pod count."""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        await case.create(headless_service(HEADLESS_SVC, LABELS))
        sst = StatefulSetTester(case)

        # Creating statefulset ss
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 3, [], [], LABELS)
        spec = ss["spec"]
        container = spec["template"]["spec"]["containers"][0]
        container.update(name="busybox", image=BUSYBOX_IMAGE, command=["sleep", "3600"])
        spec["podManagementPolicy"] = "Parallel"
        spec["template"]["spec"]["restartPolicy"] = "Always"
        spec["updateStrategy"]["rollingUpdate"] = {
            "minReadySeconds": 3,
            "podUpdatePolicy": "InPlaceIfPossible",
        }
        spec["scaleStrategy"] = {"maxUnavailable": 2}
        spec["template"]["spec"].setdefault("readinessGates", []).append(
            {"conditionType": IN_PLACE_UPDATE_READY}
        )
        ss = await sst.create(ss)
        await sst.wait_for_running_and_ready(ss["spec"]["replicas"], ss)

        # Scaling up stateful set ss to 10 replicas and check create new pod equal MaxUnavailable
        await sst.update_with_retries(SS_NAME, lambda s: s["spec"].update(replicas=10))
        count = len(await sst.pods(ss))
        if count != 5:
            log.info("StatefulSet %s has not reached scale 5, at %d", SS_NAME, count)
        await sst.wait_for_running_and_ready(10, ss)

        # Confirming that stateful can update all pods to be unhealthy
        def unhealthy(update: Obj) -> None:
            update["spec"]["scaleStrategy"]["maxUnavailable"] = "100%"
            update["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = "100%"
            update["spec"]["template"]["spec"]["containers"][0].pop("command", None)  # Command = []string{}

        ss = await sst.update_with_retries(SS_NAME, unhealthy)
        await wait_for_running(sst, 10, 0, ss)
        await sst.wait_for_status_ready_replicas(ss, 0)
        ss = await sst.wait_for_status(ss)

        # Confirming that stateful can update all pods if any stateful pod is unhealthy
        def healthy(update: Obj) -> None:
            update["spec"]["template"]["metadata"]["labels"]["test-update"] = "yes"
            update["spec"]["template"]["spec"]["containers"][0]["command"] = ["sleep", "180"]

        ss = await sst.update_with_retries(SS_NAME, healthy)
        await sst.wait_for_running_and_ready(10, ss)
        await sst.wait_for_status_ready_replicas(ss, 10)

        def all_updated(current: Obj, pods: list[Obj]) -> bool:
            update = (current.get("status") or {}).get("updateRevision")
            return all(revision_of(p) == update for p in pods)

        what = f"every pod's {REVISION_LABEL} at the update revision"
        ss, pods = await sst.wait_for_state(ss, all_updated, what)
        pods = sort_stateful_pods(pods)

        # Confirming Pods were updated successful
        for pod in pods:
            assert pod["metadata"]["labels"].get("test-update") == "yes", pod["metadata"]
