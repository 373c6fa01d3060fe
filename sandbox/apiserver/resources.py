"""What the emulator serves: one `ResourceType` per group/version/plural, built-ins plus CRDs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    subresources: tuple[str, ...] = ()  # "status", "scale", "eviction", "binding"
    verbs: list[str] = field(default_factory=lambda: list(ALL_VERBS))
    # CRD-only
    schema: dict[str, Any] | None = None
    printer_columns: list[dict[str, Any]] | None = None
    scale_paths: dict[str, str] | None = None  # specReplicasPath, statusReplicasPath, labelSelectorPath
    storage_version: str = ""
    crd_name: str = ""
    conversion: dict[str, Any] | None = None  # the CRD's spec.conversion (strategy None or Webhook)

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Storage identity: a group/plural is stored once, whatever version it is read at."""
        return self.group, self.plural

    @property
    def is_custom(self) -> bool:
        return bool(self.crd_name)


def _r(group: str, version: str, plural: str, kind: str, namespaced: bool = True, **kw: Any) -> ResourceType:
    return ResourceType(group, version, plural, kind, namespaced, **kw)


def builtin_resources() -> list[ResourceType]:
    all_cat = ["all"]
    return [
        _r(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            short_names=["ns"],
            subresources=("status", "finalize"),
        ),
        _r("", "v1", "nodes", "Node", False, short_names=["no"], subresources=("status",)),
        _r(
            "",
            "v1",
            "pods",
            "Pod",
            short_names=["po"],
            categories=all_cat,
            subresources=(
                *("status", "eviction", "binding", "ephemeralcontainers", "resize", "log", "exec", "attach"),
            ),
        ),
        _r("", "v1", "configmaps", "ConfigMap", short_names=["cm"]),
        _r("", "v1", "secrets", "Secret"),
        _r(
            "", "v1", "services", "Service", short_names=["svc"], categories=all_cat, subresources=("status",)
        ),
        _r("", "v1", "endpoints", "Endpoints", short_names=["ep"]),
        _r("", "v1", "serviceaccounts", "ServiceAccount", short_names=["sa"], subresources=("token",)),
        _r("", "v1", "events", "Event", short_names=["ev"]),
        _r(
            "",
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            short_names=["pvc"],
            subresources=("status",),
        ),
        _r(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            short_names=["deploy"],
            categories=all_cat,
            subresources=("status", "scale"),
        ),
        _r(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            short_names=["rs"],
            categories=all_cat,
            subresources=("status", "scale"),
        ),
        _r(
            "apps",
            "v1",
            "statefulsets",
            "StatefulSet",
            short_names=["sts"],
            categories=all_cat,
            subresources=("status", "scale"),
        ),
        _r(
            "apps",
            "v1",
            "daemonsets",
            "DaemonSet",
            short_names=["ds"],
            categories=all_cat,
            subresources=("status",),
        ),
        _r("apps", "v1", "controllerrevisions", "ControllerRevision"),
        _r("batch", "v1", "jobs", "Job", categories=all_cat, subresources=("status",)),
        _r(
            "batch",
            "v1",
            "cronjobs",
            "CronJob",
            short_names=["cj"],
            categories=all_cat,
            subresources=("status",),
        ),
        _r("coordination.k8s.io", "v1", "leases", "Lease"),
        _r("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
        _r("events.k8s.io", "v1", "events", "Event", short_names=["ev"]),
        _r(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            short_names=["pdb"],
            subresources=("status",),
        ),
        _r("rbac.authorization.k8s.io", "v1", "roles", "Role"),
        _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
        _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
        _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
        _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, short_names=["pc"]),
        _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, short_names=["sc"]),
        _r(
            "networking.k8s.io",
            "v1",
            "ingresses",
            "Ingress",
            short_names=["ing"],
            subresources=("status",),
        ),
        _r("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
        _r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short_names=["netpol"]),
        _r(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
            categories=["api-extensions"],
        ),
        _r(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
            categories=["api-extensions"],
        ),
        _r(
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            False,
            verbs=["create"],
        ),
        _r(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            short_names=["crd", "crds"],
            categories=["api-extensions"],
            subresources=("status",),
        ),
    ]


def crd_resources(crd: dict[str, Any]) -> list[ResourceType]:
    """The served versions of a CRD as resource types."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    storage = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), "")
    out = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        sub = version.get("subresources") or {}
        subs = tuple(s for s in ("status", "scale") if s in sub)
        out.append(
            ResourceType(
                group=group,
                version=version["name"],
                plural=names.get("plural", ""),
                kind=names.get("kind", ""),
                namespaced=spec.get("scope") == "Namespaced",
                singular=names.get("singular") or names.get("kind", "").lower(),
                short_names=list(names.get("shortNames") or []),
                categories=list(names.get("categories") or []),
                subresources=subs,
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                printer_columns=version.get("additionalPrinterColumns"),
                scale_paths=sub.get("scale"),
                storage_version=storage,
                crd_name=crd["metadata"]["name"],
                conversion=spec.get("conversion"),
            )
        )
    return out
