"""kubectl's `Pod Template:` block (describe.DescribePodTemplate), which `rollout history
--revision=N` and `rollout undo --dry-run=client` print.

kubectl writes it through a prefix writer without column alignment, so the tabs between a field
name and its value reach the terminal as they are; this module does the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_ANNOTATION_LEN = 140


class _Writer:
    """describe.PrefixWriter: level N prefixes 2N spaces."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def text(self) -> str:
        return "".join(self.parts)


def _shorten(text: str, limit: int) -> str:
    return text[:limit] + "..." if len(text) > limit else text


def _labels(w: _Writer, title: str, labels: Mapping[str, str] | None) -> None:
    w.write(0, f"{title}:\t")
    if not labels:
        w.write(0, "<none>\n")
        return
    for i, key in enumerate(sorted(labels)):
        if i:
            w.write(0, "\t")
        w.write(0, f"{key}={labels[key]}\n")


def _annotations(w: _Writer, title: str, annotations: Mapping[str, str]) -> None:
    w.write(0, f"{title}:\t")
    for i, key in enumerate(sorted(annotations)):
        if i:
            w.write(0, "\t")
        value = str(annotations[key]).removesuffix("\n")
        if len(value) + len(key) + 2 > MAX_ANNOTATION_LEN or "\n" in value:
            w.write(0, f"{key}:\n")
            for line in value.split("\n"):
                w.write(0, f"\t  {_shorten(line, MAX_ANNOTATION_LEN - 2)}\n")
        else:
            w.write(0, f"{key}: {value}\n")


def _tolerations(w: _Writer, title: str, tolerations: list[Mapping[str, Any]]) -> None:
    w.write(0, f"{title}:\t")
    if not tolerations:
        w.write(0, "<none>\n")
        return
    for i, tol in enumerate(tolerations):
        if i:
            w.write(0, "\t")
        key, value, effect = tol.get("key", ""), tol.get("value", ""), tol.get("effect", "")
        line = key + (f"={value}" if value else "") + (f":{effect}" if effect else "")
        if tol.get("operator") == "Exists" and not value:
            line += " op=Exists" if key or effect else "op=Exists"
        if tol.get("tolerationSeconds") is not None:
            line += f" for {tol['tolerationSeconds']}s"
        w.write(0, line + "\n")


def describe_probe(probe: Mapping[str, Any]) -> str:
    attrs = (
        f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s "
        f"period={probe.get('periodSeconds', 10)}s #success={probe.get('successThreshold', 1)} "
        f"#failure={probe.get('failureThreshold', 3)}"
    )
    if "exec" in probe:
        return f"exec [{' '.join((probe['exec'] or {}).get('command') or [])}] {attrs}"
    if "httpGet" in probe:
        get = probe["httpGet"] or {}
        scheme = str(get.get("scheme") or "HTTP").lower()
        host = get.get("host", "")
        return f"http-get {scheme}://{host}:{get.get('port', '')}{get.get('path', '')} {attrs}"
    if "tcpSocket" in probe:
        sock = probe["tcpSocket"] or {}
        return f"tcp-socket {sock.get('host', '')}:{sock.get('port', '')} {attrs}"
    if "grpc" in probe:
        grpc = probe["grpc"] or {}
        return f"grpc <pod>:{grpc.get('port', '')} {grpc.get('service', '')} {attrs}"
    return f"unknown {attrs}"


def _ports(ports: list[Mapping[str, Any]], field: str) -> str:
    return ", ".join(f"{p.get(field, 0)}/{p.get('protocol') or 'TCP'}" for p in ports)


def _container(w: _Writer, container: Mapping[str, Any]) -> None:
    w.write(1, f" {container.get('name', '')}:\n")
    w.write(2, f"Image:\t{container.get('image', '')}\n")
    ports = list(container.get("ports") or [])
    port, host_port = _ports(ports, "containerPort"), _ports(ports, "hostPort")
    w.write(2, f"Ports:\t{port}\n" if "," in port else f"Port:\t{port or '<none>'}\n")
    w.write(
        2, f"Host Ports:\t{host_port}\n" if "," in host_port else f"Host Port:\t{host_port or '<none>'}\n"
    )
    if container.get("restartPolicy"):
        w.write(2, f"Restart Policy:\t{container['restartPolicy']}\n")
    for title, field in (("Command", "command"), ("Args", "args")):
        if container.get(field):
            w.write(2, f"{title}:\n")
            for item in container[field]:
                for line in str(item).split("\n"):
                    w.write(3, f"{line}\n")
    resources = container.get("resources") or {}
    for title, field in (("Limits", "limits"), ("Requests", "requests")):
        values = resources.get(field) or {}
        if values:
            w.write(2, f"{title}:\n")
        for name in sorted(values):
            w.write(3, f"{name}:\t{values[name]}\n")
    for title, field in (
        ("Liveness", "livenessProbe"),
        ("Readiness", "readinessProbe"),
        ("Startup", "startupProbe"),
    ):
        if container.get(field):
            w.write(2, f"{title}:\t{describe_probe(container[field])}\n")
    _env_from(w, list(container.get("envFrom") or []))
    _env(w, list(container.get("env") or []))
    mounts = sorted(container.get("volumeMounts") or [], key=lambda m: m.get("mountPath", ""))
    w.write(2, "Mounts:\n" if mounts else "Mounts:\t<none>\n")
    for mount in mounts:
        flags = ["ro" if mount.get("readOnly") else "rw"]
        if mount.get("subPath"):
            flags.append(f'path="{mount["subPath"]}"')
        w.write(3, f"{mount.get('mountPath', '')} from {mount.get('name', '')} ({','.join(flags)})\n")


