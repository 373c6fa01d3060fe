"""The commands: read objects, apply the pure rules of the sibling modules, write, print.

Each command takes a connected `Client`, the namespace and its parsed options, reports through
a `Printer`, and returns the list of per-object errors (kubectl keeps going after one object
fails and reports all failures at the end). Problems that stop the whole command raise
`CommandError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kruise.cli.kubectl_kruise import history, kinds, mutate, status
from kruise.cli.kubectl_kruise.describe import describe_pod_template
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer, api_error_text
from kruise.control.common.podstatus import is_ready
from kruise.control.common.revision import equal_to_revision_hash
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import ApiError, Gone
from kruise.kube.resources import CONTROLLER_REVISIONS, PODS, REPLICASETS
from kruise.kube.retry import retry_on_conflict

WATCH_SECONDS = 300


class CommandError(PluginError):
    """Stops the command; printed as `error: <text>`."""


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def label_selector(selector: Mapping[str, Any] | None) -> str:
    """A metav1.LabelSelector as the `labelSelector` query string."""
    selector = selector or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


# ---- rollout status --------------------------------------------------------------------------


async def observe(client: Client, target: kinds.Target, namespace: str) -> AsyncIterator[dict[str, Any]]:
    """The object now, then every later version, until it is deleted (which raises).

    A watch that ends is resumed from the last version seen; a 410 Gone re-reads the object.
    """
    ref = target.workload.ref
    obj = await client.get(ref, target.name, namespace)
    yield obj
    version = obj["metadata"].get("resourceVersion")
    while True:
        try:
            async for event in client.watch(
                ref,
                namespace,
                resource_version=version,
                field_selector=f"metadata.name={target.name}",
                timeout_seconds=WATCH_SECONDS,
            ):
                version = (event.object.get("metadata") or {}).get("resourceVersion") or version
                if event.type == "BOOKMARK":
                    continue
                if event.type == "DELETED":
                    raise CommandError("object has been deleted")
                yield event.object
        except Gone:
            obj = await client.get(ref, target.name, namespace)
            version = obj["metadata"].get("resourceVersion")
            yield obj


@dataclass(frozen=True)
class StatusOptions:
    watch: bool = True
    revision: int = 0
    timeout: float | None = None  # seconds; None waits forever
    detail: bool = False  # CloneSet: also list the updated pods, ready and not ready


async def cloneset_pods_info(client: Client, cloneset: Mapping[str, Any]) -> str:
    """The detail lines: the CloneSet's pods already on its update revision, by readiness."""
    namespace = cloneset["metadata"].get("namespace")
    selector = label_selector((cloneset.get("spec") or {}).get("selector"))
    pods, _ = await client.list_all(PODS, namespace, label_selector=selector or None)
    update_revision = (cloneset.get("status") or {}).get("updateRevision", "")
    uid = cloneset["metadata"].get("uid", "")
    ready: list[str] = []
    not_ready: list[str] = []
    if not update_revision:  # no revision reported yet: no pod can be on it
        return status.pods_info(ready, not_ready)
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        if not history.is_controlled_by(pod, uid) or not equal_to_revision_hash(pod, update_revision):
            continue
        (ready if is_ready(pod) else not_ready).append(pod["metadata"]["name"])
    return status.pods_info(ready, not_ready)


async def _status_message(
    client: Client, target: kinds.Target, obj: dict[str, Any], options: StatusOptions
) -> tuple[str, bool]:
    if options.detail and target.workload is kinds.CLONESET:
        return status.cloneset_detail_status(obj, await cloneset_pods_info(client, obj))
    return status.rollout_status(target.workload, obj, options.revision)


