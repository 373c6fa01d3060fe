"""pods/resize: what kube-apiserver's pod resize strategy keeps and refuses (1.33+ in-place resize).

A write to the subresource keeps the stored pod and takes from the body nothing but each regular
container's (and each native sidecar's) `resources` and `resizePolicy`, matched by container name;
metadata, the rest of the spec and the status sent along are ignored. The result is then checked as
`ValidatePodResize` does, with its texts: requests within limits and a well-formed resizePolicy (the
part of pod spec validation a resize can trip), no pod-level resources, no static or Windows pod, the
QoS class unchanged, requests and limits never removed, a memory limit not added (and, on 1.33 only,
not lowered) unless memory's resizePolicy is RestartContainer, and nothing but cpu and memory changed.
From 1.32
plain pod updates may not touch resources at all (see validation.py); below, there is no subresource
and the update itself resizes (features.py, podupdateresize.py).
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver.errors import field_error
from kruise.sandbox.qos import compute_qos
from kruise.sandbox.quantity import amount

_RESIZABLE = ("cpu", "memory")
_POLICIES = ("NotRequired", "RestartContainer")


def _same_list(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """apiequality.Semantic on two ResourceLists: same names, equal quantities (1 == 1000m)."""
    a, b = a or {}, b or {}
    return set(a) == set(b) and all(amount(a[k]) == amount(b[k]) for k in a)


def _resizable_groups(spec: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [("initContainers", sidecars), ("containers", list(spec.get("containers") or []))]


def prepare(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """dropNonResizeUpdates: the stored pod with the body's resources and resizePolicy, by container name."""
    pod = copy.deepcopy(old)
    new_spec = new.get("spec") or {}
    spec = pod.setdefault("spec", {})
    for group in ("containers", "initContainers"):
        sent = {c.get("name"): c for c in new_spec.get(group) or [] if isinstance(c, dict)}
        for container in spec.get(group) or []:
            if group == "initContainers" and container.get("restartPolicy") != "Always":
                continue
            body = sent.get(container.get("name"))
            if body is None:
                continue
            for key in ("resources", "resizePolicy"):
                if body.get(key) is not None:
                    container[key] = copy.deepcopy(body[key])
                else:
                    container.pop(key, None)
            container.setdefault("resources", {})  # SetDefaults: resources is a struct, never absent
    return pod


def spec_rules(container: dict[str, Any], path: str, restart_policy: str) -> list[dict[str, str]]:
    """The parts of ValidatePodSpec a resize can break: requests within limits, and resizePolicy."""
    causes: list[dict[str, str]] = []
    resources = container.get("resources") or {}
    limits = resources.get("limits") or {}
    for name, value in (resources.get("requests") or {}).items():
        if (
            name in limits
            and (req := amount(value)) is not None
            and (lim := amount(limits[name])) is not None
        ) and req > lim:
            causes.append(
                field_error(
                    "FieldValueInvalid",
                    f"{path}.resources.requests",
                    str(value),
                    f"must be less than or equal to {name} limit of {limits[name]}",
                )
            )
    policy_path = f"{path}.resizePolicy"
    seen: set[str] = set()
    for i, policy in enumerate(container.get("resizePolicy") or []):
        resource = policy.get("resourceName") or ""
        restart = policy.get("restartPolicy") or ""
        if resource in seen:
            causes.append(field_error("FieldValueDuplicate", f"{policy_path}[{i}]", resource))
        seen.add(resource)
        if not resource:
            causes.append(field_error("FieldValueRequired", policy_path))
        elif resource not in _RESIZABLE:
            causes.append(
                field_error(
                    "FieldValueNotSupported", policy_path, resource, 'supported values: "cpu", "memory"'
                )
            )
        if not restart:
            causes.append(field_error("FieldValueRequired", policy_path))
        elif restart not in _POLICIES:
            causes.append(
                field_error(
                    "FieldValueNotSupported",
                    policy_path,
                    restart,
                    'supported values: "NotRequired", "RestartContainer"',
                )
            )
        if restart_policy == "Never" and restart != "NotRequired":
            causes.append(
                field_error(
                    "FieldValueInvalid",
                    policy_path,
                    restart,
                    "must be 'NotRequired' when `restartPolicy` is 'Never'",
                )
            )
    return causes


def _container_resize(
    new: dict[str, Any], old: dict[str, Any], path: str, memory_decrease_needs_restart: bool
) -> list[dict[str, str]]:
    """validateContainerResize: nothing removed; memory limits added (and, on 1.33, lowered) only with
    RestartContainer."""
    causes: list[dict[str, str]] = []
    new_res, old_res = new.get("resources") or {}, old.get("resources") or {}
    for key, what in (("requests", "requests"), ("limits", "limits")):
        if set(old_res.get(key) or {}) - set(new_res.get(key) or {}):
            causes.append(
                field_error(
                    "FieldValueForbidden", f"{path}.{key}", detail=f"resource {what} cannot be removed"
                )
            )
    memory_policy = next(
        (
            p.get("restartPolicy") or ""
            for p in new.get("resizePolicy") or []
            if p.get("resourceName") == "memory"
        ),
        "",
    )
    if memory_policy in ("", "NotRequired"):
        new_limit = (new_res.get("limits") or {}).get("memory")
        old_limit = (old_res.get("limits") or {}).get("memory")
        where = f"{path}.limits[memory]"
        if new_limit is not None and old_limit is not None:
            lowered, before = amount(new_limit), amount(old_limit)
            if (
                memory_decrease_needs_restart
                and lowered is not None
                and before is not None
                and lowered < before
            ):
                causes.append(
                    field_error(
                        "FieldValueForbidden",
                        where,
                        detail="memory limits cannot be decreased unless resizePolicy is RestartContainer",
                    )
                )
        elif new_limit is not None:
            causes.append(
                field_error(
                    "FieldValueForbidden",
                    where,
                    detail="memory limits cannot be added unless resizePolicy is RestartContainer",
                )
            )
    return causes


