"""Go `encoding/json` output for sidecar containers, so SidecarSet hashes match upstream byte for byte.

Upstream hashes `json.Marshal` of typed structs. Unlike a map, a struct is written in field
declaration order, `omitempty` drops zero scalars and empty lists but never a non-pointer struct
(`resources` is always `{}`), unknown fields vanish on decode, and quantities are re-rendered in
canonical form. The tables below record, per core/v1 type, each field's JSON name, kind and
whether it is `omitempty` — the facts needed to reproduce those bytes from a plain dict.

Kinds: `s` string, `i` integer, `b` bool, `*s`/`*i`/`*b` pointers to those, `[s]`/`[i]` lists of
them, `ios` IntOrString, `q` Quantity, `{q}` map of quantities, `T` / `*T` / `[T]` a struct in the
table by value / pointer / list, and `^T` a struct embedded inline.
"""

from __future__ import annotations

import json
from typing import Any

from kruise.api.goquantity import Quantity, QuantityError

Field = tuple[str, str, bool]


def _fields(spec: str) -> tuple[Field, ...]:
    """`"name:s image:s? ..."` -> ((name, kind, omitempty), ...); a trailing `?` marks omitempty."""
    out = []
    for item in spec.split():
        name, kind = item.split(":", 1)
        omit = kind.endswith("?")
        out.append((name, kind.rstrip("?"), omit))
    return tuple(out)


TYPES: dict[str, tuple[Field, ...]] = {
    "Container": _fields(
        "name:s image:s? command:[s]? args:[s]? workingDir:s? ports:[ContainerPort]? "
        "envFrom:[EnvFromSource]? env:[EnvVar]? resources:ResourceRequirements? "
        "resizePolicy:[ContainerResizePolicy]? restartPolicy:*s? restartPolicyRules:[ContainerRestartRule]? "
        "volumeMounts:[VolumeMount]? volumeDevices:[VolumeDevice]? livenessProbe:*Probe? "
        "readinessProbe:*Probe? startupProbe:*Probe? lifecycle:*Lifecycle? terminationMessagePath:s? "
        "terminationMessagePolicy:s? imagePullPolicy:s? securityContext:*SecurityContext? "
        "stdin:b? stdinOnce:b? tty:b?"
    ),
    "SidecarContainer": _fields(
        "_:^Container podInjectPolicy:s? upgradeStrategy:SidecarContainerUpgradeStrategy? "
        "shareVolumePolicy:ShareVolumePolicy? shareVolumeDevicePolicy:*ShareVolumePolicy? "
        "transferEnv:[TransferEnvVar]? resourcesPolicy:*ResourcesPolicy?"
    ),
    "SidecarContainerUpgradeStrategy": _fields("upgradeType:s? hotUpgradeEmptyImage:s?"),
    "ShareVolumePolicy": _fields("type:s?"),
    "TransferEnvVar": _fields(
        "sourceContainerName:s? sourceContainerNameFrom:*SourceContainerNameSource? envName:s? envNames:[s]?"
    ),
    "SourceContainerNameSource": _fields("fieldRef:*ObjectFieldSelector?"),
    "ResourcesPolicy": _fields(
        "targetContainersMode:s targetContainersNameRegex:s? resourcesExpr:ResourcesExpr"
    ),
    "ResourcesExpr": _fields("limits:*ResourceExprLimits? requests:*ResourceExprRequests?"),
    "ResourceExprLimits": _fields("cpu:s? memory:s?"),
    "ResourceExprRequests": _fields("cpu:s? memory:s?"),
    "ContainerPort": _fields("name:s? hostPort:i? containerPort:i protocol:s? hostIP:s?"),
    "EnvFromSource": _fields("prefix:s? configMapRef:*ConfigMapEnvSource? secretRef:*SecretEnvSource?"),
    "ConfigMapEnvSource": _fields("_:^LocalObjectReference optional:*b?"),
    "SecretEnvSource": _fields("_:^LocalObjectReference optional:*b?"),
    "LocalObjectReference": _fields("name:s?"),
    "EnvVar": _fields("name:s value:s? valueFrom:*EnvVarSource?"),
    "EnvVarSource": _fields(
        "fieldRef:*ObjectFieldSelector? resourceFieldRef:*ResourceFieldSelector? "
        "configMapKeyRef:*ConfigMapKeySelector? secretKeyRef:*SecretKeySelector? fileKeyRef:*FileKeySelector?"
    ),
    "ObjectFieldSelector": _fields("apiVersion:s? fieldPath:s"),
    "ResourceFieldSelector": _fields("containerName:s? resource:s divisor:q?"),
    "ConfigMapKeySelector": _fields("_:^LocalObjectReference key:s optional:*b?"),
    "SecretKeySelector": _fields("_:^LocalObjectReference key:s optional:*b?"),
    "FileKeySelector": _fields("volumeName:s path:s key:s optional:*b?"),
    "ResourceRequirements": _fields("limits:{q}? requests:{q}? claims:[ResourceClaim]?"),
    "ResourceClaim": _fields("name:s request:s?"),
    "ContainerResizePolicy": _fields("resourceName:s restartPolicy:s"),
    "ContainerRestartRule": _fields("action:s? exitCodes:*ContainerRestartRuleOnExitCodes?"),
    "ContainerRestartRuleOnExitCodes": _fields("operator:s? values:[i]?"),
    "VolumeMount": _fields(
        "name:s readOnly:b? recursiveReadOnly:*s? mountPath:s subPath:s? mountPropagation:*s? "
        "subPathExpr:s? bindMountOptions:[s]?"
    ),
    "VolumeDevice": _fields("name:s devicePath:s"),
    "Probe": _fields(
        "_:^ProbeHandler initialDelaySeconds:i? timeoutSeconds:i? periodSeconds:i? successThreshold:i? "
        "failureThreshold:i? terminationGracePeriodSeconds:*i?"
    ),
    "ProbeHandler": _fields(
        "exec:*ExecAction? httpGet:*HTTPGetAction? tcpSocket:*TCPSocketAction? grpc:*GRPCAction?"
    ),
    "ExecAction": _fields("command:[s]?"),
    "HTTPGetAction": _fields("path:s? port:ios host:s? scheme:s? httpHeaders:[HTTPHeader]? protocol:*s?"),
    "HTTPHeader": _fields("name:s value:s"),
    "TCPSocketAction": _fields("port:ios host:s?"),
    "GRPCAction": _fields("port:i service:*s mode:*s?"),
    "Lifecycle": _fields("postStart:*LifecycleHandler? preStop:*LifecycleHandler? stopSignal:*s?"),
    "LifecycleHandler": _fields(
        "exec:*ExecAction? httpGet:*HTTPGetAction? tcpSocket:*TCPSocketAction? sleep:*SleepAction?"
    ),
    "SleepAction": _fields("seconds:i"),
    "SecurityContext": _fields(
        "capabilities:*Capabilities? privileged:*b? seLinuxOptions:*SELinuxOptions? "
        "windowsOptions:*WindowsSecurityContextOptions? runAsUser:*i? runAsGroup:*i? runAsNonRoot:*b? "
        "readOnlyRootFilesystem:*b? allowPrivilegeEscalation:*b? procMount:*s? "
        "seccompProfile:*SeccompProfile? appArmorProfile:*AppArmorProfile?"
    ),
    "Capabilities": _fields("add:[s]? drop:[s]?"),
    "SELinuxOptions": _fields("user:s? role:s? type:s? level:s?"),
    "WindowsSecurityContextOptions": _fields(
        "gmsaCredentialSpecName:*s? gmsaCredentialSpec:*s? runAsUserName:*s? hostProcess:*b?"
    ),
    "SeccompProfile": _fields("type:s localhostProfile:*s?"),
    "AppArmorProfile": _fields("type:s localhostProfile:*s?"),
}

