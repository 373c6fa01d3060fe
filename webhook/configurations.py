"""The Mutating/ValidatingWebhookConfiguration objects — the one place they are defined.

Helm renders them, `kruise sandbox up` applies them, and the cert controller rebuilds them with the
caBundle. Entries whose path this process does not serve are dropped when rebuilding, as upstream's
webhook controller does, so a configuration never points the apiserver at a 404.

The entries are upstream 1.9's, one for one: its chart's webhookconfiguration template (same order,
selectors, failurePolicy, timeout from the values) with each name, path and verb list taken from the
`+kubebuilder:webhook` marker and handler path of the matching upstream handler. A Kruise kind's rule
lists the versions the API set in force serves (`kruise.api.apisets`): 1.9's are upstream 1.9's markers,
2.0's list v1beta1 for every kind served at v1beta1, as upstream master's markers do. Like
upstream, no entry sets matchPolicy or reinvocationPolicy (the apiserver defaults them to Equivalent
and Never). Every path here is one a handler module registers (`kruise.webhook.registry`; both
path spellings are served).
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
from typing import Any

from kruise.api.apisets import DEFAULT_API_SET, served_versions
from kruise.api.keys import LABEL_DELETION_PROTECTION
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


_KRUISE = "apps.kruise.io"
_POLICY = "policy.kruise.io"
_CU = ("CREATE", "UPDATE")
_CUD = ("CREATE", "UPDATE", "DELETE")
_M = "/mutate-apps-kruise-io-"  # + the handler's path tail
_V = "/validate-apps-kruise-io-"


def _kruise(
    api_set: str, name: str, path: str, plural: str, ops: tuple[str, ...] = _CU, group: str = _KRUISE
) -> Entry:
    versions = served_versions(api_set, group, plural)
    if not versions:
        raise ValueError(f"API set {api_set} has no {plural}.{group} for webhook {name}")
    return Entry(name, path, (group,), versions, (plural,), ops)


def mutating_entries(api_set: str = DEFAULT_API_SET) -> list[Entry]:
    """Upstream's mutating webhooks in its 1.9 chart's order, each Kruise rule listing every version
    the set serves (the emulator's matchPolicy is Exact, where a real apiserver would convert to a
    listed version for the call). Names and paths are those
    its handlers register (some with the version in the path, the imagepulljob pair with a `-v1beta1` name).
    Kinds upstream does not default at admission (PodUnavailableBudget, ResourceDistribution,
    PersistentPodState, PodProbeMarker, NodePodProbe, EphemeralJob, WorkloadSpread) get no entry."""
    pod = Entry(
        "mpod.kb.io", paths.POD_MUTATE, ("",), ("v1",), ("pods",), ("CREATE",),
        namespace_selector=_POD_NAMESPACE_SELECTOR,
    )  # fmt: skip
    return [
        pod,
        _kruise(api_set, "madvancedcronjob.kb.io", _M + "advancedcronjob", "advancedcronjobs"),
        _kruise(api_set, "mbroadcastjob.kb.io", _M + "broadcastjob", "broadcastjobs"),
        _kruise(api_set, "mcloneset.kb.io", _M + "v1alpha1-cloneset", "clonesets"),
        _kruise(api_set, "mcontainerrecreaterequest.kb.io", _M + "v1alpha1-containerrecreaterequest",
                "containerrecreaterequests"),
        _kruise(api_set, "mdaemonset.kb.io", _M + "daemonset", "daemonsets"),
        _kruise(api_set, "mimagelistpulljob-v1beta1.kb.io", _M + "imagelistpulljob", "imagelistpulljobs"),
        _kruise(api_set, "mimagepulljob-v1beta1.kb.io", _M + "imagepulljob", "imagepulljobs"),
        _kruise(api_set, "mnodeimage.kb.io", _M + "nodeimage", "nodeimages"),
        _kruise(api_set, "msidecarset.kb.io", _M + "sidecarset", "sidecarsets"),
        _kruise(api_set, "mstatefulset.kb.io", _M + "statefulset", "statefulsets"),
        _kruise(api_set, "muniteddeployment.kb.io", _M + "v1alpha1-uniteddeployment", "uniteddeployments"),
    ]  # fmt: skip


def _protection(name: str, path: str, group: str, versions: tuple[str, ...], resource: str) -> Entry:
    return Entry(
        name, path, (group,), versions, (resource,), ("DELETE",), failure_policy="Ignore",
        namespace_selector=_NOT_KUBE_SYSTEM, object_selector=_PROTECTED_ONLY,
    )  # fmt: skip


def validating_entries(api_set: str = DEFAULT_API_SET) -> list[Entry]:
    """Upstream 1.9's validating webhooks in its chart's order. ContainerRecreateRequest and
    NodePodProbe have no validating webhook upstream, so none here either."""
    return [
        _protection("vbuiltindeployment.kb.io", paths.DEPLOYMENT, "apps", ("v1",), "deployments"),
        _protection("vbuiltinreplicaset.kb.io", paths.REPLICASET, "apps", ("v1",), "replicasets"),
        _protection("vbuiltinstatefulset.kb.io", paths.STATEFULSET, "apps", ("v1",), "statefulsets"),
        _protection("vcustomresourcedefinition.kb.io", paths.CRD, "apiextensions.k8s.io", ("v1", "v1beta1"),
                    "customresourcedefinitions"),
        _protection("vnamespace.kb.io", paths.NAMESPACE, "", ("v1",), "namespaces"),
        _protection("vingress.kb.io", paths.INGRESS, "networking.k8s.io", ("v1", "v1beta1"), "ingresses"),
        _protection("vservice.kb.io", paths.SERVICE, "", ("v1",), "services"),
        Entry("vpod.kb.io", paths.POD_VALIDATE, ("",), ("v1",), ("pods",), ("UPDATE", "DELETE"),
              namespace_selector=_POD_NAMESPACE_SELECTOR),
        Entry("vpodeviction.kb.io", paths.POD_VALIDATE, ("",), ("v1",), ("pods/eviction",), ("CREATE",),
              namespace_selector=_POD_NAMESPACE_SELECTOR),
        _kruise(api_set, "vresourcedistribution.kb.io", _V + "v1alpha1-resourcedistribution",
                "resourcedistributions"),
        _kruise(api_set, "vworkloadspread.kb.io", _V + "v1alpha1-workloadspread", "workloadspreads"),
        _kruise(api_set, "vadvancedcronjob.kb.io", _V + "advancedcronjob", "advancedcronjobs"),
        _kruise(api_set, "vbroadcastjob.kb.io", _V + "broadcastjob", "broadcastjobs"),
        _kruise(api_set, "vcloneset.kb.io", _V + "v1alpha1-cloneset", "clonesets", _CUD),
        _kruise(api_set, "vdaemonset.kb.io", _V + "daemonset", "daemonsets"),
        _kruise(api_set, "vimagelistpulljob-v1beta1.kb.io", _V + "imagelistpulljob", "imagelistpulljobs"),
        _kruise(api_set, "vimagepulljob-v1beta1.kb.io", _V + "imagepulljob", "imagepulljobs"),
        _kruise(api_set, "vnodeimage.kb.io", _V + "nodeimage", "nodeimages"),
        _kruise(api_set, "vpersistentpodstate.kb.io", _V + "persistentpodstate", "persistentpodstates"),
        _kruise(api_set, "vpodprobemarker.kb.io", _V + "podprobemarker", "podprobemarkers"),
        _kruise(api_set, "vpodunavailablebudget.kb.io", "/validate-policy-kruise-io-podunavailablebudget",
                "podunavailablebudgets", group=_POLICY),
        _kruise(api_set, "vsidecarset.kb.io", _V + "sidecarset", "sidecarsets"),
        _kruise(api_set, "vstatefulset.kb.io", _V + "statefulset", "statefulsets", _CUD),
        _kruise(api_set, "vephemeraljobs.kb.io", _V + "v1alpha1-ephemeraljob", "ephemeraljobs"),
        _kruise(api_set, "vuniteddeployment.kb.io", _V + "v1alpha1-uniteddeployment", "uniteddeployments",
                _CUD),
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
        hook["namespaceSelector"] = copy.deepcopy(entry.namespace_selector)
    if entry.object_selector is not None:
        hook["objectSelector"] = copy.deepcopy(entry.object_selector)
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
    served: set[str] | None = None, timeout: int = DEFAULT_TIMEOUT_SECONDS, api_set: str = DEFAULT_API_SET,
) -> dict[str, Any]:  # fmt: skip
    """`served` (paths this process answers) drops unserved entries; None keeps all (for Helm)."""
    return _configuration(
        "MutatingWebhookConfiguration", MUTATING_NAME, mutating_entries(api_set), target or ClientTarget(),
        ca_bundle, served, timeout,
    )  # fmt: skip


def validating_configuration(
    target: ClientTarget | None = None, ca_bundle: bytes | None = None, *,
    served: set[str] | None = None, timeout: int = DEFAULT_TIMEOUT_SECONDS, api_set: str = DEFAULT_API_SET,
) -> dict[str, Any]:  # fmt: skip
    return _configuration(
        "ValidatingWebhookConfiguration", VALIDATING_NAME, validating_entries(api_set),
        target or ClientTarget(), ca_bundle, served, timeout,
    )  # fmt: skip
