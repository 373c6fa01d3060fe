"""Deletion protection: the `policy.kruise.io/delete-protection` label (Always | Cascading).

Messages are upstream's word for word because users grep for them. Objects already terminating are
never blocked (their deletion is under way; blocking would only wedge finalizers). With the
ResourcesDeletionProtection gate off (upstream's default since 1.8) the label means nothing and
every deletion is allowed; the handlers take the gate's value as ``enabled``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kruise.api import features, shapes
from kruise.api.keys import (
    DELETION_PROTECTION_ALWAYS,
    DELETION_PROTECTION_CASCADING,
    LABEL_DELETION_PROTECTION,
)
from kruise.api.objects import meta_of, section, spec_of
from kruise.kube.errors import ApiError
from kruise.kube.resources import ResourceRef
from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny
from kruise.webhook.context import WebhookContext
from kruise.webhook.registry import Registration, WebhookSpec
from kruise.webhook.shapecheck import shape_checked

CRD_CASCADING_GATE = "DeletionProtectionForCRDCascadingGate"

ListInstances = Callable[[ResourceRef], Awaitable[list[dict[str, Any]]]]
"""Every object of a custom resource, in all namespaces (a live list: a CRD deletion is rare and
the webhook caches no arbitrary kinds)."""


class NamespaceContents(Protocol):
    """Read-only cache answers the namespace check needs (never a live list on the hot path)."""

    def active_pods(self, namespace: str) -> int: ...

    def bound_pvcs(self, namespace: str) -> int: ...


def _label(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return None
    return section(meta, "labels").get(LABEL_DELETION_PROTECTION)


def _forbidden(value: str, extra: str = "") -> str:
    return f"forbidden by ResourcesProtectionDeletion for {LABEL_DELETION_PROTECTION}={value}{extra}"


def validate_workload_deletion(obj: dict[str, Any], replicas: int | None) -> str | None:
    value = _label(obj)
    if value == DELETION_PROTECTION_ALWAYS:
        return _forbidden(value)
    if value == DELETION_PROTECTION_CASCADING and replicas is not None and replicas > 0:
        return _forbidden(value, f" and replicas {replicas}>0")
    return None


def validate_always_only(obj: dict[str, Any]) -> str | None:
    """Service and Ingress: only `Always` means anything."""
    value = _label(obj)
    return _forbidden(value) if value == DELETION_PROTECTION_ALWAYS else None


def validate_namespace_deletion(namespace: dict[str, Any], contents: NamespaceContents) -> str | None:
    value = _label(namespace)
    if value == DELETION_PROTECTION_ALWAYS:
        return _forbidden(value)
    if value == DELETION_PROTECTION_CASCADING:
        name = meta_of(namespace).get("name", "")
        pods = contents.active_pods(name)
        if pods > 0:
            return _forbidden(value, f" and active pods {pods}>0")
        pvcs = contents.bound_pvcs(name)
        if pvcs > 0:
            return _forbidden(value, f' and "Bound" status pvc {pvcs}>0')
    return None


def crd_storage_resource(crd: dict[str, Any]) -> ResourceRef | None:
    """The CRD's resource at its storage version, the one upstream lists instances at."""
    spec = crd.get("spec") or {}
    storage = next((v.get("name") for v in spec.get("versions") or [] if v.get("storage")), None)
    plural = section(spec, "names").get("plural")
    if not storage or not plural:
        return None
    return ResourceRef(spec.get("group") or "", storage, plural, spec.get("scope") != "Cluster")


async def validate_crd_deletion(
    crd: dict[str, Any], cascading_gate: bool = False, list_instances: ListInstances | None = None
) -> str | None:
    """`Cascading` needs upstream's alpha gate DeletionProtectionForCRDCascadingGate; with it, a CRD
    is kept while any of its objects is not terminating (counted across all namespaces)."""
    value = _label(crd)
    if value == DELETION_PROTECTION_ALWAYS:
        return _forbidden(value)
    if value != DELETION_PROTECTION_CASCADING:
        return None
    if not cascading_gate:
        return f"feature-gate {CRD_CASCADING_GATE} is not enabled"
    ref = crd_storage_resource(crd)
    if ref is None or list_instances is None:
        return None
    try:
        instances = await list_instances(ref)
    except ApiError as exc:
        return f"failed to list CRs of {ref}: {exc}"
    active = sum(1 for item in instances if not meta_of(item).get("deletionTimestamp"))
    if active > 0:
        return _forbidden(value, f" and active CRs {active}>0")
    return None


def _on_delete(
    check: Callable[[dict[str, Any]], str | None], enabled: bool
) -> Callable[[AdmissionRequest], Any]:
    async def handle(req: AdmissionRequest) -> Decision:
        if not enabled or req.operation != "DELETE" or not req.old_object:
            return allow()
        message = check(req.old_object)
        return deny(403, message) if message else allow()

    return handle


