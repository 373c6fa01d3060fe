"""Upstream's Advanced StatefulSet e2e cases that exec into the pods (openkruise/kruise v1.9.0
test/e2e/apps/v1beta1/statefulset.go, context "Basic StatefulSet functionality [StatefulSetBasic]"),
translated to kubectl on real nodes (`kruise sandbox up --runtime containerd`, upstream's e2e gates): same
objects, same steps, same assertions.

They hold new pods unready with an exec readiness probe (`test -f /data/statefulset-continue`) and release
them by writing that file through `kubectl exec`; they read hostnames and write to the claim from inside the
containers. The fake runtime serves no exec, so these run here; the other cases of the file run on it
(e2e/statefulset/). The claim template names no class, so the cluster gets kind's default class `standard`
(on the sandbox's provisioner); a real node mounts a bound claim's own directory, which follows the claim
to whichever node its next pod lands on, as upstream's storage does.

`registry.k8s.io/e2e-test-images/nginx:1.14-4` is the sandbox's stand-in under that name (docs/sandbox.md):
busybox httpd serving /usr/share/nginx/html on port 80, with busybox's shell and tools. One real cluster for
the module; each case works in a namespace of its own, as upstream's framework gives every `It`."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from harness import Cluster
from statefulset.statefulset_tester import (
    NEW_NGINX_IMAGE,
    ensure_default_class,
    headless_service,
    new_statefulset,
    revision_of,
    set_image,
)
from statefulset_exec import (
    ExecStatefulSetTester,
    PodWatch,
    pause_new_pods,
    rollback_with_update_fn_test,
    set_http_probe,
)
from upstream_kit import Case, Obj, upstream_case

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(900)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES: the manager flag of upstream's e2e deployment; a pod subnet
# of its own, so a real-node sandbox left running elsewhere on the machine does not refuse this one
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
    "--pod-subnet",
    "198.19.192.0/19",
)

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"
STATEFUL_MOUNTS = [{"name": "datadir", "mountPath": "/data/"}]
POD_MOUNTS = [{"name": "home", "mountPath": "/home"}]
STS_WAIT = 300.0  # StatefulSetTimeout (10 minutes upstream)
# upstream's "no deadlock" case sleeps a minute before `WaitForRunning(1, 0)`, giving a wrong controller
# the time to create the second pod early; here every read of a 10 s window must find exactly one pod
NO_EARLY_POD_WINDOW = 10.0
CONFIRM_WINDOW = 10.0  # ConfirmStatefulPodCount's 10 s


async def _basic(case: Case, replicas: int) -> tuple[ExecStatefulSetTester, Obj]:
    """The context's BeforeEach (`NewStatefulSet` with the `datadir` claim template and the `home` host
    path; the headless service), the case's replicas and `PauseNewPods`."""
    await ensure_default_class(case.cluster)
    ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 2, STATEFUL_MOUNTS, POD_MOUNTS, LABELS)
    await case.create(headless_service(HEADLESS_SVC, LABELS))
    ss["spec"]["replicas"] = replicas
    pause_new_pods(ss)
    return ExecStatefulSetTester(case), ss


def _controller_ref(pod: Obj) -> Obj | None:
    """`metav1.GetControllerOf`."""
    return next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)


async def _wait_adopted(case: Case, name: str, ss: Obj) -> None:
    """`WaitForPodCondition(..., "adopted", ...)`: a controller reference, and only the set's (a wrong one
    fails at once, as upstream's condition returns an error)."""

    def adopted(pod: Obj) -> bool:
        ref = _controller_ref(pod)
        if ref is None:
            return False
        wanted = ("StatefulSet", ss["metadata"]["name"], ss["metadata"]["uid"])
        got = (ref.get("kind"), ref.get("name"), ref.get("uid"))
        assert got == wanted, f"pod has wrong controllerRef: {ref}"
        return True

    await case.eventually(lambda: case.must_get("pods", name), adopted, f"pod {name} adopted", STS_WAIT)


async def test_should_provide_basic_identity(real_cluster: Cluster) -> None:
    """should provide basic identity"""
    async with upstream_case(real_cluster, "statefulset") as case:
        sst, ss = await _basic(case, 3)
        await sst.create(ss)

        # Saturating stateful set ss
        await sst.saturate(ss)
        # Verifying statefulset mounted data directory is usable
        await sst.check_mount(ss, "/data")
        # Verifying statefulset provides a stable hostname for each pod
        await sst.check_hostname(ss)
        # Verifying statefulset set proper service name
        got = ss["spec"]["serviceName"]
        assert got == HEADLESS_SVC, f"Wrong service name governing statefulset: {got}"
        await sst.exec_in_stateful_pods(ss, "echo $(hostname) | dd of=/data/hostname conv=fsync")

        # Restarting statefulset ss
        await sst.restart(ss)
        await sst.wait_for_running_and_ready(3, ss)
        # Verifying statefulset mounted data directory is usable
        await sst.check_mount(ss, "/data")
        await sst.exec_in_stateful_pods(
            ss, 'if [ "$(cat /data/hostname)" = "$(hostname)" ]; then exit 0; else exit 1; fi'
        )


