"""`describe rollout NAME`: kruise-tools' picture of a Kruise Rollout (rollouts.kruise.io v1beta1).

The text is upstream's: `%-19s%v` label/value lines for the rollout, its steps (the current one
in green with its state), its traffic routings, the workload's images, revisions and replicas,
then a table of the pods of the revision the rollout is on (of the current batch unless
`--all`). Status icons are ANSI-coloured unless `--no-color`. `-w` redraws on every change,
clearing the screen first, until `--timeout` seconds pass.

A workload that cannot be read is reported on stdout (`Error getting resources: ...`) after the
rollout's own lines, as upstream does; the command still succeeds. Deliberate differences from
kruise-tools 1.2.2: the workload is found by its apiVersion as well as its kind (so a Rollout of
an Advanced StatefulSet or Advanced DaemonSet shows it, not a native one of the same name),
`--no-color` also drops the colour of the current step, and a Rollout with no status yet shows
step 0 instead of crashing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.timefmt import age_seconds, human_duration
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.resources import PODS, ResourceRef

TRAFFIC_ROUTINGS = ResourceRef("rollouts.kruise.io", "v1alpha1", "trafficroutings", True, "TrafficRouting")
BATCH_LABEL = "rollouts.kruise.io/rollout-batch-id"
GREEN, YELLOW, RED, RESET = "\033[32m", "\033[33m", "\033[31m", "\033[0m"
CLEAR_SCREEN = "\033[2J\033[H"
ICONS = {
    **dict.fromkeys(("Healthy", "Running"), f"{GREEN}✔{RESET}"),
    **dict.fromkeys(("Progressing", "Pending", "Initial"), f"{YELLOW}⚠{RESET}"),
    **dict.fromkeys(("Disabled", "Unknown", "Terminating", "Disabling", "Failed"), f"{RED}✘{RESET}"),
}


class DescribeError(PluginError):
    """The rollout cannot be described; the text names it and why."""


@dataclass(frozen=True)
class DescribeOptions:
    name: str
    watch: bool = False
    no_color: bool = False
    all_pods: bool = False
    timeout_seconds: int = 0


def field(label: str, value: Any) -> str:
    """Upstream's `%-19s%v` line."""
    return f"{label:<19}{value}\n"


def go_api_error(err: ApiError) -> str:
    """client-go's error text: the apiserver's message, with no `Error from server` prefix."""
    return err.message


@dataclass(frozen=True)
class Progress:
    """What the rollout's strategy and status say, whichever of canary or blue-green it uses."""

    strategy_type: str
    steps: list[Mapping[str, Any]]
    traffic_routings: list[Mapping[str, Any]]
    traffic_routing_ref: str
    step_index: int
    step_state: str
    stable_revision: str
    update_revision: str
    pod_template_hash: str

    @staticmethod
    def of(rollout: Mapping[str, Any]) -> Progress:
        strategy = (rollout.get("spec") or {}).get("strategy") or {}
        status = rollout.get("status") or {}
        blue_green = strategy.get("blueGreen")
        canary = strategy.get("canary")
        state = (
            status.get("blueGreenStatus") if blue_green is not None else status.get("canaryStatus")
        ) or {}
        chosen = canary if canary is not None else blue_green
        kind = "Canary" if canary is not None else ("BlueGreen" if blue_green is not None else "")
        update = state.get("updatedRevision") or state.get("canaryRevision", "")
        return Progress(
            strategy_type=kind,
            steps=list((chosen or {}).get("steps") or []),
            traffic_routings=list((chosen or {}).get("trafficRoutings") or []),
            traffic_routing_ref=(canary or {}).get("trafficRoutingRef", ""),
            step_index=int(state.get("currentStepIndex") or 0),
            step_state=state.get("currentStepState", ""),
            stable_revision=state.get("stableRevision", ""),
            update_revision=update,
            pod_template_hash=state.get("podTemplateHash", ""),
        )


