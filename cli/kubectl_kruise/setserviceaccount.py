"""`set serviceaccount (TYPE NAME | TYPE/NAME)... SERVICE_ACCOUNT` (alias `sa`).

kruise-tools' version of kubectl's command, which also reaches the pod templates of CloneSet,
Advanced StatefulSet and Advanced DaemonSet. As upstream: every named object is read before any is
written (one missing object stops the command), every object is written and printed even when its
service account already matches, and a kind without a pod template is refused by name.
"""

from __future__ import annotations

from typing import Any

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client

COMMAND = PatchCommand("serviceaccount updated", "failed to patch ServiceAccountName ", read_all_first=True)


class SetServiceAccountError(PluginError):
    """Bad arguments, or an object without a pod spec; upstream's wording."""


def split_arguments(args: list[str]) -> tuple[list[kinds.Target], str]:
    """The last argument is the service account; everything before it names the objects."""
    if not args:
        raise SetServiceAccountError("serviceaccount is required")
    return kinds.parse_targets(args[:-1], objects.SET_TARGETS), args[-1]


def pod_spec_path(workload: kinds.Workload) -> str | None:
    if workload is objects.POD:
        return "/spec"
    if workload in objects.TEMPLATED:
        return "/spec/template/spec"
    return None


def plan(service_account: str) -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        path = pod_spec_path(target.workload)
        if path is None:
            raise SetServiceAccountError(
                f"{objects.object_name(target)} the object is not a pod or does not have a pod template: "
                f"{objects.go_type(target.workload)}"
            )
        return Edit([{"op": "add", "path": f"{path}/serviceAccountName", "value": service_account}])

    return edit


async def set_serviceaccount(
    client: Client, namespace: str, targets: list[kinds.Target], service_account: str, printer: Printer
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(service_account), COMMAND, printer)
