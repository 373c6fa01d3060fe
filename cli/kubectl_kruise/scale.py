"""`scale`: kubectl's own scale command, which kruise-tools 1.2.2 ships for CloneSet and Advanced
StatefulSet too. Every write goes through the `/scale` subresource, so any kind that serves one
(the CRD's `subresources.scale`) is scaled the same way and a kind without one is refused by the
server, exactly as kubectl sees it.

The order is kubectl's: read every named object first (a missing one is reported at the end,
after the others were scaled), refuse `--resource-version` for several objects, then scale one
by one and stop at the first failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer, api_error_text
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, Conflict
from kruise.kube.resources import REPLICASETS, UNITED_DEPLOYMENTS, ResourceRef

REPLICATION_CONTROLLERS = ResourceRef("", "v1", "replicationcontrollers", True, "ReplicationController")
# kubectl's scaler: conflicts are retried every second for up to five minutes; --timeout polls each second.
RETRY_INTERVAL = 1.0
RETRY_TIMEOUT = 300.0
WAIT_INTERVAL = 1.0

# Every workload the plugin knows, plus the other kinds kubectl scales. Whether a kind can be scaled is the
# server's answer (a kind without /scale gets its 404), not this table's.
SCALE_WORKLOADS: tuple[kinds.Workload, ...] = (
    *kinds.WORKLOADS,
    kinds.Workload(REPLICASETS, "replicaset", ("rs",)),
    kinds.Workload(REPLICATION_CONTROLLERS, "replicationcontroller", ("rc",)),
    kinds.Workload(UNITED_DEPLOYMENTS, "uniteddeployment", ("ud",)),
)

MISSING_RESOURCE = (
    "You must provide one or more resources by argument or filename.\n"
    "Example resource specifications include:\n"
    "   '-f rsrc.yaml'\n"
    "   '--filename=rsrc.json'\n"
    "   '<resource> <name>'\n"
    "   '<resource>'"
)


class ScaleError(PluginError):
    """Stops the command; printed as `error: <text>`."""


@dataclass(frozen=True)
class ScaleOptions:
    replicas: int
    current_replicas: int = -1
    resource_version: str = ""
    timeout: float = 0.0  # seconds to wait for status.replicas to follow; 0 does not wait
    selector: str = ""
    all: bool = False

    def validate(self) -> None:
        """kubectl's Validate(): the texts name the flag and the rule."""
        if self.replicas < 0:
            raise ScaleError(
                "The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"
            )
        if self.current_replicas < -1:
            raise ScaleError("The --current-replicas must specify an integer of -1 or greater")

    @property
    def has_precondition(self) -> bool:
        return self.current_replicas != -1 or bool(self.resource_version)


@dataclass(frozen=True)
class Selection:
    """What the arguments name: single objects, or every object of some types matching a selector."""

    targets: tuple[kinds.Target, ...] = ()
    bulk: tuple[kinds.Workload, ...] = ()
    selector: str = ""


def select(args: list[str], selector: str, select_all: bool) -> Selection:
    """cli-runtime's ResourceTypeOrNameArgs + LabelSelectorParam, with their refusals."""
    selector = selector.strip()
    if not args:
        if selector:
            raise ScaleError("at least one resource must be specified to use a selector")
        raise ScaleError(MISSING_RESOURCE)
    if any("/" in arg for arg in args):
        targets = kinds.parse_targets(args, SCALE_WORKLOADS)
        if selector:
            raise ScaleError("selectors and the all flag cannot be used when passing resource/name arguments")
        return Selection(targets=tuple(targets))
    types = [kinds.resolve_type(name, SCALE_WORKLOADS) for name in args[0].split(",") if name]
    names = args[1:]
    if names:
        if selector:
            raise ScaleError("name cannot be provided when a selector is specified")
        return Selection(targets=tuple(kinds.Target(w, n) for w in types for n in names))
    if selector or select_all:
        return Selection(bulk=tuple(types), selector=selector)
    raise ScaleError("resource(s) were provided, but no name was specified")


def check_precondition(scale: Mapping[str, Any], options: ScaleOptions) -> None:
    """kubectl's ScalePrecondition against the current Scale."""
    current = int((scale.get("spec") or {}).get("replicas") or 0)
    if options.current_replicas != -1 and current != options.current_replicas:
        raise ScaleError(f"Expected replicas to be {options.current_replicas}, was {current}")
    version = (scale.get("metadata") or {}).get("resourceVersion", "")
    if options.resource_version and version != options.resource_version:
        raise ScaleError(f"Expected resource version to be {options.resource_version}, was {version}")


