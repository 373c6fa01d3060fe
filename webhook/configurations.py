"""The Mutating/ValidatingWebhookConfiguration objects — the one place they are defined.

Helm renders them, `kruise sandbox up` applies them, and the cert controller rebuilds them with the
caBundle. Entries whose path this process does not serve are dropped when rebuilding, as upstream's
webhook controller does, so a configuration never points the apiserver at a 404.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import LABEL_DELETION_PROTECTION
from kruise.api.registry import KINDS
from kruise.webhook import paths

MUTATING_NAME = "kruise-mutating-webhook-configuration"
VALIDATING_NAME = "kruise-validating-webhook-configuration"
SERVICE_NAME = "kruise-webhook-service"
DEFAULT_TIMEOUT_SECONDS = 30

# Pods in kruise's own namespace (label control-plane=openkruise) and kube-system are never intercepted:
# a webhook that must admit its own pods could never start.
_POD_NAMESPACE_SELECTOR = {
    "matchExpressions": [
        {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]},
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
    ]
}
_NOT_KUBE_SYSTEM = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
    ]
}
_PROTECTED_ONLY = {"matchExpressions": [{"key": LABEL_DELETION_PROTECTION, "operator": "Exists"}]}


@dataclass(frozen=True)
class Entry:
    name: str
    path: str
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...]
    failure_policy: str = "Fail"
    namespace_selector: dict[str, Any] | None = None
    object_selector: dict[str, Any] | None = None
    scope: str | None = None


def _kind_entries(prefix: str, verb: str) -> list[Entry]:
    out = []
    for info in KINDS:
        versions = tuple(v.name for v in info.versions if v.served)
        ops = ("CREATE", "UPDATE")
        if verb == "validate" and info.kind in ("CloneSet", "StatefulSet", "UnitedDeployment"):
            ops = ("CREATE", "UPDATE", "DELETE")
        path = paths.kind_paths(verb, info.group, info.kind, versions)[0]
        out.append(
            Entry(f"{prefix}{info.kind.lower()}.kb.io", path, (info.group,), versions, (info.plural,), ops)
        )
    return out


def mutating_entries() -> list[Entry]:
    pod = Entry(
        "mpod.kb.io", paths.POD_MUTATE, ("",), ("v1",), ("pods",), ("CREATE",),
        namespace_selector=_POD_NAMESPACE_SELECTOR,
    )  # fmt: skip
    return [pod, *_kind_entries("m", "mutate")]


def _protection(name: str, path: str, group: str, versions: tuple[str, ...], resource: str) -> Entry:
    return Entry(
        name, path, (group,), versions, (resource,), ("DELETE",), failure_policy="Ignore",
        namespace_selector=_NOT_KUBE_SYSTEM, object_selector=_PROTECTED_ONLY,
    )  # fmt: skip


def validating_entries() -> list[Entry]:
    return [
        Entry("vpod.kb.io", paths.POD_VALIDATE, ("",), ("v1",), ("pods",), ("UPDATE", "DELETE"),
              namespace_selector=_POD_NAMESPACE_SELECTOR),
        Entry("vpodeviction.kb.io", paths.POD_VALIDATE, ("",), ("v1",), ("pods/eviction",), ("CREATE",),
              namespace_selector=_POD_NAMESPACE_SELECTOR),
        *_kind_entries("v", "validate"),
        _protection("vbuiltindeployment.kb.io", paths.DEPLOYMENT, "apps", ("v1",), "deployments"),
        _protection("vbuiltinreplicaset.kb.io", paths.REPLICASET, "apps", ("v1",), "replicasets"),
        _protection("vbuiltinstatefulset.kb.io", paths.STATEFULSET, "apps", ("v1",), "statefulsets"),
        _protection("vcustomresourcedefinition.kb.io", paths.CRD, "apiextensions.k8s.io", ("v1", "v1beta1"),
                    "customresourcedefinitions"),
        _protection("vnamespace.kb.io", paths.NAMESPACE, "", ("v1",), "namespaces"),
        _protection("vingress.kb.io", paths.INGRESS, "networking.k8s.io", ("v1", "v1beta1"), "ingresses"),
        _protection("vservice.kb.io", paths.SERVICE, "", ("v1",), "services"),
    ]  # fmt: skip


@dataclass(frozen=True)
class ClientTarget:
    """Where the apiserver sends reviews: the Service (normal) or a URL (`--webhook-url` mode)."""

    namespace: str = "kruise-system"
    service: str = SERVICE_NAME
    port: int = 443
    url: str | None = None  # base, e.g. https://127.0.0.1:9876

    def client_config(self, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
        if self.url:
            config: dict[str, Any] = {"url": self.url.rstrip("/") + path}
        else:
            config = {
                "service": {
                    "namespace": self.namespace,
                    "name": self.service,
                    "port": self.port,
                    "path": path,
                }
            }
        if ca_bundle:
            config["caBundle"] = base64.b64encode(ca_bundle).decode()
        return config


def _webhook(entry: Entry, target: ClientTarget, ca_bundle: bytes | None, timeout: int) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "apiGroups": list(entry.groups),
        "apiVersions": list(entry.versions),
        "resources": list(entry.resources),
        "operations": list(entry.operations),
    }
    if entry.scope:
        rule["scope"] = entry.scope
    hook: dict[str, Any] = {
        "name": entry.name,
        "clientConfig": target.client_config(entry.path, ca_bundle),
        "rules": [rule],
        "failurePolicy": entry.failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1", "v1beta1"],
        "timeoutSeconds": timeout,
    }
    if entry.namespace_selector is not None:
        hook["namespaceSelector"] = entry.namespace_selector
    if entry.object_selector is not None:
        hook["objectSelector"] = entry.object_selector
    return hook


def _configuration(
    kind: str, name: str, entries: list[Entry], target: ClientTarget, ca_bundle: bytes | None,
    served: set[str] | None, timeout: int,
) -> dict[str, Any]:  # fmt: skip
    hooks = [_webhook(e, target, ca_bundle, timeout) for e in entries if served is None or e.path in served]
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": hooks,
    }


def mutating_configuration(
    target: ClientTarget | None = None, ca_bundle: bytes | None = None, *,
    served: set[str] | None = None, timeout: int = DEFAULT_TIMEOUT_SECONDS,
) -> dict[str, Any]:  # fmt: skip
    """`served` (paths this process answers) drops unserved entries; None keeps all (for Helm)."""
    return _configuration(
        "MutatingWebhookConfiguration", MUTATING_NAME, mutating_entries(), target or ClientTarget(),
        ca_bundle, served, timeout,
    )  # fmt: skip


def validating_configuration(
    target: ClientTarget | None = None, ca_bundle: bytes | None = None, *,
    served: set[str] | None = None, timeout: int = DEFAULT_TIMEOUT_SECONDS,
) -> dict[str, Any]:  # fmt: skip
    return _configuration(
        "ValidatingWebhookConfiguration", VALIDATING_NAME, validating_entries(), target or ClientTarget(),
        ca_bundle, served, timeout,
    )  # fmt: skip
