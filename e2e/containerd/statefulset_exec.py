"""The parts of upstream's `StatefulSetTester` (test/e2e/framework/v1beta1/statefulset_utils.go) that reach
into the containers through `kubectl exec`, so only a real-node sandbox serves them: `RunHostCmdWithRetries`,
the pause probe (`PauseNewPods` / `ResumeNextPod` / `Saturate`, whose marker file lives on the claim, so a
recreated pod finds it), `CheckMount`, `CheckHostname`, `ExecInStatefulPods`, the nginx HTTP probe upstream
breaks by moving index.html away, and the waits and scaling those cases pair them with. The waits every
case shares (`WaitForRunningAndReady`, `WaitForStatus`, ...) are `statefulset_tester`'s."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from harness import json_documents, kubectl_binary

# e2e/statefulset/ is no package of its own; e2e/ is on the path, so it imports as one (reused, not copied)
from statefulset.statefulset_tester import (
    NEW_NGINX_IMAGE,
    STS_WAIT,
    StatefulSetTester,
    ordinal,
    revision_of,
    sort_stateful_pods,
    status,
)
from upstream_kit import Obj, is_ready

STATEFUL_POD_TIMEOUT = 300.0  # StatefulPodTimeout: 5 minutes upstream
CONTINUE_FILE = "/data/statefulset-continue"
PAUSE_PROBE: Obj = {
    "exec": {"command": ["test", "-f", CONTINUE_FILE]},
    "periodSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 1,
}
HTTP_PROBE: Obj = {
    "httpGet": {"path": "/index.html", "port": 80},
    "periodSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 1,
}
NGINX_ROOT = "/usr/share/nginx/html"


def phase(pod: Obj) -> str | None:
    return (pod.get("status") or {}).get("phase")


def set_http_probe(ss: Obj) -> None:
    """`SetHTTPProbe`: nginx's readiness is GET /index.html, which `break_http_probe` takes away."""
    ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(HTTP_PROBE)


