"""In-place resize through a plain pod update: kube-apiserver 1.27–1.31 with InPlacePodVerticalScaling.

Before `pods/resize` existed (1.32) a resize was an ordinary PUT or PATCH of the pod. ValidatePodUpdate
then compares the new spec with the stored one after putting back, in each regular container (matched
by index), the stored cpu and memory of its requests and limits and the stored resizePolicy
(`dropCPUMemoryUpdates`): what is left must be unchanged, or the update is refused with the usual
"pod updates may not change fields other than ..." text, which names the resources among the mutable
fields. The QoS class computed from the new spec must equal the stored one ("Pod QoS is immutable",
reported on `metadata` with the pod's status QoS class as the value), and a changed container's
resources and resizePolicy must pass pod spec validation (requests within limits; resizePolicy
well formed). Native sidecars and init containers cannot be resized this way. `features.py` decides
when this applies.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver.errors import field_error
from kruise.sandbox.apiserver.podresize import spec_rules
from kruise.sandbox.qos import compute_qos

MUTABLE_RESOURCES_RULE = ",`spec.containers[*].resources` (for CPU/memory only)"
_RESIZABLE = ("cpu", "memory")


def _drop_cpu_memory_updates(new: dict[str, Any] | None, old: dict[str, Any] | None) -> dict[str, Any] | None:
    """The new resource list with cpu and memory as stored; none at all when none was stored."""
    if old is None:
        return None
    kept = {name: value for name, value in (new or {}).items() if name not in _RESIZABLE}
    kept.update({name: value for name, value in old.items() if name in _RESIZABLE})
    return kept


def without_resize(spec: dict[str, Any], old_spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` with every regular container's cpu/memory and resizePolicy put back to the stored ones."""
    munged = copy.deepcopy(spec)
    old_containers = old_spec.get("containers") or []
    for container, old in zip(munged.get("containers") or [], old_containers, strict=False):
        resources, old_resources = container.get("resources") or {}, old.get("resources") or {}
        munged_resources = {k: v for k, v in resources.items() if k not in ("limits", "requests")}
        for key in ("limits", "requests"):
            kept = _drop_cpu_memory_updates(resources.get(key), old_resources.get(key))
            if kept is not None:
                munged_resources[key] = kept
        if munged_resources or "resources" in old:
            container["resources"] = munged_resources
        else:
            container.pop("resources", None)
        if "resizePolicy" in old:
            container["resizePolicy"] = copy.deepcopy(old["resizePolicy"])
        else:
            container.pop("resizePolicy", None)
    return munged


def resize_rules(new: dict[str, Any], old: dict[str, Any]) -> list[dict[str, str]]:
    """Spec validation of the containers whose resources or resizePolicy changed, then the QoS rule."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    restart_policy = spec.get("restartPolicy") or "Always"
    causes: list[dict[str, str]] = []
    old_containers = old_spec.get("containers") or []
    for i, container in enumerate(spec.get("containers") or []):
        before = old_containers[i] if i < len(old_containers) else {}
        if any(container.get(key) != before.get(key) for key in ("resources", "resizePolicy")):
            causes += spec_rules(container, f"spec.containers[{i}]", restart_policy)
    status_qos = (new.get("status") or {}).get("qosClass") or (old.get("status") or {}).get("qosClass")
    if (status_qos or compute_qos(old_spec)) != compute_qos(spec):
        causes.append(field_error("FieldValueInvalid", "metadata", status_qos or "", "Pod QoS is immutable"))
    return causes
