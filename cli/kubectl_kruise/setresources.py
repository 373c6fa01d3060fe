"""`set resources TYPE/NAME [-c CONTAINERS] [--limits=...] [--requests=...]`.

kubectl's `set resources` as kruise-tools wraps it: the named limits/requests are merged into the
resources of every matching regular container (init containers are left alone, as upstream's
selection only looks at `containers`). Each container's change is a JSON patch that tests the
container's name first, the same guard `set image` and `set env` use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.goquantity import Quantity, QuantityError
from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.setenv import selected_containers
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client


class SetResourcesError(PluginError):
    """Bad flags; kubectl's wording."""


@dataclass(frozen=True)
class SetResourcesOptions:
    limits: dict[str, str]
    requests: dict[str, str]
    containers: str = "*"


def parse_resource_list(spec: str) -> dict[str, str]:
    """kubectl's `cpu=100m,memory=256Mi`; each quantity is stored in its canonical form."""
    if not spec:
        return {}
    out: dict[str, str] = {}
    for statement in spec.split(","):
        parts = statement.split("=")
        if len(parts) != 2:
            raise SetResourcesError(f"Invalid argument syntax {statement}, expected <resource>=<value>")
        try:
            out[parts[0]] = str(Quantity.parse(parts[1]))
        except QuantityError as err:
            raise SetResourcesError(str(err)) from None
    return out


def options_from_flags(limits: str, requests: str, containers: str) -> SetResourcesOptions:
    if not limits and not requests:
        raise SetResourcesError(
            "you must specify an update to requests or limits (in the form of --requests/--limits)"
        )
    return SetResourcesOptions(parse_resource_list(limits), parse_resource_list(requests), containers)


def merged_resources(current: Mapping[str, Any] | None, options: SetResourcesOptions) -> dict[str, Any]:
    """The container's resources with the given names overwritten and all others kept."""
    out = dict(current or {})
    for key, wanted in (("limits", options.limits), ("requests", options.requests)):
        if wanted:
            out[key] = {**(out.get(key) or {}), **wanted}
    return out


def resources_patch(
    obj: Mapping[str, Any], options: SetResourcesOptions
) -> tuple[list[dict[str, Any]], bool]:
    """The JSON patch for the containers whose resources change, and whether any container matched."""
    selected = selected_containers(obj, options.containers, ("containers",))
    ops: list[dict[str, Any]] = []
    for list_name, i, container in selected:
        current = container.get("resources") or {}
        updated = merged_resources(current, options)
        if updated == current:
            continue
        path = f"/spec/template/spec/{list_name}/{i}"
        ops.append({"op": "test", "path": f"{path}/name", "value": container.get("name")})
        ops.append({"op": "add", "path": f"{path}/resources", "value": updated})
    return ops, bool(selected)


COMMAND = PatchCommand("resource requirements updated", "failed to patch resources update to pod template ")


def plan(options: SetResourcesOptions) -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        ops, matched = resources_patch(obj, options)
        if not matched:
            # kubectl's message already starts with "error: "; CheckErr adds another.
            raise SetResourcesError(f"error: unable to find container named {options.containers}")
        return Edit(ops)

    return edit


async def set_resources(
    client: Client,
    namespace: str,
    targets: list[kinds.Target],
    options: SetResourcesOptions,
    printer: Printer,
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(options), COMMAND, printer)
