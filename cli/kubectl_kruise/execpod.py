"""`exec (POD | TYPE/NAME) [-c CONTAINER] [-S SIDECAR_CONTAINER] [-i] [-t] -- COMMAND`.

kruise-tools picks the pod the way kubectl's attach does: a pod is itself; any other object is
read for its pod selector and the most active matching pod wins (kubectl's ActivePods order,
reversed: scheduled, Running, Ready, Ready longest, fewest restarts, oldest); with none yet it
waits up to `--pod-running-timeout` for one to appear. `-S` names a SidecarSet container: on a
hot-upgrade pod the annotation `kruise.io/sidecarset-working-hotupgrade-container` says which of
its two containers is working, and that one is entered. Without `-c` the first container is used,
with a note on stderr when the pod has more.

The stream itself is kubectl's: where kruise-tools calls kubectl's remote-command executor, this
runs the real `kubectl exec` on the chosen pod and container (same kubeconfig and context), with
this process's terminal, and exits with its status - so TTY handling, the WebSocket/SPDY protocol
and the remote command's exit code are exactly kubectl's.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from kruise.api.keys import ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER
from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.commands import label_selector
from kruise.cli.kubectl_kruise.errors import ExitStatus, PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.timefmt import parse_time
from kruise.control.common.podstatus import is_ready
from kruise.kube.client import Client
from kruise.kube.resources import PODS

DEFAULT_POD_RUNNING_TIMEOUT = 60.0
# Kinds whose pods are found by a selector, as kruise-tools' SelectorsForObject; others are refused.
SELECTOR_KINDS = (*kinds.WORKLOADS, objects.REPLICASET, objects.JOB)
TARGETS: tuple[kinds.Workload, ...] = (
    objects.POD, *objects.TEMPLATED, objects.SERVICE, objects.SIDECARSET,
)  # fmt: skip


class ExecError(PluginError):
    """The pod or container cannot be chosen; the text names the object and why."""


@dataclass(frozen=True)
class ExecOptions:
    resource: str
    command: tuple[str, ...]
    container: str = ""
    sidecar_container: str = ""
    stdin: bool = False
    tty: bool = False
    pod_running_timeout: float = DEFAULT_POD_RUNNING_TIMEOUT
    kubeconfig: str | None = None
    context: str | None = None

    @staticmethod
    def from_arguments(
        arguments: list[str], command: list[str] | None, err: IO[str], **flags: Any
    ) -> ExecOptions:
        """kubectl's `exec POD -- CMD`, and its deprecated `exec POD CMD` (with the same warning)."""
        resource = arguments[0] if arguments else ""
        if command is None and len(arguments) > 1:
            err.write(
                "kubectl exec [POD] [COMMAND] is DEPRECATED and will be removed in a future version. "
                "Use kubectl exec [POD] -- [COMMAND] instead.\n"
            )
            command = arguments[1:]
        elif command is not None and len(arguments) > 1:
            raise ExecError(f"exactly one POD or TYPE/NAME goes before --, got: {' '.join(arguments)}")
        if not resource:
            raise ExecError("pod, type/name or --filename must be specified")
        if not command:
            raise ExecError("you must specify at least one command for the container")
        return ExecOptions(resource=resource, command=tuple(command), **flags)

    def target(self) -> kinds.Target:
        if "/" not in self.resource:
            return kinds.Target(objects.POD, self.resource)
        return kinds.parse_targets([self.resource], TARGETS)[0]


def pod_selector(target: kinds.Target, obj: Mapping[str, Any]) -> str:
    """SelectorsForObject: the label query that finds the object's pods, or upstream's refusal."""
    workload = target.workload
    spec = obj.get("spec") or {}
    go_type = objects.go_type(workload)
    if workload in SELECTOR_KINDS:
        return label_selector(spec.get("selector"))
    if workload in (objects.SERVICE, objects.REPLICATION_CONTROLLER):
        selector = spec.get("selector") or {}
        if not selector and workload is objects.SERVICE:
            raise ExecError(
                f"cannot attach to {go_type}: invalid service '{target.name}': "
                "Service is defined without a selector"
            )
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    raise ExecError(f"cannot attach to {go_type}: selector for {go_type} not implemented")