class Renderer:
    """Writes one rollout's description, reading its workload and pods as it goes."""

    def __init__(self, client: Client, namespace: str, options: DescribeOptions) -> None:
        self.client = client
        self.namespace = namespace
        self.options = options

    def icon(self, phase: str) -> str:
        return "" if self.options.no_color or not phase else ICONS.get(phase, "")

    def steps(self, progress: Progress) -> str:
        out = []
        for number, step in enumerate(progress.steps, start=1):
            current = number == progress.step_index
            if current and not self.options.no_color:
                out.append(GREEN)
            if step.get("replicas") is not None:
                out.append(field("  -  Replicas: ", step["replicas"]))
            if step.get("traffic") is not None:
                out.append(field("     Traffic: ", step["traffic"]))
            if step.get("matches"):
                out.append("     Matches: \n")
                for match in step["matches"]:
                    out.append("      - Headers: \n")
                    for header in match.get("headers") or []:
                        out.append(field("       - Name:", header.get("name", "")))
                        out.append(field("         Value:", header.get("value", "")))
                        out.append(field("         Type:", header.get("type", "Exact")))
            if current:
                out.append(field("     State:", progress.step_state))
                if not self.options.no_color:
                    out.append(RESET)
        return "".join(out)

    @staticmethod
    def traffic_routings(routings: list[Mapping[str, Any]]) -> str:
        if not routings:
            return ""
        out = ["Traffic Routings:\n"]
        for routing in routings:
            out.append(field("  -  Service: ", routing.get("service", "")))
            if routing.get("ingress") is not None:
                out.append("     Ingress: \n")
                out.append(field("      classType: ", routing["ingress"].get("classType", "")))
                out.append(field("      name: ", routing["ingress"].get("name", "")))
            if routing.get("gateway") is not None:
                out.append("     Gateway: \n")
                out.append(field("      HttpRouteName: ", routing["gateway"].get("httpRouteName", "")))
            if routing.get("customNetworkRefs") is not None:
                out.append("     CustomNetworkRefs: \n")
                for ref in routing["customNetworkRefs"]:
                    out.append(field("      name: ", ref.get("name", "")))
                    out.append(field("      kind: ", ref.get("kind", "")))
                    out.append(field("      apiVersion: ", ref.get("apiVersion", "")))
        return "".join(out)

    async def traffic_routing_ref(self, name: str) -> str:
        try:
            routing = await self.client.get(TRAFFIC_ROUTINGS, name, self.namespace)
        except ApiError as err:
            return f"Error getting TrafficRoutingRef: {go_api_error(err)}\n"
        return self.traffic_routings(list((routing.get("spec") or {}).get("objectRef") or []))

    async def render(self, rollout: Mapping[str, Any]) -> str:
        meta = rollout.get("metadata") or {}
        status = rollout.get("status") or {}
        progress = Progress.of(rollout)
        current = status.get("observedGeneration", 0) == meta.get("generation", 0)
        out = [field("Name:", meta.get("name", "")), field("Namespace:", meta.get("namespace", ""))]
        phase = status.get("phase", "")
        if current:
            out.append(field("Status:", f"{self.icon(phase)} {phase}"))
            if status.get("message"):
                out.append(field("Message:", status["message"]))
        out.append(field("Strategy:", progress.strategy_type))
        if progress.strategy_type:
            out.append(field(" Step:", f"{progress.step_index}/{len(progress.steps)}"))
            out.append(" Steps:\n")
            out.append(self.steps(progress))
            out.append(self.traffic_routings(progress.traffic_routings))
        if progress.traffic_routing_ref:
            out.append(await self.traffic_routing_ref(progress.traffic_routing_ref))
        workload_ref = (rollout.get("spec") or {}).get("workloadRef") or {}
        try:
            workload = await self.workload(workload_ref)
        except (ApiError, DescribeError) as err:
            text = go_api_error(err) if isinstance(err, ApiError) else str(err)
            return "".join([*out, f"Error getting resources: {text}\n"])
        out.append(self.workload_lines(workload, progress, current))
        out.append(await self.pods(workload, progress))
        return "".join(out)

    async def workload(self, ref: Mapping[str, Any]) -> tuple[kinds.Workload, dict[str, Any]]:
        kind, name = ref.get("kind", ""), ref.get("name", "")
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        workload = next((w for w in kinds.WORKLOADS if w.kind == kind and w.group == group), None)
        if workload is kinds.DAEMONSET:  # a native DaemonSet has no replica counts upstream knows
            raise DescribeError(f"unsupported workload kind {objects.go_type(workload)}")
        if workload is None:
            raise DescribeError(f'the server doesn\'t have a resource type "{kind}"')
        return workload, await self.client.get(workload.ref, name, self.namespace)

    @staticmethod
    def workload_lines(
        workload: tuple[kinds.Workload, dict[str, Any]], progress: Progress, current: bool
    ) -> str:
        kind, obj = workload
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
        out = [field("Images:" if i == 0 else "", c.get("image", "")) for i, c in enumerate(containers)]
        out.append(field("Current Revision:", progress.stable_revision))
        out.append(field("Update Revision:", progress.update_revision))
        if not current:
            return "".join(out)
        if kind is kinds.ADVANCED_DAEMONSET:
            burst = spec.get("burstReplicas")
            desired = burst if isinstance(burst, int) else 0
            fields = ("updatedNumberScheduled", "currentNumberScheduled", "numberReady", "numberAvailable")
            counts = [status.get(f, 0) for f in fields]
        else:
            desired = spec.get("replicas", 1)
            counts = [
                status.get(f, 0)
                for f in ("updatedReplicas", "replicas", "readyReplicas", "availableReplicas")
            ]
        out.append("Replicas:\n")
        for label, value in zip((" Desired:", " Updated:", " Current:", " Ready:", " Available:"),
                                [desired, *counts], strict=True):  # fmt: skip
            out.append(field(label, value))
        return "".join(out)

    async def pods(self, workload: tuple[kinds.Workload, dict[str, Any]], progress: Progress) -> str:
        key = "pod-template-hash" if workload[0] is kinds.DEPLOYMENT else "controller-revision-hash"
        selectors = [f"{key}={progress.pod_template_hash or progress.stable_revision}"]
        if not self.options.all_pods and progress.step_index != 0:
            selectors.append(f"{BATCH_LABEL}={progress.step_index}")
        pods, _ = await self.client.list_all(PODS, self.namespace, label_selector=",".join(selectors))
        now = datetime.now(UTC)
        rows = [self.pod_row(pod, now) for pod in sorted(pods, key=lambda p: p["metadata"]["name"])]
        rows.sort(key=lambda r: (r[2], -int(r[1].split("/")[0])))
        if not rows:
            return ""
        return tabulate([["NAME", "READY", "BATCH ID", "REVISION", "AGE", "RESTARTS", "STATUS"], *rows])

    def pod_row(self, pod: Mapping[str, Any], now: datetime) -> list[str]:
        meta, status = pod["metadata"], pod.get("status") or {}
        labels = meta.get("labels") or {}
        phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
        statuses = status.get("containerStatuses") or []
        ready = sum(1 for s in statuses if s.get("ready"))
        containers = ((pod.get("spec") or {}).get("containers")) or []
        restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
        revision = labels.get("pod-template-hash") or labels.get("controller-revision-hash", "")
        return [
            meta["name"],
            f"{ready}/{len(containers)}",
            labels.get(BATCH_LABEL, ""),
            revision,
            human_duration(age_seconds(meta.get("creationTimestamp"), now)),
            str(restarts),
            f"{self.icon(phase)} {phase}",
        ]


def tabulate(rows: list[list[str]]) -> str:
    """text/tabwriter with padding 2: every column but the last as wide as its widest cell + 2."""
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(len(rows[0]) - 1)]
    return "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + row[-1] + "\n"
        for row in rows
    )


async def describe_rollout(
    client: Client, namespace: str, options: DescribeOptions, printer: Printer
) -> list[str]:
    renderer = Renderer(client, namespace, options)
    try:
        rollout = await client.get(objects.ROLLOUTS, options.name, namespace)
    except NotFound as err:
        if err.details.get("name"):
            raise
        # No object named in the answer: the path itself is unknown, Kruise Rollouts is not installed.
        raise DescribeError(f'the server doesn\'t have a resource type "{objects.ROLLOUTS.plural}"') from None
    if not options.watch:
        printer.write(await renderer.render(rollout))
        return []
    try:
        async with asyncio.timeout(options.timeout_seconds or None):
            async for event in client.watch(
                objects.ROLLOUTS, namespace, field_selector=f"metadata.name={options.name}"
            ):
                if event.type in ("ADDED", "MODIFIED"):
                    printer.write(CLEAR_SCREEN + await renderer.render(event.object))
    except TimeoutError:
        raise DescribeError("context deadline exceeded") from None
    return []
