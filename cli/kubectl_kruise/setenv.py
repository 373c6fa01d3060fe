"""`set env TYPE/NAME KEY=VALUE... KEY-... [-c CONTAINERS] [--list] [--overwrite=false]`.

kubectl's `set env` for the plugin's workloads (Kruise kinds included). Env changes are written
as a JSON patch per container that tests the container's name first, like `set image`; with
`--list` nothing is written and each selected container's env is printed kubectl's way.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client

ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
ENV_NAME_RULE = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
    "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', "
    "regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"
)
CONTAINER_LISTS = ("initContainers", "containers")


class SetEnvError(PluginError):
    """Bad arguments or a refused overwrite; kubectl's wording."""


@dataclass(frozen=True)
class EnvChanges:
    set: list[dict[str, str]] = field(default_factory=list)  # in the order given; a later KEY wins
    remove: list[str] = field(default_factory=list)


def is_env_arg(arg: str) -> bool:
    return "=" in arg or arg.endswith("-")


def split_arguments(args: list[str]) -> tuple[list[str], list[str]]:
    """kubectl's SplitEnvironmentFromResources: resources, then env arguments, never mixed."""
    resources: list[str] = []
    envs: list[str] = []
    for arg in args:
        if is_env_arg(arg):
            envs.append(arg)
        elif envs:
            raise SetEnvError(f"all resources must be specified before environment changes: {arg}")
        else:
            resources.append(arg)
    return resources, envs


def parse_env(specs: list[str]) -> EnvChanges:
    """kubectl's ParseEnv: `KEY=VALUE` sets, `KEY-` removes."""
    changes = EnvChanges()
    for spec in specs:
        if "=" in spec:
            name, _, value = spec.partition("=")
            if not ENV_NAME.fullmatch(name):
                raise SetEnvError(f'"{name}" is not a valid key name: {ENV_NAME_RULE}')
            changes.set.append({"name": name, "value": value})
        elif spec.endswith("-") and len(spec) > 1:
            changes.remove.append(spec[:-1])
        else:
            raise SetEnvError(f"unknown environment variable: {spec}")
    return changes


def update_env(existing: list[dict[str, Any]], changes: EnvChanges) -> list[dict[str, Any]]:
    """kubectl's updateEnv: removed names go, set names replace in place, new ones append."""
    wanted = {var["name"]: var for var in changes.set}
    covered = set(changes.remove)
    out: list[dict[str, Any]] = []
    for var in existing:
        name = var.get("name", "")
        if name in covered:
            continue
        if name in wanted:
            covered.add(name)
            out.append(dict(wanted[name]))
            continue
        out.append(var)
    for var in changes.set:
        if var["name"] not in covered:
            covered.add(var["name"])
            out.append(dict(wanted[var["name"]]))
    return out


def check_no_overwrite(existing: list[dict[str, Any]], changes: EnvChanges) -> None:
    current = {var.get("name"): var for var in existing}
    for var in changes.set:
        old = current.get(var["name"])
        if old is not None and old.get("value") != var["value"]:
            raise SetEnvError(
                f"'{var['name']}' already has a value ({old.get('value', '')}), and --overwrite is false"
            )


def env_ref(source: Mapping[str, Any]) -> str:
    """kubectl's GetEnvVarRefString."""
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"] or {}
        return f"configmap {ref.get('name', '')}, key {ref.get('key', '')}"
    if "secretKeyRef" in source:
        ref = source["secretKeyRef"] or {}
        return f"secret {ref.get('name', '')}, key {ref.get('key', '')}"
    if "fieldRef" in source:
        return f"field path {(source['fieldRef'] or {}).get('fieldPath', '')}"
    if "resourceFieldRef" in source:
        ref = source["resourceFieldRef"] or {}
        container = ref.get("containerName", "")
        where = f" of container {container}" if container else ""
        return f"resource {ref.get('resource', '')}{where}"
    return "invalid source"


def list_env(kind: str, name: str, container: Mapping[str, Any]) -> str:
    lines = [f"# {kind} {name}, container {container.get('name', '')}"]
    for var in container.get("env") or []:
        if var.get("valueFrom") is None:
            lines.append(f"{var.get('name', '')}={var.get('value', '')}")
        else:
            lines.append(f"# {var.get('name', '')} from {env_ref(var['valueFrom'])}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SetEnvOptions:
    changes: EnvChanges
    containers: str = "*"
    list_only: bool = False
    overwrite: bool = True


def options_from_arguments(
    arguments: list[str], extra_env: list[str], containers: str, list_only: bool, overwrite: bool
) -> tuple[list[str], SetEnvOptions]:
    """The resources and the options of one `set env` call, with kubectl's argument checks."""
    resources, env_args = split_arguments(arguments)
    changes = parse_env([*extra_env, *env_args])
    if not resources:
        raise SetEnvError("one or more resources must be specified as <resource> <name> or <resource>/<name>")
    if not list_only and not changes.set and not changes.remove:
        raise SetEnvError("at least one environment variable must be provided")
    return resources, SetEnvOptions(changes, containers, list_only, overwrite)


def selected_containers(
    obj: Mapping[str, Any], pattern: str, lists: tuple[str, ...] = CONTAINER_LISTS
) -> list[tuple[str, int, Mapping[str, Any]]]:
    """The pod template's containers whose name matches `pattern`, as (list, index, container)."""
    spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
    return [
        (list_name, i, container)
        for list_name in lists
        for i, container in enumerate(spec.get(list_name) or [])
        if fnmatch.fnmatchcase(container.get("name", ""), pattern)
    ]


def env_patch(obj: Mapping[str, Any], options: SetEnvOptions) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for list_name, i, container in selected_containers(obj, options.containers):
        existing = list(container.get("env") or [])
        if not options.overwrite:
            check_no_overwrite(existing, options.changes)
        updated = update_env(existing, options.changes)
        if updated == existing:
            continue
        path = f"/spec/template/spec/{list_name}/{i}"
        ops.append({"op": "test", "path": f"{path}/name", "value": container.get("name")})
        ops.append({"op": "add", "path": f"{path}/env", "value": updated})
    return ops


COMMAND = PatchCommand("env updated", "failed to patch env update to pod template: ")


def plan(options: SetEnvOptions, printer: Printer) -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        selected = selected_containers(obj, options.containers)
        if not selected:
            printer.warn(
                f"{target.workload.kind}/{target.name} does not have any containers matching "
                f'"{options.containers}"'
            )
            return Edit()
        if options.list_only:
            for _, _, container in selected:
                printer.write(list_env(target.workload.kind, target.name, container))
            return Edit()
        return Edit(env_patch(obj, options))

    return edit


async def set_env(
    client: Client, namespace: str, targets: list[kinds.Target], options: SetEnvOptions, printer: Printer
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(options, printer), COMMAND, printer)