async def rollout_status(
    client: Client, namespace: str, targets: list[kinds.Target], options: StatusOptions, printer: Printer
) -> list[str]:
    if len(targets) != 1:
        raise CommandError(
            "rollout status is only supported on individual resources and resource collections - "
            f"{len(targets)} resources were found"
        )
    target = targets[0]
    last = None
    try:
        async with asyncio.timeout(options.timeout), aclosing(observe(client, target, namespace)) as versions:
            async for obj in versions:
                try:
                    message, done = await _status_message(client, target, obj, options)
                except status.RolloutError as err:
                    raise CommandError(str(err)) from None
                # kubectl prints on every event; repeating an unchanged line adds nothing.
                if message != last:
                    printer.write(message)
                    last = message
                if done or not options.watch:
                    return []
    except TimeoutError:
        raise CommandError("timed out waiting for the condition") from None
    return []


# ---- pause / resume / restart ----------------------------------------------------------------


def _object_error(target: kinds.Target, err: Exception) -> str:
    return f'{target.workload.resource} "{target.name}" {err}'


async def _patch_each(
    client: Client,
    namespace: str,
    targets: list[kinds.Target],
    make_patch: Callable[[kinds.Workload, dict[str, Any]], dict[str, Any]],
    operation: str,
    printer: Printer,
) -> list[str]:
    errors: list[str] = []
    for target in targets:
        ref = target.workload.ref
        try:
            obj = await client.get(ref, target.name, namespace)
            patch = make_patch(target.workload, obj)
            obj = await client.patch(ref, target.name, patch, namespace, patch_type=PatchType.MERGE)
        except mutate.MutationError as err:
            errors.append(_object_error(target, err))
            continue
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        printer.object(target.display(), operation, obj)
    return errors


async def rollout_pause(
    client: Client, namespace: str, targets: list[kinds.Target], printer: Printer
) -> list[str]:
    return await _patch_each(client, namespace, targets, mutate.pause_patch, "paused", printer)


async def rollout_resume(
    client: Client, namespace: str, targets: list[kinds.Target], printer: Printer
) -> list[str]:
    return await _patch_each(client, namespace, targets, mutate.resume_patch, "resumed", printer)