_ZERO = {"s": "", "i": 0, "b": False}


def canonical_quantity(raw: Any) -> str:
    """`resource.Quantity.String()` of a manifest value: what Go re-encodes after decoding it.

    Text the apiserver would refuse is returned as written: it never reaches a hash upstream."""
    try:
        return str(Quantity.of(raw))
    except QuantityError:
        return str(raw).strip()


def _empty(kind: str, value: Any) -> bool:
    """Whether `omitempty` drops the value: zero scalars, nil pointers, empty lists and maps."""
    if value is None:
        return True
    if kind in _ZERO:
        return value == _ZERO[kind] or (kind == "i" and value is False)
    if kind.startswith("[") or kind.startswith("{"):
        return len(value) == 0
    return False


def _scalar(kind: str, value: Any) -> Any:
    base = kind.lstrip("*")
    if value is None:
        return None if kind.startswith("*") else _ZERO[base]
    if base == "s":
        return str(value)
    if base == "i":
        return int(value)
    return bool(value)


def to_go(value: Any, kind: str) -> Any:
    """`value` as Go would re-encode it after decoding into `kind`; dicts keep Go field order."""
    if kind in ("s", "i", "b", "*s", "*i", "*b"):
        return _scalar(kind, value)
    if kind == "ios":
        return value if isinstance(value, int | str) else 0
    if kind == "q":
        return canonical_quantity(value if value is not None else "0")
    if kind == "{q}":
        return None if value is None else {k: canonical_quantity(value[k]) for k in sorted(value)}
    if kind.startswith("["):
        if value is None:
            return None
        inner = kind[1:-1]
        return [to_go(v, inner) for v in value]
    if kind.startswith("*"):
        return None if value is None else struct(value, kind[1:])
    return struct(value or {}, kind)


def struct(value: dict[str, Any], type_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind, omit in TYPES[type_name]:
        if kind.startswith("^"):
            out.update(struct(value, kind[1:]))
            continue
        raw = value.get(name)
        if omit and _droppable(kind) and _empty(kind, raw):
            continue
        out[name] = to_go(raw, kind)
    return out


def _droppable(kind: str) -> bool:
    """Non-pointer structs (Quantity and IntOrString are structs too) are never dropped by `omitempty`."""
    return kind in _ZERO or kind.startswith(("*", "[", "{"))


def dumps(value: Any) -> bytes:
    """Go `json.Marshal` bytes of an already Go-shaped value: compact, key order kept, HTML-safe."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()
