"""Writing a JSON patch to a workload the way `kubectl set` does, honouring --dry-run.

`set image` and `set env` differ only in the patch they compute; client dry-run applies it locally
(so `-o yaml` shows what the server would store), server dry-run and real runs send it.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kruise.cli.kubectl_kruise.output import Printer
from kruise.kube.client import Client, PatchType
from kruise.kube.resources import ResourceRef


async def apply_json_patch(
    client: Client,
    printer: Printer,
    ref: ResourceRef,
    name: str,
    namespace: str | None,
    obj: dict[str, Any],
    ops: list[dict[str, Any]],
) -> dict[str, Any]:
    """The object after the patch; raises the client's ApiError when the server refuses it."""
    if printer.dry_run == "client":
        return jsonpatch.apply_patch(obj, ops)
    return await client.patch(
        ref, name, ops, namespace, patch_type=PatchType.JSON, dry_run=printer.dry_run == "server"
    )
