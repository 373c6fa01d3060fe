"""`migrate CloneSet --from Deployment`: kruise-tools 1.2.2's way of moving a Deployment's pods
under a CloneSet without downtime.

Two modes, as upstream. `--create [--copy]` writes a CloneSet made from the Deployment (empty,
or with its replicas). Otherwise the command drives the migration itself, in the foreground:
it alternates CloneSet scale-outs and Deployment scale-ins as `migrateplan` decides, reports
each change on stderr (`Migration progress: ...`), and ends with `Successfully migrated ...`
or `error: failed to migrate: <reason>` (exit 1) — on a vanished object, or once
`--timeout-seconds` have passed. The flags, the sentences and the order of the checks are
kruise-tools'.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.kinds import CLONESETS
from kruise.cli.kubectl_kruise.migrateplan import (
    CLONESET_API,
    DEPLOYMENT_API,
    Observed,
    Progress,
    ScaleIn,
    ScaleOut,
    Step,
    advance,
    cloneset_from_deployment,
    next_step,
    ref_text,
)
from kruise.cli.kubectl_kruise.output import Printer
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.resources import DEPLOYMENTS, ResourceRef

# How often the objects are read back while migrating (upstream reacts to watch events; polling
# at this pace keeps each step close behind the controllers without loading the apiserver).
POLL_INTERVAL = 0.2
DST_KINDS = ("CloneSet", "cloneset", "clone")
SRC_KINDS = ("Deployment", "deployment")


class MigrateError(PluginError):
    """Stops the command; printed as `error: <text>`."""


@dataclass(frozen=True)
class MigrateOptions:
    """The flags, checked in kruise-tools' order (`Complete`), before anything is read."""

    namespace: str
    src_name: str
    dst_name: str
    create: bool = False
    copy: bool = False
    replicas: int = -1  # -1: every replica the Deployment has
    max_surge: int = 1
    timeout_seconds: int = -1  # <= 0: no limit

    @classmethod
    def complete(
        cls,
        namespace: str | None,
        kinds: list[str],
        source_kind: str,
        src_name: str,
        dst_name: str,
        **flags: Any,
    ) -> MigrateOptions:
        if not namespace:
            raise MigrateError("must specify namespace by -n or --namespace")
        if not kinds:
            raise MigrateError("must specify workload type like CloneSet")
        if len(kinds) > 1:
            raise MigrateError("more than one given args")
        if not source_kind:
            raise MigrateError("must specify --from")
        if not src_name:
            raise MigrateError("must specify --src-name")
        if not dst_name and not flags.get("create"):
            raise MigrateError("must specify --dst-name")
        if kinds[0] not in DST_KINDS:
            raise MigrateError("currently only supported CloneSet as dst type")
        if source_kind not in SRC_KINDS:
            raise MigrateError("currently only supported Deployment as src type")
        return cls(namespace=namespace, src_name=src_name, dst_name=dst_name, **flags)

    @property
    def src_ref(self) -> str:
        return ref_text(DEPLOYMENT_API, "Deployment", self.namespace, self.src_name)

    @property
    def dst_ref(self) -> str:
        return ref_text(CLONESET_API, "CloneSet", self.namespace, self.dst_name)

    @property
    def src_display(self) -> str:
        return f"Deployment/{self.src_name}"

    @property
    def dst_display(self) -> str:
        return f"CloneSet/{self.dst_name}"


def _say(printer: Printer, text: str) -> None:
    """kruise-tools prints its progress and results on stderr."""
    stream: TextIO = printer.err or printer.out
    stream.write(f"{text}\n")
    stream.flush()


async def _get(client: Client, ref: ResourceRef, name: str, namespace: str, shown: str) -> dict[str, Any]:
    if not name:
        raise MigrateError(f"failed to get {shown}: resource name may not be empty")
    try:
        return await client.get(ref, name, namespace)
    except ApiError as err:
        raise MigrateError(f"failed to get {shown}: {err.message}") from None