def pause_new_pods(ss: Obj) -> None:
    """`PauseNewPods`: a pod is Ready only once `resume_next_pod` wrote the continue file."""
    ss["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = dict(PAUSE_PROBE)


def has_pause_probe(pod: Obj) -> bool:
    probe = pod["spec"]["containers"][0].get("readinessProbe") or {}
    return (probe.get("exec") or {}).get("command") == PAUSE_PROBE["exec"]["command"]


class ExecStatefulSetTester(StatefulSetTester):
    """`StatefulSetTester` with the calls that exec into the pods."""

    async def exec(self, pod_name: str, cmd: str) -> tuple[int, str, str]:
        """`RunHostCmd`: `kubectl exec <pod> -- /bin/sh -x -c <cmd>`; exit code, stdout, stderr apart (the
        trace of `-x` is on stderr, and `CheckHostname` compares stdout)."""
        process = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(self.case.cluster.kubeconfig), "exec", "-n", self.case.ns,
            pod_name, "--", "/bin/sh", "-x", "-c", cmd,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate()
        return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")

    async def run_host_cmd_with_retries(self, pod_name: str, cmd: str) -> str:
        """`RunHostCmdWithRetries`: exec until it succeeds or `StatefulPodTimeout` passes; its stdout."""

        async def attempt() -> tuple[int, str, str]:
            return await self.exec(pod_name, cmd)

        _, out, _ = await self.case.eventually(
            attempt, lambda read: read[0] == 0, f"`{cmd}` in {pod_name}", STATEFUL_POD_TIMEOUT
        )
        return out

    async def exec_in_stateful_pods(self, ss: Obj, cmd: str) -> None:
        """`ExecInStatefulPods`: `cmd` in every pod of the set, in list order."""
        for pod in await self.pods(ss):
            await self.run_host_cmd_with_retries(pod["metadata"]["name"], cmd)

    async def check_mount(self, ss: Obj, mount_path: str) -> None:
        """`CheckMount`: the mount lists, walks and takes a new file in every pod."""
        for cmd in (
            f"ls -idlh {mount_path}",
            f"find {mount_path}",
            f"touch {mount_path.rstrip('/')}/{time.time_ns()}",
        ):
            await self.exec_in_stateful_pods(ss, cmd)

    async def check_hostname(self, ss: Obj) -> None:
        """`CheckHostname`: every pod's hostname is its name."""
        for pod in await self.pods(ss):
            name = pod["metadata"]["name"]
            hostname = await self.run_host_cmd_with_retries(name, "printf $(hostname)")
            assert hostname == name, f"unexpected hostname ({hostname}) and stateful pod name ({name})"

    async def wait_for_running(self, running: int, ready: int, ss: Obj) -> list[Obj]:
        """`WaitForRunning`: exactly `running` pods Running, those below ordinal `ready` Ready and the
        others not (more pods than `running` fails at once, as upstream's poll returns an error)."""

        async def probe() -> list[Obj]:
            pods = sort_stateful_pods(await self.pods(ss))
            assert len(pods) <= running, f"Too many pods scheduled, expected {running} got {len(pods)}"
            return pods

        def done(pods: list[Obj]) -> bool:
            return len(pods) == running and all(
                phase(p) == "Running" and (ordinal(p) < ready) == is_ready(p) for p in pods
            )

        return await self.case.eventually(probe, done, f"{running} pods running, {ready} ready", STS_WAIT)

    async def wait_for_running_and_not_ready(self, count: int, ss: Obj) -> list[Obj]:
        """`WaitForRunningAndNotReady`."""
        return await self.wait_for_running(count, 0, ss)

    async def resume_next_pod(self, ss: Obj) -> None:
        """`ResumeNextPod`: write the continue file in the one paused pod (every pod must be Running; two
        paused pods at once fail)."""
        resumed = ""
        for pod in await self.pods(ss):
            assert phase(pod) == "Running", f"Found pod in phase {phase(pod)!r}, cannot resume"
            if is_ready(pod) or not has_pause_probe(pod):
                continue
            name = pod["metadata"]["name"]
            assert not resumed, f"Found multiple paused stateful pods: {name} and {resumed}"
            await self.run_host_cmd_with_retries(
                name, f"dd if=/dev/zero of={CONTINUE_FILE} bs=1 count=1 conv=fsync"
            )
            resumed = name

    async def saturate(self, ss: Obj) -> None:
        """`Saturate`: resume the pods one by one, each once it runs and its predecessors are ready."""
        for i in range(int(ss["spec"]["replicas"])):
            await self.wait_for_running(i + 1, i, ss)
            await self.resume_next_pod(ss)

    async def update_replicas(self, ss: Obj, count: int) -> Obj:
        """`UpdateReplicas`."""
        return await self.update_with_retries(ss["metadata"]["name"], _replicas(count))

    async def scale(self, ss: Obj, count: int) -> Obj:
        """`Scale`: set the replicas, then wait until exactly `count` pods exist."""
        ss = await self.update_replicas(ss, count)
        await self.case.eventually(
            lambda: self.pods(ss), lambda pods: len(pods) == count, f"scaled to {count} pods", STS_WAIT
        )
        return ss

    async def restart(self, ss: Obj) -> Obj:
        """`Restart`: scale to 0, wait until the controller reports 0, scale back."""
        replicas = int(ss["spec"]["replicas"])
        ss = await self.scale(ss, 0)
        await self.wait_for_status_replicas(ss, 0)
        return await self.update_replicas(ss, replicas)

    async def confirm_stateful_pod_count(self, count: int, ss: Obj, window: float, hard: bool) -> None:
        """`ConfirmStatefulPodCount`. Hard: every read of the window finds exactly `count` pods. Not hard,
        upstream only logs while the count differs; here the count must be reached within the window (the
        scaling did not halt)."""
        if hard:
            await self.case.consistently(
                lambda: self.pods(ss), lambda pods: len(pods) == count, f"exactly {count} pods", window
            )
            return
        await self.case.eventually(
            lambda: self.pods(ss), lambda pods: len(pods) == count, f"{count} pods", window
        )

    async def break_pod_http_probe(self, pod: Obj) -> None:
        """`BreakPodHTTPProbe`: move nginx's index.html away (idempotent, as upstream's `|| true`)."""
        await self.run_host_cmd_with_retries(
            pod["metadata"]["name"], f"mv -v {NGINX_ROOT}{HTTP_PROBE['httpGet']['path']} /tmp/ || true"
        )

    async def restore_pod_http_probe(self, pod: Obj) -> None:
        """`RestorePodHTTPProbe`: put index.html back."""
        await self.run_host_cmd_with_retries(
            pod["metadata"]["name"], f"mv -v /tmp{HTTP_PROBE['httpGet']['path']} {NGINX_ROOT}/ || true"
        )

    async def break_http_probe(self, ss: Obj) -> None:
        """`BreakHTTPProbe`: in every pod of the set."""
        for pod in await self.pods(ss):
            await self.break_pod_http_probe(pod)

    async def restore_http_probe(self, ss: Obj) -> None:
        """`RestoreHTTPProbe`: in every pod of the set."""
        for pod in await self.pods(ss):
            await self.restore_pod_http_probe(pod)


Change = Callable[[Obj], None]
Validate = Callable[[list[Obj], str], None]


async def _roll_held_by_pod_one(
    sst: ExecStatefulSetTester, ss: Obj, change: Change
) -> tuple[Obj, list[Obj], str]:
    """One roll of `rollbackTest` / `rollbackWithUpdateFnTest`: break the HTTP probe of the pod at index 1,
    change the template, see a new update revision, restore the probe and wait for the roll to finish
    (reverse ordinal order: pod 2 rolls, pod 1 holds the roll until it is ready again). Returns the set,
    its pods sorted and the revision the roll left it at (upstream's `currentRevision` before the roll)."""
    pods = sort_stateful_pods(await sst.pods(ss))
    await sst.break_pod_http_probe(pods[1])
    ss, _ = await sst.wait_for_pod_not_ready(ss, pods[1]["metadata"]["name"])
    ss = await sst.update_with_retries(ss["metadata"]["name"], change)
    ss = await sst.wait_for_status(ss)
    left, update = status(ss)["currentRevision"], status(ss)["updateRevision"]
    assert left != update, "Current revision should not equal update revision during the roll"

    pods = sort_stateful_pods(await sst.pods(ss))
    await sst.restore_pod_http_probe(pods[1])
    ss, _ = await sst.wait_for_pod_ready(ss, pods[1]["metadata"]["name"])
    ss, pods = await sst.wait_for_rolling_update(ss)
    got = status(ss)["currentRevision"]
    assert got == update, f"current revision {got} does not equal update revision {update} on completion"
    return ss, pods, left


async def rollback_with_update_fn_test(
    sst: ExecStatefulSetTester,
    ss: Obj,
    update_fn: Change,
    rollback_fn: Change,
    validate_updated: Validate,
    validate_rolled_back: Validate,
) -> None:
    """`rollbackWithUpdateFnTest` (statefulset.go's `rollbackTest` is it with the image as the change):
    create the set with the HTTP probe, roll `update_fn` forward and `rollback_fn` back, each roll held by
    the broken probe of pod 1. The validations get the pods and the revision they must carry."""
    set_http_probe(ss)
    ss = await sst.create(ss)
    await sst.wait_for_running_and_ready(int(ss["spec"]["replicas"]), ss)
    ss = await sst.wait_for_status(ss)
    current, update = status(ss)["currentRevision"], status(ss)["updateRevision"]
    assert current == update, f"created with update revision {update} not equal to current revision {current}"
    for pod in await sst.pods(ss):
        assert revision_of(pod) == current, f"pod {pod['metadata']['name']} revision is not {current}"
    old_image = ss["spec"]["template"]["spec"]["containers"][0]["image"]
    assert old_image != NEW_NGINX_IMAGE, "Incorrect test setup: should update to a different image"

    # Updating StatefulSet template; Creating a new revision; Updating Pods in reverse ordinal order
    ss, pods, prior_revision = await _roll_held_by_pod_one(sst, ss, update_fn)
    validate_updated(pods, status(ss)["updateRevision"])

    # Rolling back to a previous revision; Rolling back update in reverse ordinal order
    ss, pods, _ = await _roll_held_by_pod_one(sst, ss, rollback_fn)
    got = status(ss)["currentRevision"]
    assert got == prior_revision, f"Prior revision {prior_revision} should be the current one, is {got}"
    validate_rolled_back(pods, prior_revision)


def _replicas(count: int) -> Callable[[Obj], None]:
    def change(update: Obj) -> None:
        update["spec"]["replicas"] = count

    return change


class PodWatch:
    """`Pods(ns).Watch(selector)` read by `watchtools.UntilWithoutRetry`: `kubectl get pods --watch
    --output-watch-events -o json` from the moment it starts (its initial list arrives as ADDED events),
    every event kept in arrival order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[tuple[str, str]] = []  # (type, pod name)
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, tester: StatefulSetTester, selector: dict[str, str]) -> PodWatch:
        case = tester.case
        process = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(case.cluster.kubeconfig), "get", "pods", "-n", case.ns,
            "-l", ",".join(f"{k}={v}" for k, v in selector.items()),
            "--watch", "--output-watch-events", "-o", "json",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for event in json_documents(self.process.stdout):
            self.events.append((event["type"], event["object"]["metadata"]["name"]))

    async def until_order(self, tester: StatefulSetTester, kind: str, expected: list[str]) -> None:
        """`UntilWithoutRetry` over the events: `kind` events name `expected` in that order (others may
        come between)."""

        async def read() -> list[tuple[str, str]]:
            assert self.process.returncode is None, f"the pod watch ended: {self.events}"
            return list(self.events)

        def in_order(events: list[tuple[str, str]]) -> bool:
            left = list(expected)
            for event_kind, name in events:
                if left and event_kind == kind and name == left[0]:
                    left.pop(0)
            return not left

        await tester.case.eventually(read, in_order, f"{kind} events for {expected} in order", STS_WAIT)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
        await self.process.wait()
        await self._reader