def _replicas(obj: dict[str, Any]) -> int | None:
    value = spec_of(obj).get("replicas")
    return value if isinstance(value, int) else None


def builtin_workload_handler(enabled: bool) -> Callable[[AdmissionRequest], Any]:
    """apps/v1 Deployment, ReplicaSet and StatefulSet."""
    return _on_delete(lambda obj: validate_workload_deletion(obj, _replicas(obj)), enabled)


def always_only_handler(enabled: bool) -> Callable[[AdmissionRequest], Any]:
    return _on_delete(validate_always_only, enabled)


def namespace_handler(contents: NamespaceContents, enabled: bool) -> Callable[[AdmissionRequest], Any]:
    return _on_delete(lambda ns: validate_namespace_deletion(ns, contents), enabled)


def crd_handler(
    enabled: bool, cascading_gate: bool = False, list_instances: ListInstances | None = None
) -> Callable[[AdmissionRequest], Any]:
    async def handle(req: AdmissionRequest) -> Decision:
        if not enabled or req.operation != "DELETE" or not req.old_object:
            return allow()
        message = await validate_crd_deletion(req.old_object, cascading_gate, list_instances)
        return deny(403, message) if message else allow()

    return handle


def _protection(ctx: WebhookContext) -> bool:
    return ctx.enabled(features.RESOURCES_DELETION_PROTECTION)


def _workloads(ctx: WebhookContext) -> Handler:
    return shape_checked(builtin_workload_handler(_protection(ctx)), old=shapes.WORKLOAD)


def _always_only(ctx: WebhookContext) -> Handler:
    return shape_checked(always_only_handler(_protection(ctx)), old=shapes.METADATA_ONLY)


def _crds(ctx: WebhookContext) -> Handler:
    cascading = ctx.enabled(features.DELETION_PROTECTION_FOR_CRD_CASCADING_GATE)
    return shape_checked(crd_handler(_protection(ctx), cascading, ctx.list_custom_resources), old=shapes.CRD)


def _namespaces(ctx: WebhookContext) -> Handler:
    handler = namespace_handler(ctx.namespace_contents, _protection(ctx))  # type: ignore[arg-type]
    return shape_checked(handler, old=shapes.METADATA_ONLY)


_NOT_KUBE_SYSTEM = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
    ]
}
_V1 = ("v1",)
_PROTECTED_ONLY = {"matchExpressions": [{"key": LABEL_DELETION_PROTECTION, "operator": "Exists"}]}


def _protection_webhook(
    name: str, path: str, group: str, versions: tuple[str, ...], resource: str
) -> WebhookSpec:
    """Only labelled objects are sent, and a webhook that cannot be reached lets the deletion through."""
    return WebhookSpec(
        name, path, (resource,), ("DELETE",), group, versions, failure_policy="Ignore",
        namespace_selector=_NOT_KUBE_SYSTEM, object_selector=_PROTECTED_ONLY,
    )  # fmt: skip


REGISTRATIONS = (
    Registration(
        "deletion apps/v1 workloads", (paths.DEPLOYMENT, paths.REPLICASET, paths.STATEFULSET), _workloads,
        webhooks=(
            _protection_webhook("vbuiltindeployment.kb.io", paths.DEPLOYMENT, "apps", _V1, "deployments"),
            _protection_webhook("vbuiltinreplicaset.kb.io", paths.REPLICASET, "apps", _V1, "replicasets"),
            _protection_webhook("vbuiltinstatefulset.kb.io", paths.STATEFULSET, "apps", _V1, "statefulsets"),
        ),
    ),
    Registration(
        "deletion services and ingresses", (paths.SERVICE, paths.INGRESS), _always_only,
        webhooks=(
            _protection_webhook("vingress.kb.io", paths.INGRESS, "networking.k8s.io", ("v1", "v1beta1"),
                                "ingresses"),
            _protection_webhook("vservice.kb.io", paths.SERVICE, "", ("v1",), "services"),
        ),
    ),
    Registration(
        "deletion customresourcedefinitions", (paths.CRD,), _crds,
        webhooks=(
            _protection_webhook("vcustomresourcedefinition.kb.io", paths.CRD, "apiextensions.k8s.io",
                                ("v1", "v1beta1"), "customresourcedefinitions"),
        ),
    ),
    Registration(
        "deletion namespaces", (paths.NAMESPACE,), _namespaces,
        webhooks=(_protection_webhook("vnamespace.kb.io", paths.NAMESPACE, "", ("v1",), "namespaces"),),
    ),
)  # fmt: skip