async def create(client: Client, options: MigrateOptions, printer: Printer) -> list[str]:
    """`--create [--copy]`: refuse an existing CloneSet, then write one made from the Deployment."""
    if not options.dst_name:
        raise MigrateError(f"failed to get {options.dst_ref}: resource name may not be empty")
    try:
        await client.get(CLONESETS, options.dst_name, options.namespace)
    except NotFound:
        pass
    except ApiError as err:
        raise MigrateError(f"failed to get {options.dst_ref}: {err.message}") from None
    else:
        raise MigrateError(f"cloneset {options.namespace}/{options.dst_name} already exists")
    deployment = await _get(client, DEPLOYMENTS, options.src_name, options.namespace, options.src_ref)
    cloneset = cloneset_from_deployment(deployment, options.dst_name, options.copy)
    await client.create(CLONESETS, cloneset, options.namespace)
    _say(printer, f"Successfully created from {options.src_display} to {options.dst_display}")
    return []


async def _read_both(client: Client, options: MigrateOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    deployment = await _get(client, DEPLOYMENTS, options.src_name, options.namespace, options.src_ref)
    cloneset = await _get(client, CLONESETS, options.dst_name, options.namespace, options.dst_ref)
    return deployment, cloneset


def _resized(obj: Mapping[str, Any], replicas: int) -> dict[str, Any]:
    return {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}}


async def _write(
    client: Client, step: Step, deployment: dict[str, Any], cloneset: dict[str, Any]
) -> dict[str, Any] | None:
    """PUT the one resized object (its resourceVersion guards against a concurrent change). A lost
    race or a refused write is tried again on the next round, as upstream requeues it."""
    if isinstance(step, ScaleOut):
        ref, obj, replicas = CLONESETS, cloneset, Observed.of(cloneset).replicas + step.by
    elif isinstance(step, ScaleIn):
        ref, obj, replicas = DEPLOYMENTS, deployment, Observed.of(deployment).replicas - step.by
    else:
        return None
    try:
        return await client.update(ref, _resized(obj, replicas))
    except ApiError:
        return None


async def migrate(
    client: Client, options: MigrateOptions, printer: Printer, poll: float = POLL_INTERVAL
) -> list[str]:
    """Submit (validate and read both objects), then step until done, failed or timed out."""
    if options.replicas == 0:
        raise MigrateError("invalid replicas 0")
    deployment, cloneset = await _read_both(client, options)
    target = options.replicas if options.replicas > 0 else Observed.of(deployment).replicas
    max_surge = options.max_surge if options.max_surge >= 1 else 1
    written = (Observed.of(deployment).generation, Observed.of(cloneset).generation)
    progress = shown = Progress()
    started = time.monotonic()
    while True:
        if progress == Progress(target, target):
            _say(
                printer,
                f"Successfully migrated {progress.dst} replicas from {options.src_display} "
                f"to {options.dst_display}",
            )
            return []
        if options.timeout_seconds > 0 and time.monotonic() - started > options.timeout_seconds:
            raise MigrateError("failed to migrate: task timeout exceeded")
        try:
            deployment, cloneset = await _read_both(client, options)
        except MigrateError as err:
            raise MigrateError(f"failed to migrate: {err}") from None
        step = next_step(target, max_surge, progress, Observed.of(deployment), Observed.of(cloneset), written)
        answer = await _write(client, step, deployment, cloneset)
        if answer is not None:
            generation = Observed.of(answer).generation
            written = (generation, written[1]) if isinstance(step, ScaleIn) else (written[0], generation)
            progress = advance(progress, step)
        if progress != shown:
            _say(
                printer,
                f"Migration progress: {options.src_display} scale in {progress.src}, "
                f"{options.dst_display} scale out {progress.dst}",
            )
            shown = progress
        if answer is None:
            await asyncio.sleep(poll)


async def run(client: Client, options: MigrateOptions, printer: Printer) -> list[str]:
    if options.create:
        return await create(client, options, printer)
    return await migrate(client, options, printer)
