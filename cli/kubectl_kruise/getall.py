"""`get all` / `get TYPE [NAME...]`: kruise-tools' fixed-column listing of the Kruise kinds.

Upstream does not use kubectl's table printer here: each kind has its own header and row, cells
left-justified to fixed widths and separated by tabs, and `all` prints a `<resource>:` heading
(after a blank line) before each kind that has objects. SidecarSets and ResourceDistributions
are cluster-scoped and listed cluster-wide; every other kind in the namespace.

Deliberate differences from kruise-tools 1.2.2, each where upstream prints nothing useful or
stops: a kind the cluster does not serve (Kruise Rollouts are a separate project) is skipped
instead of failing the whole listing; `get TYPE` prints its header for every kind and refuses a
type outside the table instead of printing nothing; unset pointers print `<nil>` rather than
crashing or printing an address.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.objects import ROLLOUTS
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.timefmt import age_seconds, go_duration, parse_time
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.resources import (
    ADVANCED_CRONJOBS,
    ADVANCED_DAEMONSETS,
    ADVANCED_STATEFULSETS,
    BROADCASTJOBS,
    CLONESETS,
    CONTAINER_RECREATE_REQUESTS,
    IMAGEPULLJOBS,
    POD_PROBE_MARKERS,
    PODUNAVAILABLEBUDGETS,
    RESOURCEDISTRIBUTIONS,
    SIDECARSETS,
    UNITED_DEPLOYMENTS,
    ResourceRef,
)

Obj = Mapping[str, Any]


class GetError(PluginError):
    """The listing cannot be made; the text names the type."""


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def int_or_string(value: Any) -> str:
    """intstr.IntOrString.String(), `<nil>` for an unset pointer."""
    return "<nil>" if value is None else str(value)


def go_map(values: Mapping[str, str] | None) -> str:
    """fmt's `%v` of a map[string]string: `map[a:1 b:2]`, keys sorted."""
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted((values or {}).items())) + "]"


def go_bool(value: Any) -> str:
    return "<nil>" if value is None else ("true" if value else "false")


def go_time(text: str | None) -> str:
    """metav1.Time's String(): `2026-12-07 11:08:18 +0000 UTC`, `<nil>` when unset."""
    when = parse_time(text)
    if when is None:
        return "<nil>"
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _match_labels(obj: Obj) -> int:
    return len((_spec(obj).get("selector") or {}).get("matchLabels") or {})


def _rollout_row(obj: Obj) -> list[Any]:
    status = _status(obj)
    canary = status.get("canaryStatus")
    step, state = (0, "Completed") if canary is None else (
        canary.get("currentStepIndex", 0), canary.get("currentStepState", "")
    )  # fmt: skip
    return [status.get("phase", ""), step, state, status.get("message", "")]


@dataclass(frozen=True)
class Listing:
    """One kind's columns: widths of every column but AGE (which is never padded)."""

    resource: str
    ref: ResourceRef
    columns: tuple[tuple[str, int], ...]
    row: Callable[[Obj], list[Any]]

    def line(self, cells: list[Any]) -> str:
        padded = [f"{cell!s:<{width}}" for cell, (_, width) in zip(cells, self.columns, strict=False)]
        return "\t".join([*padded, str(cells[-1])]) + "\n"

    def header(self) -> str:
        return self.line([name for name, _ in self.columns] + ["AGE"])

    def render(self, obj: Obj, now: datetime) -> str:
        age = go_duration(age_seconds(obj["metadata"].get("creationTimestamp"), now))
        return self.line([obj["metadata"]["name"], *self.row(obj), age])