async def test_should_adopt_matching_orphans_and_release_non_matching_pods(real_cluster: Cluster) -> None:
    """should adopt matching orphans and release non-matching pods"""
    async with upstream_case(real_cluster, "statefulset") as case:
        sst, ss = await _basic(case, 1)
        ss = await sst.create(ss)

        # Saturating stateful set ss
        await sst.saturate(ss)
        pods = await sst.pods(ss)
        assert len(pods) == ss["spec"]["replicas"]

        # Checking that stateful set pods are created with ControllerRef
        pod = pods[0]
        ref = _controller_ref(pod)
        assert ref is not None
        assert ref["kind"] == "StatefulSet"
        assert ref["name"] == ss["metadata"]["name"]
        assert ref["uid"] == ss["metadata"]["uid"]

        # Orphaning one of the stateful set's pods
        name = pod["metadata"]["name"]
        await case.update("pods", name, lambda p: p["metadata"].pop("ownerReferences", None))
        # Checking that the stateful set readopts the pod
        await _wait_adopted(case, name, ss)

        # Removing the labels from one of the stateful set's pods
        prev_labels = pod["metadata"]["labels"]
        await case.update("pods", name, lambda p: p["metadata"].pop("labels", None))
        # Checking that the stateful set releases the pod
        await case.eventually(
            lambda: case.must_get("pods", name),
            lambda p: _controller_ref(p) is None,
            f"pod {name} released",
            STS_WAIT,
        )

        # Readding labels to the stateful set's pod
        await case.update("pods", name, lambda p: p["metadata"].__setitem__("labels", prev_labels))
        # Checking that the stateful set readopts the pod
        await _wait_adopted(case, name, ss)


async def test_should_not_deadlock_when_a_pods_predecessor_fails(real_cluster: Cluster) -> None:
    """should not deadlock when a pod's predecessor fails"""
    async with upstream_case(real_cluster, "statefulset") as case:
        sst, ss = await _basic(case, 2)
        await sst.create(ss)

        await sst.wait_for_running(1, 0, ss)
        await case.consistently(
            lambda: sst.pods(ss), lambda pods: len(pods) == 1, "only the first pod", NO_EARLY_POD_WINDOW
        )
        await sst.wait_for_running(1, 0, ss)

        # Resuming stateful pod at index 0.
        await sst.resume_next_pod(ss)
        # Waiting for stateful pod at index 1 to enter running.
        await sst.wait_for_running(2, 1, ss)

        # Now we have 1 healthy and 1 unhealthy stateful pod. Deleting the healthy stateful pod should *not*
        # create a new stateful pod till the remaining stateful pod becomes healthy, which won't happen till
        # we set the healthy bit.

        # Deleting healthy stateful pod at index 0 (grace period 0). kubectl waits until it is gone, so the
        # wait that follows sees its successor, not it (upstream races its kubelet on that).
        await case.kubectl("delete", "pod", f"{SS_NAME}-0", "--grace-period=0", "--force")
        # Confirming stateful pod at index 0 is recreated.
        await sst.wait_for_running(2, 1, ss)
        # Resuming stateful pod at index 1.
        await sst.resume_next_pod(ss)
        # Confirming all stateful pods in statefulset are created.
        await sst.wait_for_running_and_ready(2, ss)


async def _rollback_test(sst: ExecStatefulSetTester, ss: Obj) -> None:
    """`rollbackTest`: a rolling update to the new image and back."""
    old_image = ss["spec"]["template"]["spec"]["containers"][0]["image"]

    def on_image(image: str) -> Callable[[list[Obj], str], None]:
        def validate(pods: list[Obj], revision: str) -> None:
            for pod in pods:
                name = pod["metadata"]["name"]
                assert pod["spec"]["containers"][0]["image"] == image, f"{name} is not on {image}"
                assert revision_of(pod) == revision, f"pod {name} revision is not {revision}"

        return validate

    await rollback_with_update_fn_test(
        sst,
        ss,
        set_image(NEW_NGINX_IMAGE),
        set_image(old_image),
        on_image(NEW_NGINX_IMAGE),
        on_image(old_image),
    )


async def test_should_perform_rolling_updates_and_roll_backs_of_template_modifications_with_pvcs(
    real_cluster: Cluster,
) -> None:
    """should perform rolling updates and roll backs of template modifications with PVCs"""
    async with upstream_case(real_cluster, "statefulset") as case:
        await ensure_default_class(case.cluster)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 2, STATEFUL_MOUNTS, POD_MOUNTS, LABELS)
        await case.create(headless_service(HEADLESS_SVC, LABELS))
        # Creating a new StatefulSet with PVCs
        ss["spec"]["replicas"] = 3
        await _rollback_test(ExecStatefulSetTester(case), ss)


