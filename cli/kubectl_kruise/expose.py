"""`expose TYPE/NAME [--port] [--target-port] [--name] [--type] ...`: a Service for a workload.

kubectl's `expose` cannot read a CloneSet's selector or ports; kruise-tools teaches it CloneSet,
and this module builds the Service the way kubectl's generator does: selector from
`spec.selector.matchLabels` (match expressions cannot be written as a Service selector), ports
from `--port` or else from every container port of the template, protocols from those container
ports, labels from the workload, ports named `port-N` when there are several.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer, api_error_text
from kruise.kube.client import Client
from kruise.kube.errors import ApiError
from kruise.kube.resources import SERVICES

EXPOSABLE: tuple[kinds.Workload, ...] = (kinds.DEPLOYMENT, kinds.CLONESET)
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


class ExposeError(PluginError):
    """The workload cannot be exposed as asked; kubectl's wording."""


@dataclass(frozen=True)
class ExposeOptions:
    port: str = ""
    target_port: str = ""
    protocol: str = ""
    name: str = ""
    service_type: str = ""
    labels: str = ""
    cluster_ip: str = ""
    external_ip: str = ""
    session_affinity: str = ""
    dry_run: str = "none"

    def validate(self) -> None:
        if self.service_type and self.service_type not in SERVICE_TYPES:
            raise ExposeError(f"invalid service type: {self.service_type}")
        if self.session_affinity and self.session_affinity not in ("None", "ClientIP"):
            raise ExposeError(f"session affinity {self.session_affinity} is invalid")


def map_selector(obj: Mapping[str, Any]) -> dict[str, str]:
    selector = (obj.get("spec") or {}).get("selector") or {}
    if selector.get("matchExpressions"):
        raise ExposeError(
            f'couldn\'t convert expressions - "{selector["matchExpressions"]}" to map-based selector format'
        )
    return dict(selector.get("matchLabels") or {})


def container_ports(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(port, protocol) of every container port in the template, in order, first wins."""
    seen: dict[str, str] = {}
    for container in (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []:
        for port in container.get("ports") or []:
            seen.setdefault(str(port.get("containerPort")), port.get("protocol") or "TCP")
    return list(seen.items())


def parse_labels(text: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ExposeError(f"invalid label spec: {part}")
        labels[key] = value
    return labels


def _int_or_name(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def build_service(
    target: kinds.Target, obj: Mapping[str, Any], namespace: str, options: ExposeOptions
) -> dict:
    if target.workload not in EXPOSABLE:
        raise ExposeError(f"cannot expose a {target.workload.kind}.{target.workload.group}")
    selector = map_selector(obj)
    if not selector:
        raise ExposeError("couldn't retrieve selectors via --selector flag or introspection")
    introspected = dict(container_ports(obj))
    if options.port:
        port_list = [p for p in options.port.split(",") if p]
    else:
        port_list = list(introspected)
    if not port_list and options.cluster_ip != "None":
        raise ExposeError("couldn't find port via --port flag or introspection")
    ports = []
    for i, text in enumerate(port_list):
        if not text.isdigit():
            raise ExposeError(f'invalid port "{text}": must be a number')
        port: dict[str, Any] = {
            "protocol": options.protocol or introspected.get(text, "TCP"),
            "port": int(text),
            "targetPort": _int_or_name(options.target_port) if options.target_port else int(text),
        }
        if len(port_list) > 1:
            port = {"name": f"port-{i + 1}", **port}
        ports.append(port)
    labels = (
        parse_labels(options.labels)
        if options.labels
        else dict((obj.get("metadata") or {}).get("labels") or {})
    )
    metadata: dict[str, Any] = {"name": options.name or target.name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    spec: dict[str, Any] = {"selector": selector, "ports": ports}
    if options.service_type:
        spec["type"] = options.service_type
    if options.cluster_ip:
        spec["clusterIP"] = options.cluster_ip
    if options.external_ip:
        spec["externalIPs"] = [options.external_ip]
    if options.session_affinity:
        spec["sessionAffinity"] = options.session_affinity
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec}


async def expose(
    client: Client, namespace: str, targets: list[kinds.Target], options: ExposeOptions, printer: Printer
) -> list[str]:
    errors: list[str] = []
    for target in targets:
        try:
            obj = await client.get(target.workload.ref, target.name, namespace)
            service = build_service(target, obj, namespace, options)
            if options.dry_run != "client":
                service = await client.create(
                    SERVICES, service, namespace, dry_run=options.dry_run == "server"
                )
        except ExposeError as err:
            errors.append(str(err))
            continue
        except ApiError as err:
            errors.append(api_error_text(err))
            continue
        printer.object(f"service/{service['metadata']['name']}", "exposed", service)
    return errors
