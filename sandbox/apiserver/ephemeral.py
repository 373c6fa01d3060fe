"""pods/ephemeralcontainers: what kube-apiserver's ephemeral-containers strategy keeps and refuses.

A write to the subresource (PUT of a Pod, or a PATCH of the served Pod) may only add ephemeral
containers. The strategy keeps the stored pod and takes nothing but `spec.ephemeralContainers` from
the body (metadata, the rest of the spec and the status sent along are ignored, never refused); the
validation then checks every ephemeral container as `validateEphemeralContainers` does (unique name
across all containers, image, supported policies, the fields an ephemeral container may not set, a
target container and volume mounts that exist) and that each container already in the pod is still
there, unchanged. Plain pod updates may not touch the list at all (see validation.py).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kruise.sandbox.apiserver.errors import field_error
from kruise.sandbox.apiserver.jsonfmt import go_value

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# EphemeralContainerCommon fields an ephemeral container may not set, in the order upstream checks them.
_FORBIDDEN = (
    "ports",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resources",
    "resizePolicy",
    "restartPolicy",
)
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


def prepare(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """dropNonEphemeralContainerUpdates: the stored pod with the body's ephemeral containers."""
    pod = copy.deepcopy(old)
    containers = copy.deepcopy((new.get("spec") or {}).get("ephemeralContainers"))
    if containers:
        pod.setdefault("spec", {})["ephemeralContainers"] = containers
    else:
        pod.setdefault("spec", {}).pop("ephemeralContainers", None)
    return pod


def _not_found(field: str, value: Any) -> dict[str, str]:
    return {"reason": "FieldValueNotFound", "message": f"Not found: {go_value(value)}", "field": field}


def _is_set(value: Any) -> bool:
    return value not in (None, "", [], {}, False, 0)


def _validate_one(
    container: dict[str, Any], path: str, spec: dict[str, Any], taken: set[str]
) -> list[dict[str, str]]:
    causes: list[dict[str, str]] = []
    name = container.get("name") or ""
    if not name:
        causes.append(field_error("FieldValueRequired", f"{path}.name"))
    elif len(name) > 63 or not _DNS_LABEL.fullmatch(name):
        causes.append(field_error("FieldValueInvalid", f"{path}.name", name, _DNS_LABEL_RULE))
    elif name in taken:
        causes.append(field_error("FieldValueDuplicate", f"{path}.name", name))
    else:
        taken.add(name)
    if not container.get("image"):
        causes.append(field_error("FieldValueRequired", f"{path}.image"))
    pull = container.get("imagePullPolicy") or ""
    if pull not in _PULL_POLICIES:
        causes.append(
            field_error(
                "FieldValueNotSupported",
                f"{path}.imagePullPolicy",
                pull,
                "supported values: " + ", ".join(f'"{p}"' for p in _PULL_POLICIES),
            )
        )
    message_policy = container.get("terminationMessagePolicy") or ""
    if message_policy not in _MESSAGE_POLICIES:
        causes.append(
            field_error(
                "FieldValueNotSupported",
                f"{path}.terminationMessagePolicy",
                message_policy,
                "supported values: " + ", ".join(f'"{p}"' for p in _MESSAGE_POLICIES),
            )
        )
    for key in _FORBIDDEN:
        if _is_set(container.get(key)):
            causes.append(
                field_error(
                    "FieldValueForbidden", f"{path}.{key}", detail="cannot be set for an Ephemeral Container"
                )
            )
    volumes = {v.get("name") for v in spec.get("volumes") or []}
    for j, mount in enumerate(container.get("volumeMounts") or []):
        mount_path = f"{path}.volumeMounts[{j}]"
        if mount.get("name") not in volumes:
            causes.append(_not_found(f"{mount_path}.name", mount.get("name") or ""))
        for key in ("subPath", "subPathExpr"):
            if mount.get(key):
                causes.append(
                    field_error(
                        "FieldValueForbidden",
                        f"{mount_path}.{key}",
                        detail="cannot be set for an Ephemeral Container",
                    )
                )
    target = container.get("targetContainerName") or ""
    regular = {c.get("name") for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]}
    if target and target not in regular:
        causes.append(_not_found(f"{path}.targetContainerName", target))
    return causes


def validate(new: dict[str, Any], old: dict[str, Any]) -> list[dict[str, str]]:
    """ValidatePodEphemeralContainersUpdate: the new list is valid and keeps every old container."""
    spec = new.get("spec") or {}
    causes: list[dict[str, str]] = []
    if "kubernetes.io/config.mirror" in ((old.get("metadata") or {}).get("annotations") or {}):
        return [
            field_error("FieldValueForbidden", "", detail="static pods do not support ephemeral containers")
        ]
    taken = {c.get("name") for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]}
    for i, container in enumerate(spec.get("ephemeralContainers") or []):
        causes += _validate_one(container, f"spec.ephemeralContainers[{i}]", spec, taken)
    by_name = {c.get("name"): c for c in spec.get("ephemeralContainers") or []}
    for existing in (old.get("spec") or {}).get("ephemeralContainers") or []:
        name = existing.get("name")
        current = by_name.get(name)
        if current is None:
            causes.append(
                field_error(
                    "FieldValueForbidden",
                    "spec.ephemeralContainers",
                    detail=f'existing ephemeral containers "{name}" may not be removed\n',
                )
            )
        elif current != existing:
            changed = sorted(k for k in set(current) | set(existing) if current.get(k) != existing.get(k))
            causes.append(
                field_error(
                    "FieldValueForbidden",
                    f"spec.ephemeralContainers.{name}",
                    detail=f'existing ephemeral containers "{name}" may not be changed\n'
                    f"changed fields: {', '.join(changed)}",
                )
            )
    return causes
