"""`create ContainerRecreateRequest NAME --pod=POD [--containers=a,b]`: restart containers in place.

kruise-daemon recreates the named containers of one pod without recreating the pod. The request
is built as kruise-tools builds it: every container of the pod when none is named, each carrying
the pod container's ports and preStop hook, with kruise-tools' default strategy (failurePolicy
Fail, unordered, 3 s unready grace, 3 s minimum started) and deadlines (300 s active, kept 1800 s
after it finishes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.resources import PODS, ResourceRef

CRRS = ResourceRef(
    "apps.kruise.io", "v1alpha1", "containerrecreaterequests", True, "ContainerRecreateRequest"
)
ACTIVE_DEADLINE_SECONDS = 300
TTL_SECONDS_AFTER_FINISHED = 1800


class CreateCRRError(PluginError):
    """Bad flags, a missing pod or container, or a refused create."""


@dataclass(frozen=True)
class CreateCRROptions:
    name: str
    pod: str
    containers: tuple[str, ...] = ()
    unready_grace_period_seconds: int = 3
    min_started_seconds: int = 3

    def validate(self) -> None:
        if not self.pod:
            raise CreateCRRError("--pod is required: the name of the pod whose containers to recreate")
        if self.unready_grace_period_seconds < 0 or self.min_started_seconds < 0:
            raise CreateCRRError("unreadyGracePeriodSeconds and minStartedSeconds must be >= 0")


def parse_containers(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def recreate_containers(
    pod: Mapping[str, Any], wanted: tuple[str, ...], namespace: str
) -> list[dict[str, Any]]:
    """The request's containers: the pod's (all, or those named), with their ports and preStop."""
    containers = ((pod.get("spec") or {}).get("containers")) or []
    names = [c.get("name", "") for c in containers]
    missing = [name for name in wanted if name not in names]
    if missing:
        pod_name = (pod.get("metadata") or {}).get("name", "")
        raise CreateCRRError(
            f"has container not exist: {', '.join(missing)} in pod {pod_name} in namespace {namespace}"
        )
    out = []
    for container in containers:
        if wanted and container.get("name") not in wanted:
            continue
        entry: dict[str, Any] = {"name": container.get("name", "")}
        pre_stop = ((container.get("lifecycle") or {}).get("preStop")) or None
        if pre_stop:
            entry["preStop"] = {k: v for k, v in pre_stop.items() if k in ("exec", "httpGet", "tcpSocket")}
        if container.get("ports"):
            entry["ports"] = list(container["ports"])
        out.append(entry)
    return out


def build_crr(options: CreateCRROptions, namespace: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": options.name, "namespace": namespace},
        "spec": {
            "podName": options.pod,
            "containers": containers,
            "strategy": {
                "failurePolicy": "Fail",
                "orderedRecreate": False,
                "unreadyGracePeriodSeconds": options.unready_grace_period_seconds,
                "minStartedSeconds": options.min_started_seconds,
            },
            "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
        },
    }


async def create_crr(
    client: Client, namespace: str, options: CreateCRROptions, printer: Printer
) -> list[str]:
    options.validate()
    try:
        pod = await client.get(PODS, options.pod, namespace)
    except NotFound:
        raise CreateCRRError(f"pod {options.pod} in namespace {namespace} not exist") from None
    crr = build_crr(options, namespace, recreate_containers(pod, options.containers, namespace))
    if printer.dry_run != "client":
        try:
            crr = await client.create(CRRS, crr, namespace, dry_run=printer.dry_run == "server")
        except ApiError as err:
            raise CreateCRRError(f"failed to create crr: {err.message}") from None
    printer.object(f"containerrecreaterequest.apps.kruise.io/{crr['metadata']['name']}", "created", crr)
    return []