def with_replicas(obj: Mapping[str, Any], replicas: int) -> dict[str, Any]:
    """The object as printed: every kind here keeps its scale at spec.replicas, so the printed
    object shows the size it was scaled to rather than the one read before."""
    return {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}}


@dataclass(frozen=True)
class Found:
    workload: kinds.Workload
    obj: dict[str, Any]

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]


async def _read(client: Client, namespace: str, selection: Selection) -> tuple[list[Found], list[str]]:
    found: list[Found] = []
    errors: list[str] = []
    for target in selection.targets:
        try:
            found.append(
                Found(target.workload, await client.get(target.workload.ref, target.name, namespace))
            )
        except ApiError as err:
            errors.append(api_error_text(err))
    for workload in selection.bulk:
        ref = workload.ref
        try:
            items, _ = await client.list_all(ref, namespace, label_selector=selection.selector or None)
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        api_version = f"{ref.group}/{ref.version}" if ref.group else ref.version
        found.extend(Found(workload, {"apiVersion": api_version, "kind": ref.kind, **item}) for item in items)
    return found, errors


async def _scale_once(
    client: Client, ref: ResourceRef, name: str, namespace: str, options: ScaleOptions, dry_run: bool
) -> dict[str, Any]:
    if not options.has_precondition:
        return await client.patch(
            ref,
            name,
            {"spec": {"replicas": options.replicas}},
            namespace,
            subresource="scale",
            dry_run=dry_run,
        )
    scale = await client.get_scale(ref, name, namespace)
    check_precondition(scale, options)
    scale["spec"] = {**(scale.get("spec") or {}), "replicas": options.replicas}
    return await client.update(ref, scale, subresource="scale", dry_run=dry_run)


async def scale_retrying(
    client: Client, ref: ResourceRef, name: str, namespace: str, options: ScaleOptions, dry_run: bool
) -> dict[str, Any]:
    """Retry only a lost race (409), each second for up to five minutes, as kubectl's scaler."""
    deadline = time.monotonic() + RETRY_TIMEOUT
    while True:
        try:
            return await _scale_once(client, ref, name, namespace, options, dry_run)
        except Conflict:
            if time.monotonic() + RETRY_INTERVAL > deadline:
                raise ScaleError("timed out waiting for the condition") from None
            await asyncio.sleep(RETRY_INTERVAL)


async def wait_for_replicas(
    client: Client, ref: ResourceRef, name: str, namespace: str, replicas: int, timeout: float
) -> None:
    """Poll the Scale until status.replicas reaches the new size, or someone set another size."""
    deadline = time.monotonic() + timeout
    while True:
        scale = await client.get_scale(ref, name, namespace)
        spec = int((scale.get("spec") or {}).get("replicas") or 0)
        current = int((scale.get("status") or {}).get("replicas") or 0)
        if spec != replicas or current == replicas:
            return
        if time.monotonic() + WAIT_INTERVAL > deadline:
            raise ScaleError(f'timed out waiting for "{name}" to be synced')
        await asyncio.sleep(WAIT_INTERVAL)


async def scale(
    client: Client, namespace: str, selection: Selection, options: ScaleOptions, printer: Printer
) -> list[str]:
    found, read_errors = await _read(client, namespace, selection)
    if options.resource_version and len(found) > 1:
        raise ScaleError("cannot use --resource-version with multiple resources")
    if not found:
        # kubectl >= 1.35 reports why nothing was found; 1.30 said only "no objects passed to scale".
        if read_errors:
            return read_errors
        raise ScaleError("no objects passed to scale")
    for item in found:
        ref = item.workload.ref
        display = item.workload.display(item.name)
        if printer.dry_run == "client":
            printer.object(display, "scaled", with_replicas(item.obj, options.replicas))
            continue
        try:
            answer = await scale_retrying(
                client, ref, item.name, namespace, options, printer.dry_run == "server"
            )
            if options.timeout and printer.dry_run == "none":
                await wait_for_replicas(client, ref, item.name, namespace, options.replicas, options.timeout)
        except ApiError as err:
            return [api_error_text(err)]
        except ScaleError as err:
            return [str(err)]
        size = int((answer.get("spec") or {}).get("replicas", options.replicas))
        printer.object(display, "scaled", with_replicas(item.obj, size))
    return read_errors