def _without_cpu_memory_changes(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """dropCPUMemoryResourcesFromContainer: `new` with cpu and memory put back to the old values."""
    container = copy.deepcopy(new)
    new_res, old_res = new.get("resources") or {}, old.get("resources") or {}
    munged: dict[str, Any] = {}
    for key in ("limits", "requests"):
        if old_res.get(key) is None:
            continue
        kept = {k: v for k, v in (new_res.get(key) or {}).items() if k not in _RESIZABLE}
        kept.update({k: v for k, v in old_res[key].items() if k in _RESIZABLE})
        munged[key] = kept
    container["resources"] = munged
    return container


def _same_container(a: dict[str, Any], b: dict[str, Any]) -> bool:
    a_res, b_res = a.get("resources") or {}, b.get("resources") or {}
    if not (
        _same_list(a_res.get("requests"), b_res.get("requests"))
        and _same_list(a_res.get("limits"), b_res.get("limits"))
    ):
        return False
    rest_a = {k: v for k, v in a.items() if k != "resources"}
    rest_b = {k: v for k, v in b.items() if k != "resources"}
    return rest_a == rest_b


def _resize_supported(old: dict[str, Any]) -> bool:
    """isPodResizeRequestSupported: the first running container reports status resources."""
    for status in (old.get("status") or {}).get("containerStatuses") or []:
        if (status.get("state") or {}).get("running") is not None:
            return status.get("resources") is not None
    return True


def validate(
    new: dict[str, Any], old: dict[str, Any], memory_decrease_needs_restart: bool = False
) -> list[dict[str, str]]:
    """ValidatePodResize on the prepared pod against the stored one; `memory_decrease_needs_restart`
    is 1.33's extra rule (features.py)."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    restart_policy = spec.get("restartPolicy") or "Always"
    causes: list[dict[str, str]] = []
    for group, containers in _resizable_groups(spec):
        for container in containers:
            index = (spec.get(group) or []).index(container)
            causes += spec_rules(container, f"spec.{group}[{index}]", restart_policy)

    def pod_level(pod_spec: dict[str, Any]) -> bool:
        resources = pod_spec.get("resources") or {}
        return bool(resources.get("requests") or resources.get("limits"))

    if pod_level(old_spec) or pod_level(spec):
        return [
            field_error("FieldValueForbidden", "", detail="pods with pod-level resources cannot be resized")
        ]
    if "kubernetes.io/config.mirror" in ((old.get("metadata") or {}).get("annotations") or {}):
        return [field_error("FieldValueForbidden", "", detail="static pods cannot be resized")]
    if ((old_spec.get("os") or {}).get("name")) == "windows":
        return [field_error("FieldValueForbidden", "", detail="windows pods cannot be resized")]
    old_qos = (old.get("status") or {}).get("qosClass") or compute_qos(old_spec)
    if old_qos != compute_qos(spec):
        causes.append(
            field_error(
                "FieldValueInvalid",
                "spec",
                (new.get("status") or {}).get("qosClass") or "",
                "Pod QOS Class may not change as a result of resizing",
            )
        )
    if not _resize_supported(old):
        causes.append(
            field_error(
                "FieldValueForbidden", "spec", detail="Pod running on node without support for resize"
            )
        )
    old_inits = old_spec.get("initContainers") or []
    new_inits = spec.get("initContainers") or []
    for i, container in enumerate(old_inits):
        if container.get("restartPolicy") == "Always" and i < len(new_inits):
            causes += _container_resize(
                new_inits[i], container, f"spec.initContainers[{i}].resources", memory_decrease_needs_restart
            )
    old_containers = old_spec.get("containers") or []
    new_containers = spec.get("containers") or []
    for i, container in enumerate(old_containers):
        if i < len(new_containers):
            causes += _container_resize(
                new_containers[i], container, f"spec.containers[{i}].resources", memory_decrease_needs_restart
            )
    for i, container in enumerate(new_containers):
        if i < len(old_containers) and not _same_container(
            _without_cpu_memory_changes(container, old_containers[i]), old_containers[i]
        ):
            causes.append(
                field_error("FieldValueForbidden", "spec", detail="only cpu and memory resources are mutable")
            )
    for i, container in enumerate(new_inits):
        if i >= len(old_inits):
            continue
        if container.get("restartPolicy") == "Always":
            if not _same_container(_without_cpu_memory_changes(container, old_inits[i]), old_inits[i]):
                causes.append(
                    field_error(
                        "FieldValueForbidden",
                        "spec",
                        detail="only cpu and memory resources for sidecar containers are mutable",
                    )
                )
        elif not _same_container(container, old_inits[i]):
            causes.append(
                field_error(
                    "FieldValueForbidden",
                    "spec",
                    detail="resources for non-sidecar init containers are immutable",
                )
            )
    return causes
