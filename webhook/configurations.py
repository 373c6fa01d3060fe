"""The Mutating/ValidatingWebhookConfiguration objects, rendered from the webhook registry.

Helm renders them, `kruise sandbox up` applies them, and the cert controller rebuilds them with the
caBundle. Entries whose path this process does not serve are dropped when rebuilding, as upstream's
webhook controller does, so a configuration never points the apiserver at a 404.

The entries are upstream 1.9's, one for one: its chart's webhookconfiguration template (same order,
selectors, failurePolicy, timeout from the values) with each name, path and verb list taken from the
`+kubebuilder:webhook` marker and handler path of the matching upstream handler. Each entry is
declared beside the handler that answers it (`Registration.webhooks` in `kruise.webhook.registry`);
this module orders and renders them. A Kruise kind's rule lists the versions the API set in force
serves (`kruise.api.apisets`): 1.9's are upstream 1.9's markers, 2.0's list v1beta1 for every kind
served at v1beta1, as upstream master's markers do. Like upstream, no entry sets matchPolicy or
reinvocationPolicy (the apiserver defaults them to Equivalent and Never).
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
from typing import Any

from kruise.api.apisets import DEFAULT_API_SET, served_versions
from kruise.webhook import registry
from kruise.webhook.registry import WebhookSpec

MUTATING_NAME = "kruise-mutating-webhook-configuration"
VALIDATING_NAME = "kruise-validating-webhook-configuration"
SERVICE_NAME = "kruise-webhook-service"
DEFAULT_TIMEOUT_SECONDS = 30


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


# Upstream 1.9 chart's order of each configuration's webhooks (its webhookconfiguration template). The
# entries themselves are declared by the handler modules that answer them (`kruise.webhook.registry`).
MUTATING_ORDER = (
    "mpod.kb.io",
    "madvancedcronjob.kb.io",
    "mbroadcastjob.kb.io",
    "mcloneset.kb.io",
    "mcontainerrecreaterequest.kb.io",
    "mdaemonset.kb.io",
    "mimagelistpulljob-v1beta1.kb.io",
    "mimagepulljob-v1beta1.kb.io",
    "mnodeimage.kb.io",
    "msidecarset.kb.io",
    "mstatefulset.kb.io",
    "muniteddeployment.kb.io",
)
VALIDATING_ORDER = (
    "vbuiltindeployment.kb.io",
    "vbuiltinreplicaset.kb.io",
    "vbuiltinstatefulset.kb.io",
    "vcustomresourcedefinition.kb.io",
    "vnamespace.kb.io",
    "vingress.kb.io",
    "vservice.kb.io",
    "vpod.kb.io",
    "vpodeviction.kb.io",
    "vresourcedistribution.kb.io",
    "vworkloadspread.kb.io",
    "vadvancedcronjob.kb.io",
    "vbroadcastjob.kb.io",
    "vcloneset.kb.io",
    "vdaemonset.kb.io",
    "vimagelistpulljob-v1beta1.kb.io",
    "vimagepulljob-v1beta1.kb.io",
    "vnodeimage.kb.io",
    "vpersistentpodstate.kb.io",
    "vpodprobemarker.kb.io",
    "vpodunavailablebudget.kb.io",
    "vsidecarset.kb.io",
    "vstatefulset.kb.io",
    "vephemeraljobs.kb.io",
    "vuniteddeployment.kb.io",
)


def _entry(spec: WebhookSpec, api_set: str) -> Entry:
    versions = spec.versions
    if versions is None:
        versions = served_versions(api_set, spec.group, spec.resources[0])
        if not versions:
            raise ValueError(
                f"API set {api_set} has no {spec.resources[0]}.{spec.group} for webhook {spec.name}"
            )
    return Entry(
        spec.name, spec.path, (spec.group,), versions, spec.resources, spec.operations, spec.failure_policy,
        spec.namespace_selector, spec.object_selector,
    )  # fmt: skip


def _entries(mutating: bool, order: tuple[str, ...], api_set: str) -> list[Entry]:
    specs = {spec.name: spec for spec in registry.webhooks() if spec.mutating == mutating}
    if set(specs) != set(order):
        unordered, gone = sorted(set(specs) - set(order)), sorted(set(order) - set(specs))
        raise ValueError(f"webhook order out of date: registered but not ordered {unordered}, ordered but "
                         f"not registered {gone}")  # fmt: skip
    return [_entry(specs[name], api_set) for name in order]


def mutating_entries(api_set: str = DEFAULT_API_SET) -> list[Entry]:
    """Upstream's mutating webhooks in its 1.9 chart's order, each Kruise rule listing every version
    the set serves (the emulator's matchPolicy is Exact, where a real apiserver would convert to a
    listed version for the call). Names and paths are those
    its handlers register (some with the version in the path, the imagepulljob pair with a `-v1beta1` name).
    Kinds upstream does not default at admission (PodUnavailableBudget, ResourceDistribution,
    PersistentPodState, PodProbeMarker, NodePodProbe, EphemeralJob, WorkloadSpread) get no entry."""
    return _entries(True, MUTATING_ORDER, api_set)


def validating_entries(api_set: str = DEFAULT_API_SET) -> list[Entry]:
    """Upstream 1.9's validating webhooks in its chart's order. ContainerRecreateRequest and
    NodePodProbe have no validating webhook upstream, so none here either."""
    return _entries(False, VALIDATING_ORDER, api_set)


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
