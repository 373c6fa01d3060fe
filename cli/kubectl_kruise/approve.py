"""`rollout approve TYPE/NAME...`: let a Kruise Rollout that waits at a paused step go on.

Only Kruise Rollouts (rollouts.kruise.io, v1beta1) can be approved, as in kruise-tools: the
current step of the canary or blue-green progress must be `StepPaused`, and approving moves it to
`StepReady` through the status subresource. Workloads are refused by name
(`clonesets.apps.kruise.io "demo" approving is not supported`).
"""

from __future__ import annotations

from typing import Any

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client

COMMAND = PatchCommand("approved", "failed to patch: ", subresource="status")
PAUSED = "StepPaused"
READY = "StepReady"


class ApproveError(PluginError):
    """The object cannot be approved now; upstream's reason after the object's name."""


def approve_edit(obj: dict[str, Any]) -> Edit:
    """The status change for a Rollout, or upstream's reason why there is none."""
    status = obj.get("status") or {}
    for field, progress in (("canaryStatus", "canary"), ("blueGreenStatus", "blue-green")):
        step = status.get(field)
        if step is None:
            continue
        if step.get("currentStepState") != PAUSED:
            raise ApproveError(
                f"does not allow to approve, because current {progress} state is not '{PAUSED}'"
            )
        path = f"/status/{field}/currentStepState"
        return Edit(
            [{"op": "test", "path": path, "value": PAUSED}, {"op": "replace", "path": path, "value": READY}]
        )
    raise ApproveError("no need to approve: not in canary or blue-green progress")


def plan() -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        try:
            if target.workload is not objects.ROLLOUT:
                raise ApproveError("approving is not supported")
            return approve_edit(obj)
        except ApproveError as err:
            raise ApproveError(f'{target.workload.resource} "{target.name}" {err}') from None

    return edit


async def rollout_approve(
    client: Client, namespace: str, targets: list[kinds.Target], printer: Printer
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(), COMMAND, printer)
