"""Defaults the apiserver would give a pod, applied to pod templates inside Kruise workloads.

Upstream's workload defaulting webhooks call the core SetDefaults_PodSpec family on templates so
that the stored template equals what the created pods will look like; without this, every
revision hash would differ from upstream's and in-place update would see phantom changes.
Templates stay plain dicts (they are schemaless in the CRDs); functions mutate in place.
One deliberate upstream quirk: app containers get imagePullPolicy Always when unset, whatever the
tag, while init containers get the core tag-based rule.
"""

from __future__ import annotations

from typing import Any

from kruise.api.objects import section

DEFAULT_MODE = 420  # 0644
VOLUME_SOURCE_KEYS = tuple(
    [
        "hostPath",
        "emptyDir",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "gitRepo",
        "secret",
        "nfs",
        "iscsi",
        "glusterfs",
        "persistentVolumeClaim",
        "rbd",
        "flexVolume",
        "cinder",
        "cephfs",
        "flocker",
        "downwardAPI",
        "fc",
        "azureFile",
        "configMap",
        "vsphereVolume",
        "quobyte",
        "azureDisk",
        "photonPersistentDisk",
        "projected",
        "portworxVolume",
        "scaleIO",
        "storageos",
        "csi",
        "ephemeral",
        "image",
    ]
)


def default_pull_policy(image: str) -> str:
    """Core rule: Always for `:latest` or an untagged image, else IfNotPresent (a digest counts as a tag)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def _field_ref(ref: dict[str, Any] | None) -> None:
    if ref is not None:
        ref.setdefault("apiVersion", "v1")


def _http_get(action: dict[str, Any] | None) -> None:
    if action is not None:
        action.setdefault("path", "/")
        action.setdefault("scheme", "HTTP")


def _probe(probe: dict[str, Any] | None) -> None:
    if probe is None:
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    _http_get(probe.get("httpGet"))


def default_container(container: dict[str, Any], app_container: bool) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = (
            "Always" if app_container else default_pull_policy(container.get("image", ""))
        )
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for env in container.get("env") or []:
        _field_ref(section(env, "valueFrom").get("fieldRef"))
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(name))
    lifecycle = container.get("lifecycle") or {}
    for hook in ("postStart", "preStop"):
        _http_get(section(lifecycle, hook).get("httpGet"))


def default_volumes(volumes: list[dict[str, Any]] | None) -> None:
    """Volume defaults; malformed entries are left for validation to report rather than crashing here."""
    for volume in volumes or []:
        if not isinstance(volume, dict):
            continue
        if not any(key in volume for key in VOLUME_SOURCE_KEYS):
            volume["emptyDir"] = {}

        def source(key: str, volume: dict[str, Any] = volume) -> dict[str, Any] | None:
            value = volume.get(key)
            return value if isinstance(value, dict) else None

        if (host_path := source("hostPath")) is not None:
            host_path.setdefault("type", "")
        for key in ("secret", "configMap", "downwardAPI", "projected"):
            if (src := source(key)) is not None:
                src.setdefault("defaultMode", DEFAULT_MODE)
        for item in (source("downwardAPI") or {}).get("items") or []:
            _field_ref(item.get("fieldRef"))
        for proj in (source("projected") or {}).get("sources") or []:
            for item in section(proj, "downwardAPI").get("items") or []:
                _field_ref(item.get("fieldRef"))
            token = proj.get("serviceAccountToken")
            if token is not None:
                token.setdefault("expirationSeconds", 3600)
        if (iscsi := source("iscsi")) is not None:
            iscsi.setdefault("iscsiInterface", "default")
        if (rbd := source("rbd")) is not None:
            rbd.setdefault("pool", "rbd")
            rbd.setdefault("user", "admin")
            rbd.setdefault("keyring", "/etc/ceph/keyring")


def default_pod_spec(spec: dict[str, Any], host_network_host_ports: bool = False) -> None:
    """SetDefaultPodSpec as kruise applies it: pod-level fields, volumes, then every container.

    ``host_network_host_ports``: gate DefaultHostNetworkHostPortsInPodTemplates (off by default, as
    in Kubernetes 1.28+). On, a hostNetwork template's container ports without a hostPort get their
    containerPort as hostPort (the pre-1.28 behaviour); off, templates keep hostPort unset."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    spec.setdefault("terminationGracePeriodSeconds", 30)
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    if host_network_host_ports and spec.get("hostNetwork"):
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            for port in container.get("ports") or []:
                if not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")
    default_volumes(spec.get("volumes"))
    for container in spec.get("initContainers") or []:
        default_container(container, app_container=False)
    for container in spec.get("containers") or []:
        default_container(container, app_container=True)
    for container in spec.get("ephemeralContainers") or []:
        for port in container.get("ports") or []:
            port.setdefault("protocol", "TCP")
        for env in container.get("env") or []:
            _field_ref(section(env, "valueFrom").get("fieldRef"))


def default_pod_template(template: dict[str, Any], host_network_host_ports: bool = False) -> None:
    default_pod_spec(template.setdefault("spec", {}), host_network_host_ports)


def default_pvc(pvc: dict[str, Any]) -> None:
    """SetDefaults_PersistentVolumeClaim: filesystem volume mode."""
    spec = pvc.setdefault("spec", {})
    spec.setdefault("volumeMode", "Filesystem")