async def _replace(
    client: Client, target: kinds.Target, namespace: str, change: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """Read-modify-PUT with the object's resourceVersion, re-read on conflict."""
    ref = target.workload.ref

    async def attempt() -> dict[str, Any]:
        obj = await client.get(ref, target.name, namespace)
        return await client.update(ref, change(obj))

    return await retry_on_conflict(attempt)


async def rollout_restart(
    client: Client, namespace: str, targets: list[kinds.Target], printer: Printer, now: str | None = None
) -> list[str]:
    stamp = now or now_rfc3339()
    errors: list[str] = []
    for target in targets:
        try:
            if target.workload.is_kruise:
                obj = await _replace(client, target, namespace, lambda o: mutate.with_restart_env(o, stamp))
            else:
                obj = await client.get(target.workload.ref, target.name, namespace)
                patch = mutate.restart_annotation_patch(target.workload, obj, stamp)
                await client.patch(
                    target.workload.ref, target.name, patch, namespace, patch_type=PatchType.MERGE
                )
        except mutate.MutationError as err:
            errors.append(_object_error(target, err))
            continue
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        printer.object(target.display(), "restarted", obj)
    return errors


# ---- history / undo --------------------------------------------------------------------------


async def load_history(
    client: Client, namespace: str, target: kinds.Target
) -> tuple[dict[str, Any], list[history.Revision]]:
    """The workload and its revisions, oldest first."""
    obj = await client.get(target.workload.ref, target.name, namespace)
    selector = label_selector((obj.get("spec") or {}).get("selector"))
    uid = obj["metadata"].get("uid", "")
    if target.workload is kinds.DEPLOYMENT:
        items, _ = await client.list_all(REPLICASETS, namespace, label_selector=selector or None)
        return obj, history.replicaset_revisions(items, uid)
    items, _ = await client.list_all(CONTROLLER_REVISIONS, namespace, label_selector=selector or None)
    return obj, history.controller_revisions(items, uid)


async def rollout_history(
    client: Client, namespace: str, targets: list[kinds.Target], revision: int, printer: Printer
) -> list[str]:
    errors: list[str] = []
    for target in targets:
        try:
            _, revisions = await load_history(client, namespace, target)
            text = history.view_history(revisions, revision)
        except history.HistoryError as err:
            errors.append(str(err))
            continue
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        heading = f"with revision #{revision}" if revision > 0 else ""
        printer.write(f"{target.display()} {heading}\n{text}\n")
    return errors


async def _undo_one(
    client: Client, namespace: str, target: kinds.Target, to_revision: int, dry_run: str
) -> tuple[str, dict[str, Any]]:
    """What happened (the name printer's operation) and the object as it now is."""
    obj, revisions = await load_history(client, namespace, target)
    current = (obj.get("spec") or {}).get("template") or {}
    if target.workload is kinds.DEPLOYMENT:
        chosen = history.deployment_rollback_target(revisions, current, to_revision, target.name)
    else:
        word = "latest" if target.workload is kinds.ADVANCED_STATEFULSET else "last"
        chosen = history.find_revision(revisions, to_revision, word)
    if dry_run == "client":
        return f"will roll back to {describe_pod_template(chosen.template)}", obj
    if history.templates_equal(chosen.template, current):
        return f"skipped rollback (current template already matches revision {chosen.number})", obj
    if target.workload is kinds.DEPLOYMENT:
        patch = history.deployment_rollback_patch(obj, chosen)
    else:
        patch = history.template_rollback_patch(chosen)
    try:
        obj = await client.patch(
            target.workload.ref,
            target.name,
            patch,
            namespace,
            patch_type=PatchType.JSON,
            dry_run=dry_run == "server",
        )
    except ApiError as err:
        raise history.HistoryError(f"failed restoring revision {chosen.number}: {err.message}") from None
    return "rolled back", obj


async def rollout_undo(
    client: Client, namespace: str, targets: list[kinds.Target], to_revision: int, printer: Printer
) -> list[str]:
    errors: list[str] = []
    seen: set[tuple[kinds.Workload, str]] = set()
    for target in targets:
        if (target.workload, target.name) in seen:  # one undo per workload, as kruise-tools
            continue
        seen.add((target.workload, target.name))
        try:
            result, obj = await _undo_one(client, namespace, target, to_revision, printer.dry_run)
        except history.HistoryError as err:
            errors.append(str(err))
            continue
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        printer.object(target.display(), result, obj)
    return errors


# ---- scaledown -------------------------------------------------------------------------------


async def scaledown(
    client: Client, namespace: str, targets: list[kinds.Target], pods: str, printer: Printer
) -> list[str]:
    try:
        names = mutate.parse_pod_list(pods)
    except mutate.MutationError as err:
        raise CommandError(str(err)) from None
    target = targets[0]
    if target.workload is not kinds.CLONESET:
        raise CommandError("currently only supported CloneSet selective pods deletion")
    try:
        cloneset = await client.get(target.workload.ref, target.name, namespace)
        uid = cloneset["metadata"].get("uid", "")
        for name in names:
            pod = await client.get(PODS, name, namespace)
            if not history.is_controlled_by(pod, uid):
                raise CommandError(f'pod "{name}" is not owned by CloneSet {target.name}')
        updated = await _replace(client, target, namespace, lambda obj: mutate.scaledown(obj, names))
    except mutate.MutationError as err:
        printer.write(f"{target.name} delete pods [{' '.join(names)}] failed\n")
        raise CommandError(f"scaledown cloneset {target.name} failed, error is {err}") from None
    except ApiError as err:
        printer.write(f"{target.name} delete pods [{' '.join(names)}] failed\n")
        raise CommandError(
            f"scaledown cloneset {target.name} failed, error is {api_error_text(err)}"
        ) from None
    printer.write(f"# {target.name} delete pods [{' '.join(names)}] successfully\n")
    printer.object(target.display(), "selective pod deletion", updated)
    return []
