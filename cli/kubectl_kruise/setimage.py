"""`set image TYPE/NAME CONTAINER=IMAGE...`: kubectl's `set image` for Kruise kinds too.

kubectl's own `set image` only knows built-in kinds; kruise-tools adds CloneSet, Advanced
StatefulSet, Advanced DaemonSet and SidecarSet (whose containers sit in `spec`, not in a pod
template). The change is sent as a JSON patch that tests each container's name before replacing
its image, so a concurrent reorder of the containers makes the patch fail instead of changing
the wrong container.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client
from kruise.kube.resources import ResourceRef

SIDECARSETS = ResourceRef("apps.kruise.io", "v1alpha1", "sidecarsets", False, "SidecarSet")
SIDECARSET = kinds.Workload(SIDECARSETS, "sidecarset")
TARGETS: tuple[kinds.Workload, ...] = (*kinds.WORKLOADS, SIDECARSET)
CONTAINER_LISTS = ("initContainers", "containers")


class SetImageError(PluginError):
    """Bad arguments; kubectl's wording."""


@dataclass(frozen=True)
class SetImageArgs:
    resources: list[str]
    images: dict[str, str]  # container name (or "*") -> image, in the order given


def split_arguments(args: list[str]) -> SetImageArgs:
    """kubectl's GetResourcesAndPairs + ParsePairs: resources first, then `NAME=IMAGE` pairs."""
    resources: list[str] = []
    images: dict[str, str] = {}
    for arg in args:
        if "=" in arg:
            name, _, image = arg.partition("=")
            if not name or not image:
                raise SetImageError(f'invalid image format: "{arg}"')
            images[name] = image
        elif images:
            raise SetImageError(f"all resources must be specified before image changes: {arg}")
        else:
            resources.append(arg)
    if not resources:
        raise SetImageError(
            "one or more resources must be specified as <resource> <name> or <resource>/<name>"
        )
    if not images:
        raise SetImageError("at least one image update is required")
    if len(images) > 1 and "*" in images:
        raise SetImageError(
            "all containers are already specified by *, "
            "but saw more than one container_name=container_image pairs"
        )
    return SetImageArgs(resources, images)


def containers_path(workload: kinds.Workload) -> str:
    return "/spec" if workload is SIDECARSET else "/spec/template/spec"


def image_patch(
    workload: kinds.Workload, obj: Mapping[str, Any], images: Mapping[str, str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The JSON patch for the images that actually change, and the names no container has."""
    base = containers_path(workload)
    spec: Any = obj
    for key in base.strip("/").split("/"):
        spec = (spec or {}).get(key) or {}
    ops: list[dict[str, Any]] = []
    missing: list[str] = []
    for name, image in images.items():
        found = False
        for list_name in CONTAINER_LISTS:
            for i, container in enumerate(spec.get(list_name) or []):
                if name != "*" and container.get("name") != name:
                    continue
                found = True
                if container.get("image") == image:
                    continue
                path = f"{base}/{list_name}/{i}"
                ops.append({"op": "test", "path": f"{path}/name", "value": container.get("name")})
                ops.append({"op": "replace", "path": f"{path}/image", "value": image})
        if not found:
            missing.append(name)
    return ops, missing


COMMAND = PatchCommand("image updated", "failed to patch image update to pod template: ")


def plan(images: Mapping[str, str]) -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        ops, missing = image_patch(target.workload, obj, images)
        return Edit(ops, [f'unable to find container named "{name}"' for name in missing])

    return edit


async def set_image(
    client: Client,
    namespace: str,
    targets: list[kinds.Target],
    images: Mapping[str, str],
    printer: Printer,
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(images), COMMAND, printer)