async def test_should_perform_rolling_updates_and_roll_backs_of_template_modifications(
    real_cluster: Cluster,
) -> None:
    """should perform rolling updates and roll backs of template modifications"""
    async with upstream_case(real_cluster, "statefulset") as case:
        await case.create(headless_service(HEADLESS_SVC, LABELS))
        # Creating a new StatefulSet
        ss = new_statefulset("ss2", case.ns, HEADLESS_SVC, 3, [], [], LABELS)
        await _rollback_test(ExecStatefulSetTester(case), ss)


async def _scale_with_unhealthy_pods(
    sst: ExecStatefulSetTester, ss: Obj, *, running: int, replicas: int, expect: int, hard: bool
) -> None:
    """The scaling cases' step: break every pod's HTTP probe, wait until `running` pods run unready and
    the status counts none ready, ask for `replicas`, and confirm `expect` pods through the window
    (`ConfirmStatefulPodCount`'s `hard`). The caller restores the probes."""
    await sst.break_http_probe(ss)
    await sst.wait_for_running_and_not_ready(running, ss)
    await sst.wait_for_status_ready_replicas(ss, 0)
    await sst.update_replicas(ss, replicas)
    await sst.confirm_stateful_pod_count(expect, ss, CONFIRM_WINDOW, hard=hard)


async def test_scaling_should_happen_in_predictable_order_and_halt_if_any_stateful_pod_is_unhealthy(
    real_cluster: Cluster,
) -> None:
    """Scaling should happen in predictable order and halt if any stateful pod is unhealthy"""
    async with upstream_case(real_cluster, "statefulset") as case:
        await case.create(headless_service(HEADLESS_SVC, LABELS))
        sst = ExecStatefulSetTester(case)
        # Initializing watcher for selector baz=blah,foo=bar
        watcher = await PodWatch.start(sst, LABELS)
        try:
            # Creating stateful set ss
            ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 1, [], [], LABELS)
            set_http_probe(ss)
            ss = await sst.create(ss)
            # Waiting until all stateful set ss replicas will be running
            await sst.wait_for_running_and_ready(int(ss["spec"]["replicas"]), ss)

            # Confirming that stateful set scale up will halt with unhealthy stateful pod
            await _scale_with_unhealthy_pods(sst, ss, running=1, replicas=3, expect=1, hard=True)

            # Scaling up stateful set ss to 3 replicas and waiting until all of them will be running
            await sst.restore_http_probe(ss)
            await sst.wait_for_running_and_ready(3, ss)

            # Verifying that stateful set ss was scaled up in order
            await watcher.until_order(sst, "ADDED", [f"{SS_NAME}-0", f"{SS_NAME}-1", f"{SS_NAME}-2"])
        finally:
            await watcher.stop()

        # Scale down will halt with unhealthy stateful pod
        watcher = await PodWatch.start(sst, LABELS)
        try:
            # the watch's initial list (upstream's Watch starts at once; kubectl lists first)
            await watcher.until_order(sst, "ADDED", [f"{SS_NAME}-{i}" for i in range(3)])
            await _scale_with_unhealthy_pods(sst, ss, running=3, replicas=0, expect=3, hard=True)

            # Scaling down stateful set ss to 0 replicas and waiting until none of pods will run
            await sst.restore_http_probe(ss)
            await sst.scale(ss, 0)

            # Verifying that stateful set ss was scaled down in reverse order
            await watcher.until_order(sst, "DELETED", [f"{SS_NAME}-2", f"{SS_NAME}-1", f"{SS_NAME}-0"])
        finally:
            await watcher.stop()


async def test_burst_scaling_should_run_to_completion_even_with_unhealthy_pods(real_cluster: Cluster) -> None:
    """Burst scaling should run to completion even with unhealthy pods"""
    async with upstream_case(real_cluster, "statefulset") as case:
        await case.create(headless_service(HEADLESS_SVC, LABELS))
        sst = ExecStatefulSetTester(case)
        # Creating stateful set ss
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 1, [], [], LABELS)
        ss["spec"]["podManagementPolicy"] = "Parallel"
        set_http_probe(ss)
        ss = await sst.create(ss)
        # Waiting until all stateful set ss replicas will be running
        await sst.wait_for_running_and_ready(int(ss["spec"]["replicas"]), ss)

        # Confirming that stateful set scale up will not halt with unhealthy stateful pod
        await _scale_with_unhealthy_pods(sst, ss, running=1, replicas=3, expect=3, hard=False)

        # Scaling up stateful set ss to 3 replicas and waiting until all of them will be running
        await sst.restore_http_probe(ss)
        await sst.wait_for_running_and_ready(3, ss)

        # Scale down will not halt with unhealthy stateful pod
        await _scale_with_unhealthy_pods(sst, ss, running=3, replicas=0, expect=0, hard=False)

        # Scaling down stateful set ss to 0 replicas and waiting until none of pods will run
        await sst.restore_http_probe(ss)
        await sst.scale(ss, 0)
        await sst.wait_for_status_replicas(ss, 0)