def _env_from(w: _Writer, sources: list[Mapping[str, Any]]) -> None:
    if not sources:
        return
    w.write(2, "Environment Variables from:\n")
    for source in sources:
        if "configMapRef" in source:
            ref, kind = source["configMapRef"] or {}, "ConfigMap"
        else:
            ref, kind = source.get("secretRef") or {}, "Secret"
        optional = "true" if ref.get("optional") else "false"
        prefix = source.get("prefix", "")
        suffix = f" with prefix '{prefix}'" if prefix else ""
        w.write(3, f"{ref.get('name', '')}\t{kind}{suffix}\tOptional: {optional}\n")


def _env(w: _Writer, env: list[Mapping[str, Any]]) -> None:
    w.write(2, "Environment:\n" if env else "Environment:\t<none>\n")
    for var in env:
        name, source = var.get("name", ""), var.get("valueFrom")
        if source is None:
            for i, line in enumerate(str(var.get("value", "")).split("\n")):
                w.write(3, f"{name}:\t{line}\n" if i == 0 else f"\t{line}\n")
        elif "fieldRef" in source:
            ref = source["fieldRef"] or {}
            w.write(3, f"{name}:\t ({ref.get('apiVersion', 'v1')}:{ref.get('fieldPath', '')})\n")
        elif "resourceFieldRef" in source:
            w.write(3, f"{name}:\t ({(source['resourceFieldRef'] or {}).get('resource', '')})\n")
        elif "secretKeyRef" in source:
            ref = source["secretKeyRef"] or {}
            optional = "true" if ref.get("optional") else "false"
            w.write(
                3,
                f"{name}:\t<set to the key '{ref.get('key', '')}' in secret '{ref.get('name', '')}'>\t"
                f"Optional: {optional}\n",
            )
        elif "configMapKeyRef" in source:
            ref = source["configMapKeyRef"] or {}
            optional = "true" if ref.get("optional") else "false"
            w.write(
                3,
                f"{name}:\t<set to the key '{ref.get('key', '')}' of config map '{ref.get('name', '')}'>\t"
                f"Optional: {optional}\n",
            )


def _volume(w: _Writer, volume: Mapping[str, Any]) -> None:
    w.write(1, f" {volume.get('name', '')}:\n")
    if "emptyDir" in volume:
        empty = volume["emptyDir"] or {}
        w.write(
            2,
            "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"
            f"    Medium:\t{empty.get('medium', '')}\n"
            f"    SizeLimit:\t{empty.get('sizeLimit') or '<unset>'}\n",
        )
    elif "configMap" in volume:
        cm = volume["configMap"] or {}
        w.write(
            2,
            "Type:\tConfigMap (a volume populated by a ConfigMap)\n"
            f"    Name:\t{cm.get('name', '')}\n    Optional:\t{'true' if cm.get('optional') else 'false'}\n",
        )
    elif "secret" in volume:
        secret = volume["secret"] or {}
        w.write(
            2,
            "Type:\tSecret (a volume populated by a Secret)\n"
            f"    SecretName:\t{secret.get('secretName', '')}\n"
            f"    Optional:\t{'true' if secret.get('optional') else 'false'}\n",
        )
    elif "persistentVolumeClaim" in volume:
        pvc = volume["persistentVolumeClaim"] or {}
        w.write(
            2,
            "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n"
            f"    ClaimName:\t{pvc.get('claimName', '')}\n"
            f"    ReadOnly:\t{'true' if pvc.get('readOnly') else 'false'}\n",
        )
    elif "hostPath" in volume:
        host = volume["hostPath"] or {}
        w.write(
            2,
            "Type:\tHostPath (bare host directory volume)\n"
            f"    Path:\t{host.get('path', '')}\n    HostPathType:\t{host.get('type', '')}\n",
        )
    else:
        w.write(1, "<unknown>\n")


def describe_pod_template(template: Mapping[str, Any] | None) -> str:
    w = _Writer()
    w.write(0, "Pod Template:\n")
    if template is None:
        w.write(1, "<unset>")
        return w.text()
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    _labels(w, "  Labels", meta.get("labels"))
    if meta.get("annotations"):
        _annotations(w, "  Annotations", meta["annotations"])
    if spec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{spec['serviceAccountName']}\n")
    for title, field in (("Init Containers", "initContainers"), ("Containers", "containers")):
        containers = spec.get(field) or []
        if field == "initContainers" and not containers:
            continue
        w.write(0, f"  {title}:\n")
        for container in containers:
            _container(w, container)
    volumes = spec.get("volumes") or []
    if not volumes:
        w.write(0, "  Volumes:\t<none>\n")
    else:
        w.write(0, "  Volumes:\n")
        for volume in volumes:
            _volume(w, volume)
    if spec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    _labels(w, "  Node-Selectors", spec.get("nodeSelector"))
    _tolerations(w, "  Tolerations", list(spec.get("tolerations") or []))
    return w.text()
