"""Writing a JSON patch to objects the way `kubectl set` does, honouring --dry-run.

Every `set` command (and `rollout approve`) is the same loop: read each named object, work out the
JSON patch, send it (or apply it locally on a client dry run, so `-o yaml` shows what the server
would store), print the name printer's line, and collect per-object failures. The commands differ
only in the patch they compute, so the loop lives here once and each command supplies a `Plan`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer, api_error_text
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import ApiError
from kruise.kube.resources import ResourceRef

Ops = list[dict[str, Any]]


@dataclass(frozen=True)
class Edit:
    """What to write to one object: the JSON patch (empty: write and print nothing, as kubectl does
    for an unchanged object) and problems to report even though the rest is written (kubectl's
    `set image` patches the containers it found and reports the names it did not)."""

    ops: Ops = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# Works out the edit for one object as read; raises PluginError to skip that object with its text.
Plan = Callable[[kinds.Target, dict[str, Any]], Edit]


async def apply_json_patch(
    client: Client,
    printer: Printer,
    ref: ResourceRef,
    name: str,
    namespace: str | None,
    obj: dict[str, Any],
    ops: Ops,
    subresource: str | None = None,
) -> dict[str, Any]:
    """The object after the patch; raises the client's ApiError when the server refuses it."""
    if printer.dry_run == "client":
        return jsonpatch.apply_patch(obj, ops)
    return await client.patch(
        ref,
        name,
        ops,
        namespace,
        patch_type=PatchType.JSON,
        dry_run=printer.dry_run == "server",
        subresource=subresource,
    )


@dataclass(frozen=True)
class PatchCommand:
    """How one command words its results: the name printer's operation (`image updated`), the prefix
    of a refused patch (`failed to patch ServiceAccountName `; None shows the server's answer as
    `Error from server (Reason): ...`), and whether one unreadable object
    stops the whole command before anything is written (cli-runtime's `Infos()`, which `set
    serviceaccount` and `set subject` use) or only skips that object (its `Visit`)."""

    operation: str
    refused: str | None
    read_all_first: bool = False
    subresource: str | None = None


async def _read(
    client: Client, namespace: str, targets: Sequence[kinds.Target]
) -> list[tuple[kinds.Target, dict[str, Any] | str]]:
    read: list[tuple[kinds.Target, dict[str, Any] | str]] = []
    for target in targets:
        ref = target.workload.ref
        try:
            read.append((target, await client.get(ref, target.name, namespace if ref.namespaced else None)))
        except ApiError as err:
            read.append((target, api_error_text(err)))
    return read


async def patch_each(
    client: Client,
    namespace: str,
    targets: Sequence[kinds.Target],
    plan: Plan,
    command: PatchCommand,
    printer: Printer,
) -> list[str]:
    """Read, plan, patch and print each target in order; the failures, for the end of the run."""
    read = await _read(client, namespace, targets)
    unreadable = [obj for _, obj in read if isinstance(obj, str)]
    if command.read_all_first and unreadable:
        return unreadable
    errors: list[str] = []
    for target, obj in read:
        if isinstance(obj, str):
            errors.append(obj)
            continue
        try:
            edit = plan(target, obj)
        except PluginError as err:
            errors.append(str(err))
            continue
        errors.extend(edit.problems)
        if not edit.ops:
            continue
        ref = target.workload.ref
        scope = namespace if ref.namespaced else None
        try:
            obj = await apply_json_patch(
                client, printer, ref, target.name, scope, obj, edit.ops, command.subresource
            )
        except ApiError as err:
            refusal = api_error_text(err) if command.refused is None else f"{command.refused}{err.message}"
            errors.append(refusal)
            continue
        printer.object(target.display(), command.operation, obj)
    return errors