LISTINGS: tuple[Listing, ...] = (
    Listing("clonesets.apps.kruise.io", CLONESETS,
            (("NAME", 12), ("DESIRED", 8), ("UPDATED", 8), ("UPDATED_READY", 14), ("UPDATED_AVAILABLE", 18),
             ("READY", 8), ("TOTAL", 8)),
            lambda o: [_spec(o).get("replicas", 1), *(_status(o).get(f, 0) for f in (
                "updatedReplicas", "updatedReadyReplicas", "updatedAvailableReplicas", "readyReplicas",
                "replicas"))]),
    Listing("statefulsets.apps.kruise.io", ADVANCED_STATEFULSETS,
            (("NAME", 12), ("DESIRED", 8), ("CURRENT", 8), ("UPDATED", 8), ("READY", 8)),
            lambda o: [_spec(o).get("replicas", 1), *(_status(o).get(f, 0) for f in (
                "currentReplicas", "updatedReplicas", "readyReplicas"))]),
    Listing("daemonsets.apps.kruise.io", ADVANCED_DAEMONSETS,
            (("NAME", 8), ("DESIRED", 8), ("CURRENT", 8), ("READY", 8), ("UP-TO-DATE", 8), ("AVAILABLE", 8),
             ("NODE SELECTOR", 8)),
            lambda o: [*(_status(o).get(f, 0) for f in (
                "desiredNumberScheduled", "currentNumberScheduled", "numberReady", "updatedNumberScheduled",
                "numberAvailable")),
                go_map(((_spec(o).get("template") or {}).get("spec") or {}).get("nodeSelector"))]),
    Listing("rollouts.rollouts.kruise.io", ROLLOUTS,
            (("NAME", 20), ("STATUS", 8), ("CANARY_STEP", 12), ("CANARY_STATE", 12), ("MESSAGE", 40)),
            _rollout_row),
    Listing("broadcastjobs.apps.kruise.io", BROADCASTJOBS,
            (("NAME", 12), ("DESIRED", 8), ("ACTIVE", 8), ("SUCCEEDED", 8), ("FAILED", 8)),
            lambda o: [int_or_string(_spec(o).get("parallelism")),
                       *(_status(o).get(f, 0) for f in ("active", "succeeded", "failed"))]),
    Listing("containerrecreaterequests.apps.kruise.io", CONTAINER_RECREATE_REQUESTS,
            (("NAME", 12), ("PHASE", 8), ("COMPLETED", 8), ("FAILED", 8)),
            lambda o: [_status(o).get("phase", ""), "-", "-"]),
    Listing("advancedcronjobs.apps.kruise.io", ADVANCED_CRONJOBS,
            (("NAME", 12), ("SCHEDULE", 8), ("SUSPEND", 8), ("ACTIVE", 8), ("LAST SCHEDULE", 8)),
            lambda o: [_spec(o).get("schedule", ""), go_bool(_spec(o).get("paused")),
                       len(_status(o).get("active") or []), go_time(_status(o).get("lastScheduleTime"))]),
    Listing("resourcedistributions.apps.kruise.io", RESOURCEDISTRIBUTIONS,
            (("NAME", 12), ("TARGETS", 8), ("SUCCEEDED", 8), ("FAILED", 8)),
            lambda o: ["-", "-", "-"]),
    Listing("uniteddeployments.apps.kruise.io", UNITED_DEPLOYMENTS,
            (("NAME", 12), ("DESIRED", 8), ("UPDATED", 8), ("READY", 8), ("AVAILABLE", 8)),
            lambda o: [_spec(o).get("replicas", 1), *(_status(o).get(f, 0) for f in (
                "updatedReplicas", "readyReplicas", "replicas"))]),
    Listing("sidecarsets.apps.kruise.io", SIDECARSETS,
            (("NAME", 12), ("MATCHED", 8), ("UPDATED", 8), ("READY", 8), ("INJECTED", 8)),
            lambda o: [*(_status(o).get(f, 0) for f in ("matchedPods", "updatedPods", "readyPods")), "-"]),
    Listing("podprobemarkers.apps.kruise.io", POD_PROBE_MARKERS,
            (("NAME", 12), ("TARGETS", 8), ("PROBES", 8)),
            lambda o: [_match_labels(o), len(_spec(o).get("probes") or [])]),
    Listing("imagepulljobs.apps.kruise.io", IMAGEPULLJOBS,
            (("NAME", 12), ("PHASE", 8), ("COMPLETED", 8), ("FAILED", 8), ("TOTAL", 8)),
            lambda o: ["-", *(_status(o).get(f, 0) for f in ("succeeded", "failed", "desired"))]),
    Listing("podunavailablebudgets.policy.kruise.io", PODUNAVAILABLEBUDGETS,
            (("NAME", 12), ("MAXUNAVAILABLE", 8), ("UNAVAILABLE", 8), ("DISRUPTIONS", 8), ("TARGETS", 8)),
            lambda o: [int_or_string(_spec(o).get("maxUnavailable")),
                       len(_status(o).get("unavailablePods") or {}),
                       len(_status(o).get("disruptedPods") or {}), _match_labels(o)]),
)  # fmt: skip
BY_RESOURCE = {listing.resource: listing for listing in LISTINGS}


@dataclass(frozen=True)
class GetOptions:
    resource: str
    names: tuple[str, ...] = ()

    @staticmethod
    def from_arguments(arguments: list[str]) -> GetOptions:
        if not arguments:
            raise GetError("required resource not specified")
        resource, names = arguments[0], tuple(arguments[1:])
        if resource != "all" and resource not in BY_RESOURCE:
            raise GetError(
                f'resource type "{resource}" is not supported: use "all" or one of {", ".join(BY_RESOURCE)}'
            )
        if resource == "all" and names:
            raise GetError(f'"all" lists every kind and takes no names, got: {" ".join(names)}')
        return GetOptions(resource, names)


async def _objects(client: Client, listing: Listing, namespace: str, names: tuple[str, ...]) -> list[Obj]:
    scope = namespace if listing.ref.namespaced else None
    if names:
        return [await client.get(listing.ref, name, scope) for name in names]
    items, _ = await client.list_all(listing.ref, scope)
    return sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))


async def get(client: Client, namespace: str, options: GetOptions, printer: Printer) -> list[str]:
    now = datetime.now(UTC)
    if options.resource != "all":
        listing = BY_RESOURCE[options.resource]
        found = await _objects(client, listing, namespace, options.names)
        if found:
            printer.write(listing.header() + "".join(listing.render(o, now) for o in found))
        return []
    for listing in LISTINGS:
        try:
            found = await _objects(client, listing, namespace, ())
        except NotFound:  # the cluster does not serve this kind (a list has no object to miss)
            continue
        if found:
            body = "".join(listing.render(o, now) for o in found)
            printer.write(f"\n{listing.resource}:\n{listing.header()}{body}")
    return []
