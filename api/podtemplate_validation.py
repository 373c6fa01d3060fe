"""The part of core ValidatePodTemplateSpec that workloads trip over most, in the apiserver's words.

Upstream converts the template to the internal core type and runs the full pod validation; this
covers names, images, ports, volume names, container restartPolicy (native sidecars) and template
labels — enough that a template the real apiserver would reject for those reasons is rejected here
with the same field path and text.
"""

from __future__ import annotations

import re
from typing import Any

import jsonpatch

from kruise.api.objects import meta_of, spec_of
from kruise.api.validation import (
    ErrorType,
    FieldError,
    dns1123_label_errors,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    validate_labels,
    validate_nonnegative,
)

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
INIT_CONTAINER_RESTART_POLICIES = ["Always"]
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


def _validate_mounts(mounts: list[dict[str, Any]], volumes: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, mount in enumerate(mounts):
        name = mount.get("name") or ""
        if not name:
            errs.append(required(f"{path}[{i}].name"))
        elif name not in volumes:
            errs.append(FieldError(ErrorType.NotFound, f"{path}[{i}].name", name))
        if not mount.get("mountPath"):
            errs.append(required(f"{path}[{i}].mountPath"))
    return errs


def _restart_policy_errors(container: dict[str, Any], cpath: str, *, init: bool) -> list[FieldError]:
    """A container-level `restartPolicy` (Kubernetes 1.28+ native sidecars): only `Always`, only on
    init containers; init containers without it run to completion, so they may carry no lifecycle
    hooks and no probes."""
    restart = container.get("restartPolicy")
    if not init:
        if restart is not None:
            return [forbidden(f"{cpath}.restartPolicy", "may not be set for non-init containers")]
        return []
    errs: list[FieldError] = []
    if restart is not None and restart not in INIT_CONTAINER_RESTART_POLICIES:
        errs.append(not_supported(f"{cpath}.restartPolicy", restart, INIT_CONTAINER_RESTART_POLICIES))
    if restart != "Always":
        for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if container.get(key) is not None:
                errs.append(
                    forbidden(
                        f"{cpath}.{key}", "may not be set for init containers without restartPolicy=Always"
                    )
                )
    return errs


def _validate_devices(devices: list[dict[str, Any]], volumes: set[str], path: str) -> list[FieldError]:
    """volumeDevices: a named pod volume and a device path, as core validation requires."""
    errs: list[FieldError] = []
    for i, device in enumerate(devices):
        name = device.get("name") or ""
        if not name:
            errs.append(required(f"{path}[{i}].name"))
        elif name not in volumes:
            errs.append(FieldError(ErrorType.NotFound, f"{path}[{i}].name", name))
        if not device.get("devicePath"):
            errs.append(required(f"{path}[{i}].devicePath"))
    return errs


def _validate_containers(
    containers: list[dict[str, Any]], path: str, names: set[str], volumes: set[str], *, init: bool = False
) -> list[FieldError]:
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
        errs.extend(_validate_mounts(container.get("volumeMounts") or [], volumes, f"{cpath}.volumeMounts"))
        errs.extend(_restart_policy_errors(container, cpath, init=init))
        errs.extend(
            _validate_devices(container.get("volumeDevices") or [], volumes, f"{cpath}.volumeDevices")
        )
    return errs


def validate_pod_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    """Volumes first, then containers, then init containers: the order core validation reports in."""
    errs: list[FieldError] = []
    volume_names: set[str] = set()
    for i, volume in enumerate(spec.get("volumes") or []):
        name = (volume.get("name") if isinstance(volume, dict) else "") or ""
        vpath = f"{path}.volumes[{i}].name"
        if not name:
            errs.append(required(vpath))
        else:
            errs.extend(invalid(vpath, name, m) for m in dns1123_label_errors(name))
            if name in volume_names:
                errs.append(duplicate(vpath, name))
            volume_names.add(name)
    containers = spec.get("containers") or []
    if not containers:
        errs.append(required(f"{path}.containers"))
    names: set[str] = set()
    errs.extend(_validate_containers(containers, f"{path}.containers", names, volume_names))
    init_containers = spec.get("initContainers") or []
    errs.extend(
        _validate_containers(init_containers, f"{path}.initContainers", names, volume_names, init=True)
    )
    restart = spec.get("restartPolicy")
    if restart and restart not in RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and dns not in DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int):
        errs.extend(validate_nonnegative(grace, f"{path}.terminationGracePeriodSeconds"))
    return errs


def validate_pod_template(
    template: dict[str, Any] | None, path: str, claim_names: list[str] | None = None
) -> list[FieldError]:
    """ValidatePodTemplateSpec; `claim_names` (PVC templates) count as volumes, as upstream mocks them in."""
    template = template or {}
    metadata = template.get("metadata") or {}
    errs = validate_labels(metadata.get("labels"), f"{path}.metadata.labels")
    spec = dict(spec_of(template))
    if claim_names:
        claims = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in claim_names]
        spec["volumes"] = [*(spec.get("volumes") or []), *claims]
    errs.extend(validate_pod_spec(spec, f"{path}.spec"))
    return errs


def template_spec_patch(
    old_template: dict[str, Any] | None, new_template: dict[str, Any] | None
) -> list[dict]:
    """JSON-patch operations between two templates' pod specs (what InPlaceOnly checks inspect)."""
    return jsonpatch.make_patch(template_spec(old_template), template_spec(new_template)).patch


def first_non_image_change(
    old_template: dict[str, Any] | None, new_template: dict[str, Any] | None, anchored: bool
) -> str | None:
    """`"<op> <path>"` of the first change that is not a container image replacement, else None.

    CloneSet anchors its image-path pattern and Advanced StatefulSet does not; both are kept.
    """
    pattern = re.compile(r"^/containers/([0-9]+)/image$" if anchored else r"/containers/([0-9]+)/image")
    for op in template_spec_patch(old_template, new_template):
        if op["op"] != "replace" or not pattern.search(op["path"]):
            return f"{op['op']} {op['path']}"
    return None


def template_labels(template: dict[str, Any] | None) -> dict[str, str]:
    return meta_of(template or {}).get("labels") or {}


def template_spec(template: dict[str, Any] | None) -> dict[str, Any]:
    return (template or {}).get("spec") or {}
