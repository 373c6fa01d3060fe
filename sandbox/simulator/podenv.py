"""A container's environment as the kubelet builds it, for containers run as real processes.

Order and rules follow the kubelet: the ``KUBERNETES_SERVICE_*`` variables first, then
``envFrom`` sources in order (with their ``prefix``), then ``env`` entries, later ones winning;
each ``value`` has ``$(VAR)`` references to earlier variables expanded (``$$`` escapes, an
unknown reference stays as written). ``valueFrom`` supports the downward API (``fieldRef``),
``resourceFieldRef``, ``configMapKeyRef`` and ``secretKeyRef``; a missing non-optional source
is a ``ConfigMissing`` with the kubelet's CreateContainerConfigError message.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kruise.sandbox.quantity import parse_quantity

Obj = dict[str, Any]
# (plural, namespace, name) -> the ConfigMap/Secret, or None when it does not exist
Fetch = Callable[[str, str, str], Awaitable[Obj | None]]

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_LABEL_PATH = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


class ConfigMissing(Exception):
    """A referenced ConfigMap/Secret or key does not exist (the container waits)."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: defined variables are substituted, ``$$`` becomes ``$``."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _REFERENCE.sub(substitute, text)


def field_value(pod: Obj, path: str, pod_ip: str, host_ip: str) -> str:
    """The downward API value of ``fieldRef.fieldPath``."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
    }
    if path in simple:
        return simple[path]
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
    match = _LABEL_PATH.match(path)
    if match:
        return str((meta.get(match.group(1)) or {}).get(match.group(2), ""))
    raise ConfigMissing(f'unsupported fieldRef.fieldPath "{path}"')


def resource_value(container: Mapping[str, Any], ref: Mapping[str, Any]) -> str:
    """``resourceFieldRef``: the container's limit (or request), divided and rounded up."""
    resource = ref.get("resource", "")
    kind, _, name = resource.partition(".")
    resources = container.get("resources") or {}
    raw = (resources.get(kind) or {}).get(name)
    if raw is None and kind == "limits":
        raw = (resources.get("requests") or {}).get(name)
    if raw is None:
        return "0"
    divisor = parse_quantity(str(ref.get("divisor") or "1"))
    return str(math.ceil(parse_quantity(str(raw)) / divisor))


def _data(obj: Obj, secret: bool) -> dict[str, str]:
    if secret:
        return {k: base64.b64decode(v).decode(errors="replace") for k, v in (obj.get("data") or {}).items()}
    values = dict(obj.get("data") or {})
    for key, raw in (obj.get("binaryData") or {}).items():
        values[key] = base64.b64decode(raw).decode(errors="replace")
    return values


async def _key_ref(namespace: str, ref: Mapping[str, Any], secret: bool, fetch: Fetch) -> str | None:
    kind = "secret" if secret else "configmap"
    name, key = ref.get("name", ""), ref.get("key", "")
    obj = await fetch("secrets" if secret else "configmaps", namespace, name)
    if obj is None:
        if ref.get("optional"):
            return None
        raise ConfigMissing(f'{kind} "{name}" not found')
    values = _data(obj, secret)
    if key not in values:
        if ref.get("optional"):
            return None
        label = "Secret" if secret else "ConfigMap"
        raise ConfigMissing(f"couldn't find key {key} in {label} {namespace}/{name}")
    return values[key]


async def container_env(
    pod: Obj,
    container: Mapping[str, Any],
    fetch: Fetch,
    *,
    pod_ip: str,
    host_ip: str,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The container's variables (``base`` first, e.g. the ``KUBERNETES_SERVICE_*`` ones)."""
    namespace = (pod.get("metadata") or {}).get("namespace", "default")
    env: dict[str, str] = dict(base or {})
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        for secret, ref in ((False, source.get("configMapRef")), (True, source.get("secretRef"))):
            if not ref:
                continue
            obj = await fetch("secrets" if secret else "configmaps", namespace, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    continue
                kind = "secret" if secret else "configmap"
                raise ConfigMissing(f'{kind} "{ref.get("name", "")}" not found')
            for key, value in _data(obj, secret).items():
                env[prefix + key] = value
    for entry in container.get("env") or []:
        name = entry["name"]
        source = entry.get("valueFrom")
        if not source:
            env[name] = expand(str(entry.get("value") or ""), env)
            continue
        value: str | None
        if "fieldRef" in source:
            value = field_value(pod, source["fieldRef"].get("fieldPath", ""), pod_ip, host_ip)
        elif "resourceFieldRef" in source:
            value = resource_value(container, source["resourceFieldRef"])
        elif "configMapKeyRef" in source:
            value = await _key_ref(namespace, source["configMapKeyRef"], False, fetch)
        elif "secretKeyRef" in source:
            value = await _key_ref(namespace, source["secretKeyRef"], True, fetch)
        else:
            raise ConfigMissing(f"env {name}: unsupported valueFrom {sorted(source)}")
        if value is not None:
            env[name] = value
    return env


async def simulated_env(
    pod: Obj,
    container: Mapping[str, Any],
    configmap: Callable[[str, str], Mapping[str, Any] | None],
    *,
    pod_ip: str,
    host_ip: str,
) -> dict[str, str]:
    """The environment of a simulated container (one without a process), so that ``env`` run in it answers
    what a real container would: downward-API values as the pod's metadata was at the container's start,
    ConfigMap values from the kubelet's cache. Secrets are not watched for simulated containers, so
    Secret-sourced variables are left out rather than blocking a container the kubelet already let start."""
    spec = dict(container)
    spec["envFrom"] = [s for s in container.get("envFrom") or [] if not s.get("secretRef")]
    spec["env"] = [e for e in container.get("env") or [] if "secretKeyRef" not in (e.get("valueFrom") or {})]

    async def fetch(plural: str, namespace: str, name: str) -> Obj | None:
        found = configmap(namespace, name) if plural == "configmaps" else None
        return dict(found) if found is not None else None

    try:
        return await container_env(pod, spec, fetch, pod_ip=pod_ip, host_ip=host_ip)
    except ConfigMissing:
        return {}  # a ConfigMap went away after the kubelet's check: the container starts all the same