def _ready_since(pod: Mapping[str, Any]) -> datetime | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def activity(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    """Sort key, most active pod first (kubectl's podutils.ActivePods, reversed)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready = is_ready(pod)
    since = _ready_since(pod) if ready else None
    restarts = max(
        (int(s.get("restartCount") or 0) for s in status.get("containerStatuses") or []), default=0
    )
    created = parse_time(pod["metadata"].get("creationTimestamp"))
    return (
        not spec.get("nodeName"),
        -_PHASE_RANK.get(status.get("phase", ""), 0),
        not ready,
        (since is None, since.timestamp() if since else 0.0),
        restarts,
        (created is None, created.timestamp() if created else 0.0),
    )


async def first_pod(client: Client, namespace: str, selector: str, timeout: float) -> dict[str, Any]:
    """GetFirstPod: the most active pod now, else the first one to be added within `timeout`."""
    pods, version = await client.list_all(PODS, namespace, label_selector=selector or None)
    if pods:
        return min(pods, key=activity)
    try:
        async with asyncio.timeout(timeout or None):
            async for event in client.watch(
                PODS, namespace, resource_version=version, label_selector=selector or None
            ):
                if event.type in ("ADDED", "MODIFIED"):
                    return event.object
    except TimeoutError:
        pass
    raise ExecError("timed out waiting for the condition")


@dataclass(frozen=True)
class Choice:
    pod: dict[str, Any]
    container: str
    notes: tuple[str, ...]  # what kruise-tools tells stderr about its choice


async def choose(client: Client, namespace: str, options: ExecOptions) -> Choice:
    target = options.target()
    ref = target.workload.ref
    obj = await client.get(ref, target.name, namespace if ref.namespaced else None)
    if target.workload is objects.POD:
        pod = obj
    else:
        pod_namespace = obj["metadata"].get("namespace") or namespace
        pod = await first_pod(client, pod_namespace, pod_selector(target, obj), options.pod_running_timeout)
    return choose_container(pod, options)


def choose_container(pod: dict[str, Any], options: ExecOptions) -> Choice:
    meta = pod["metadata"]
    phase = (pod.get("status") or {}).get("phase", "")
    if phase in ("Succeeded", "Failed"):
        raise ExecError(f"cannot exec into a container in a completed pod; current phase is {phase}")
    notes: list[str] = []
    container = options.container
    working = hot_upgrade_working(pod)
    if options.sidecar_container and options.sidecar_container in working:
        container = working[options.sidecar_container]
        notes.append(f"Enter working container {container} of SidecarSet.\n")
    containers = (pod.get("spec") or {}).get("containers") or []
    if not container:
        if not containers:
            raise ExecError(f'pod "{meta["name"]}" has no containers')
        if len(containers) > 1:
            notes.append(f"Defaulting container name to {containers[0]['name']}.\n")
            notes.append(
                f"Use 'kubectl describe pod/{meta['name']} -n {meta.get('namespace', '')}' "
                "to see all of the containers in this pod.\n"
            )
        container = containers[0]["name"]
    return Choice(pod, container, tuple(notes))


def hot_upgrade_working(pod: Mapping[str, Any]) -> dict[str, str]:
    """SidecarSet container name -> its working hot-upgrade container; unreadable counts as none."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(
        ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER
    )
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def kubectl_argv(kubectl: str, choice: Choice, options: ExecOptions) -> list[str]:
    meta = choice.pod["metadata"]
    argv = [kubectl]
    if options.kubeconfig:
        argv += ["--kubeconfig", options.kubeconfig]
    if options.context:
        argv += ["--context", options.context]
    argv += ["exec", meta["name"], "-n", meta.get("namespace", ""), "-c", choice.container]
    argv += ["-i"] * options.stdin + ["-t"] * options.tty
    return [*argv, "--", *options.command]


def _passthrough(stream: IO[str]) -> IO[str] | int:
    """The stream itself when it is a real file (the child writes to it directly), else a pipe."""
    try:
        stream.fileno()
    except (OSError, ValueError, AttributeError):
        return asyncio.subprocess.PIPE
    stream.flush()
    return stream


async def run_kubectl(argv: list[str], stdin: bool, out: IO[str], err: IO[str]) -> int:
    child_out, child_err = _passthrough(out), _passthrough(err)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=None if stdin else asyncio.subprocess.DEVNULL,
        stdout=child_out,
        stderr=child_err,
    )
    written, errors = await proc.communicate()
    if child_out is asyncio.subprocess.PIPE:
        out.write(written.decode(errors="replace"))
    if child_err is asyncio.subprocess.PIPE:
        err.write(errors.decode(errors="replace"))
    return proc.returncode or 0


async def exec_pod(client: Client, namespace: str, options: ExecOptions, printer: Printer) -> list[str]:
    choice = await choose(client, namespace, options)
    err = printer.err or sys.stderr
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ExecError("kubectl was not found on PATH: exec streams through kubectl exec")
    for note in choice.notes:
        err.write(note)
    code = await run_kubectl(kubectl_argv(kubectl, choice, options), options.stdin, printer.out, err)
    if code:
        raise ExitStatus(code)
    return []
