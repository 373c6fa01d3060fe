"""Upstream's CloneSet e2e, context "CloneSet Creating" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/cloneset.go), translated to kubectl on the AllAlpha sandbox: same objects, same
steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here."""

from __future__ import annotations

import json

from cloneset_tester import (
    AVAILABLE,
    LIFECYCLE_STATE,
    MAX_INT32,
    TEN_MINUTES,
    deadline_exceeded,
    upstream_case,
)
from harness import Cluster


async def test_creates_with_host_network_pod(kruise_sandbox_all_gates: Cluster):
    """creates with hostNetwork pod, specified containerPort without specifying hostPort"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"hostnetwork-port-{case.rand}", 1)
        cs["spec"]["template"]["spec"]["hostNetwork"] = True
        cs["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
        cs["spec"]["progressDeadlineSeconds"] = TEN_MINUTES
        name = (await case.create(cs))["metadata"]["name"]
        await case.eventually_status(name, "readyReplicas", 1)

        for pod in await case.pods(name):
            # hostPort should default to containerPort
            port = pod["spec"]["containers"][0]["ports"][0]
            assert port["hostPort"] == port["containerPort"]

        await case.eventually_progressing(name, AVAILABLE)


async def test_creates_with_lifecycle_pre_normal_finalizer(kruise_sandbox_all_gates: Cluster):
    """creates with lifecycle preNormal finalizer"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1)
        cs["spec"]["lifecycle"] = {"preNormal": {"finalizersHandler": ["finalizers.sigs.k8s.io/test"]}}
        cs["spec"]["progressDeadlineSeconds"] = 11
        name = (await case.create(cs))["metadata"]["name"]

        # pod is ready but lifecycle should stay at PreparingNormal
        await case.eventually_status(name, "readyReplicas", 1)
        # availableReplicas does not reach 1
        created = await case.get(name)
        await case.eventually_progressing(name, deadline_exceeded(created["status"]["updateRevision"]))

        pods = await case.pods(name)
        for pod in pods:
            assert pod["metadata"]["labels"][LIFECYCLE_STATE] == "PreparingNormal"

        # the preNormal hook is done: the pod carries the finalizer
        pod_name = pods[0]["metadata"]["name"]
        await case.kubectl(
            "patch", "pod", pod_name, "--type=merge",
            "-p", json.dumps({"metadata": {"finalizers": ["finalizers.sigs.k8s.io/test"]}}),
        )  # fmt: skip

        async def only_state() -> str:
            pods = await case.pods(name)
            assert len(pods) == 1
            return pods[0]["metadata"]["labels"].get(LIFECYCLE_STATE, "")

        await case.eventually(only_state, "Normal", "pod lifecycle state")

        # remove the pod's finalizers
        await case.kubectl("patch", "pod", pod_name, "--type=merge", "-p", '{"metadata":{"finalizers":null}}')

        async def available_condition():
            cs = await case.get(name)
            if (cs.get("status") or {}).get("availableReplicas") != 1:
                return None
            return await case.progressing(name)

        await case.eventually(available_condition, AVAILABLE, f"{name} available")


async def test_creates_with_unschedulable_scheduler(kruise_sandbox_all_gates: Cluster):
    """creates with unschedulable scheduler"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1)
        cs["spec"]["template"]["spec"]["schedulerName"] = "unschedulable"
        cs["spec"]["progressDeadlineSeconds"] = 8
        name = (await case.create(cs))["metadata"]["name"]
        await case.eventually_status(name, "replicas", 1)

        async def pending_state() -> str:
            pod = (await case.pods(name))[0]
            if (pod.get("status") or {}).get("phase") == "Pending":
                return pod["metadata"]["labels"].get(LIFECYCLE_STATE, "")
            return ""

        # the pod is pending and its lifecycle stays at PreparingNormal
        await case.consistently(pending_state, "PreparingNormal", "pending pod's lifecycle state", 10)

        cs = await case.get(name)
        await case.eventually_progressing(name, deadline_exceeded(cs["status"]["updateRevision"]), 20)

        def default_scheduler(obj):
            obj["spec"]["template"]["spec"]["schedulerName"] = ""

        await case.update(name, default_scheduler)
        await case.eventually_status(name, "readyReplicas", 1)

        async def only_state() -> str:
            pods = await case.pods(name)
            assert len(pods) == 1
            return pods[0]["metadata"]["labels"].get(LIFECYCLE_STATE, "")

        await case.eventually(only_state, "Normal", "pod lifecycle state")
        await case.eventually_progressing(name, AVAILABLE)


async def test_creates_with_max_int32_progress_deadline_seconds(kruise_sandbox_all_gates: Cluster):
    """creates with maxInt32 progressDeadlineSeconds"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"pds-{case.rand}", 1)
        cs["spec"]["progressDeadlineSeconds"] = MAX_INT32
        name = (await case.create(cs))["metadata"]["name"]
        await case.eventually_status(name, "readyReplicas", 1)

        async def deadline():
            return (await case.get(name))["spec"].get("progressDeadlineSeconds")

        await case.eventually(deadline, MAX_INT32, "spec.progressDeadlineSeconds")
        # with no deadline the Progressing condition is not kept
        await case.eventually_progressing(name, None)

        def ten_minutes(obj):
            obj["spec"]["progressDeadlineSeconds"] = TEN_MINUTES

        await case.update(name, ten_minutes)
        await case.eventually_status(name, "readyReplicas", 1)
        await case.eventually(deadline, TEN_MINUTES, "spec.progressDeadlineSeconds")
        await case.eventually_progressing(name, AVAILABLE)


async def test_creates_with_max_int32_min_ready_and_progress_deadline(kruise_sandbox_all_gates: Cluster):
    """creates with maxInt32 minReadySeconds and maxInt32 progressDeadlineSeconds"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"pds-{case.rand}", 1)
        cs["spec"]["minReadySeconds"] = MAX_INT32
        cs["spec"]["progressDeadlineSeconds"] = MAX_INT32
        name = (await case.create(cs))["metadata"]["name"]
        await case.eventually_status(name, "readyReplicas", 1)

        async def spec_field(field: str):
            return (await case.get(name))["spec"].get(field)

        await case.eventually(lambda: spec_field("minReadySeconds"), MAX_INT32, "spec.minReadySeconds")
        await case.eventually(
            lambda: spec_field("progressDeadlineSeconds"), MAX_INT32, "spec.progressDeadlineSeconds"
        )
        await case.eventually_progressing(name, None)

        # minReadySeconds to 10 and progressDeadlineSeconds to nil
        def shorter(obj):
            obj["spec"]["minReadySeconds"] = 10
            obj["spec"].pop("progressDeadlineSeconds", None)

        await case.update(name, shorter)
        await case.eventually_status(name, "readyReplicas", 1)
        await case.eventually_progressing(name, None)
