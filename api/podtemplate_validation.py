"""The part of core ValidatePodTemplateSpec that workloads trip over most, in the apiserver's words.

Upstream converts the template to the internal core type and runs the full pod validation; this
covers names, images, ports, volume names and template labels — enough that a template the real
apiserver would reject for those reasons is rejected here with the same field path and text.
"""

from __future__ import annotations

from typing import Any

from kruise.api.validation import (
    FieldError,
    dns1123_label_errors,
    duplicate,
    invalid,
    not_supported,
    required,
    validate_labels,
)

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]


def _validate_ports(ports: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, port in enumerate(ports):
        ppath = f"{path}[{i}]"
        number = port.get("containerPort")
        if not number:
            errs.append(required(f"{ppath}.containerPort"))
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            errs.append(invalid(f"{ppath}.containerPort", number, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")
        if protocol and protocol not in ("TCP", "UDP", "SCTP"):
            errs.append(not_supported(f"{ppath}.protocol", protocol, ["SCTP", "TCP", "UDP"]))
    return errs


def _validate_containers(containers: list[dict[str, Any]], path: str, names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, container in enumerate(containers):
        cpath = f"{path}[{i}]"
        name = container.get("name") or ""
        if not name:
            errs.append(required(f"{cpath}.name"))
        else:
            errs.extend(invalid(f"{cpath}.name", name, m) for m in dns1123_label_errors(name))
            if name in names:
                errs.append(duplicate(f"{cpath}.name", name))
            names.add(name)
        if not (container.get("image") or "").strip():
            errs.append(required(f"{cpath}.image"))
        errs.extend(_validate_ports(container.get("ports") or [], f"{cpath}.ports"))
    return errs


def validate_pod_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = spec.get("containers") or []
    if not containers:
        errs.append(required(f"{path}.containers"))
    names: set[str] = set()
    errs.extend(_validate_containers(containers, f"{path}.containers", names))
    errs.extend(_validate_containers(spec.get("initContainers") or [], f"{path}.initContainers", names))
    volume_names: set[str] = set()
    for i, volume in enumerate(spec.get("volumes") or []):
        name = volume.get("name") or ""
        vpath = f"{path}.volumes[{i}].name"
        if not name:
            errs.append(required(vpath))
        else:
            errs.extend(invalid(vpath, name, m) for m in dns1123_label_errors(name))
            if name in volume_names:
                errs.append(duplicate(vpath, name))
            volume_names.add(name)
    restart = spec.get("restartPolicy")
    if restart and restart not in RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and dns not in DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        errs.append(
            invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0")
        )
    return errs


def validate_pod_template(template: dict[str, Any] | None, path: str) -> list[FieldError]:
    template = template or {}
    metadata = template.get("metadata") or {}
    errs = validate_labels(metadata.get("labels"), f"{path}.metadata.labels")
    errs.extend(validate_pod_spec(template.get("spec") or {}, f"{path}.spec"))
    return errs


def template_labels(template: dict[str, Any] | None) -> dict[str, str]:
    return ((template or {}).get("metadata") or {}).get("labels") or {}


def template_spec(template: dict[str, Any] | None) -> dict[str, Any]:
    return (template or {}).get("spec") or {}
