"""Our webhook configurations entry by entry against upstream OpenKruise 1.9.

The table is upstream's: the 1.9 chart's webhookconfiguration template (order, failurePolicy,
selectors, timeout from the values) with names, paths, versions and verbs from the handlers'
`+kubebuilder:webhook` markers and registered paths (v1.9.0 tag) — the default API set, 1.9. The 2.0
set differs only in listing v1beta1 for the kinds master also serves at v1beta1. Nothing sets matchPolicy
or reinvocationPolicy (the apiserver's defaults, Equivalent and Never, apply), as upstream.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.webhook import registry
from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration
from tests.kit.webhook import context

POD_NS = {
    "matchExpressions": [
        {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]},
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
    ]
}
NOT_KUBE_SYSTEM = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
    ]
}
PROTECTED = {"matchExpressions": [{"key": "policy.kruise.io/delete-protection", "operator": "Exists"}]}
K = "apps.kruise.io"
BOTH = ["v1alpha1", "v1beta1"]
ALPHA = ["v1alpha1"]
# Kinds upstream 1.9 registers (and serves) at v1alpha1 only; the 2.0 set serves them at v1beta1 too (as
# upstream master does, whose markers list both): a v1beta1 write must reach the webhook, and the sandbox's
# emulator calls webhooks with matchPolicy Exact, so the 2.0 rule names the version.
SERVED_BETA = ("beta in 2.0",)
CU = ["CREATE", "UPDATE"]
CUD = ["CREATE", "UPDATE", "DELETE"]

# name, path, apiGroup, apiVersions, resource, operations, failurePolicy, namespaceSelector, objectSelector
MUTATING: list[tuple[Any, ...]] = [
    ("mpod.kb.io", "/mutate-pod",
     "", ["v1"], "pods", ["CREATE"], "Fail", POD_NS, None),
    ("madvancedcronjob.kb.io", "/mutate-apps-kruise-io-advancedcronjob",
     K, BOTH, "advancedcronjobs", CU, "Fail", None, None),
    ("mbroadcastjob.kb.io", "/mutate-apps-kruise-io-broadcastjob",
     K, BOTH, "broadcastjobs", CU, "Fail", None, None),
    ("mcloneset.kb.io", "/mutate-apps-kruise-io-v1alpha1-cloneset",
     K, SERVED_BETA, "clonesets", CU, "Fail", None, None),
    ("mcontainerrecreaterequest.kb.io", "/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest",
     K, SERVED_BETA, "containerrecreaterequests", CU, "Fail", None, None),
    ("mdaemonset.kb.io", "/mutate-apps-kruise-io-daemonset",
     K, BOTH, "daemonsets", CU, "Fail", None, None),
    ("mimagelistpulljob-v1beta1.kb.io", "/mutate-apps-kruise-io-imagelistpulljob",
     K, BOTH, "imagelistpulljobs", CU, "Fail", None, None),
    ("mimagepulljob-v1beta1.kb.io", "/mutate-apps-kruise-io-imagepulljob",
     K, BOTH, "imagepulljobs", CU, "Fail", None, None),
    ("mnodeimage.kb.io", "/mutate-apps-kruise-io-nodeimage",
     K, BOTH, "nodeimages", CU, "Fail", None, None),
    ("msidecarset.kb.io", "/mutate-apps-kruise-io-sidecarset",
     K, BOTH, "sidecarsets", CU, "Fail", None, None),
    ("mstatefulset.kb.io", "/mutate-apps-kruise-io-statefulset",
     K, BOTH, "statefulsets", CU, "Fail", None, None),
    ("muniteddeployment.kb.io", "/mutate-apps-kruise-io-v1alpha1-uniteddeployment",
     K, SERVED_BETA, "uniteddeployments", CU, "Fail", None, None),
]  # fmt: skip

VALIDATING: list[tuple[Any, ...]] = [
    ("vbuiltindeployment.kb.io", "/validate-apps-deployment",
     "apps", ["v1"], "deployments", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vbuiltinreplicaset.kb.io", "/validate-apps-replicaset",
     "apps", ["v1"], "replicasets", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vbuiltinstatefulset.kb.io", "/validate-apps-statefulset",
     "apps", ["v1"], "statefulsets", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vcustomresourcedefinition.kb.io", "/validate-customresourcedefinition",
     "apiextensions.k8s.io", ["v1", "v1beta1"], "customresourcedefinitions", ["DELETE"], "Ignore",
     NOT_KUBE_SYSTEM, PROTECTED),
    ("vnamespace.kb.io", "/validate-namespace",
     "", ["v1"], "namespaces", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vingress.kb.io", "/validate-ingress",
     "networking.k8s.io", ["v1", "v1beta1"], "ingresses", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vservice.kb.io", "/validate-service",
     "", ["v1"], "services", ["DELETE"], "Ignore", NOT_KUBE_SYSTEM, PROTECTED),
    ("vpod.kb.io", "/validate-pod",
     "", ["v1"], "pods", ["UPDATE", "DELETE"], "Fail", POD_NS, None),
    ("vpodeviction.kb.io", "/validate-pod",
     "", ["v1"], "pods/eviction", ["CREATE"], "Fail", POD_NS, None),
    ("vresourcedistribution.kb.io", "/validate-apps-kruise-io-v1alpha1-resourcedistribution",
     K, SERVED_BETA, "resourcedistributions", CU, "Fail", None, None),
    ("vworkloadspread.kb.io", "/validate-apps-kruise-io-v1alpha1-workloadspread",
     K, SERVED_BETA, "workloadspreads", CU, "Fail", None, None),
    ("vadvancedcronjob.kb.io", "/validate-apps-kruise-io-advancedcronjob",
     K, BOTH, "advancedcronjobs", CU, "Fail", None, None),
    ("vbroadcastjob.kb.io", "/validate-apps-kruise-io-broadcastjob",
     K, BOTH, "broadcastjobs", CU, "Fail", None, None),
    ("vcloneset.kb.io", "/validate-apps-kruise-io-v1alpha1-cloneset",
     K, SERVED_BETA, "clonesets", CUD, "Fail", None, None),
    ("vdaemonset.kb.io", "/validate-apps-kruise-io-daemonset",
     K, BOTH, "daemonsets", CU, "Fail", None, None),
    ("vimagelistpulljob-v1beta1.kb.io", "/validate-apps-kruise-io-imagelistpulljob",
     K, BOTH, "imagelistpulljobs", CU, "Fail", None, None),
    ("vimagepulljob-v1beta1.kb.io", "/validate-apps-kruise-io-imagepulljob",
     K, BOTH, "imagepulljobs", CU, "Fail", None, None),
    ("vnodeimage.kb.io", "/validate-apps-kruise-io-nodeimage",
     K, BOTH, "nodeimages", CU, "Fail", None, None),
    ("vpersistentpodstate.kb.io", "/validate-apps-kruise-io-persistentpodstate",
     K, SERVED_BETA, "persistentpodstates", CU, "Fail", None, None),
    ("vpodprobemarker.kb.io", "/validate-apps-kruise-io-podprobemarker",
     K, ALPHA, "podprobemarkers", CU, "Fail", None, None),
    ("vpodunavailablebudget.kb.io", "/validate-policy-kruise-io-podunavailablebudget",
     "policy.kruise.io", SERVED_BETA, "podunavailablebudgets", CU, "Fail", None, None),
    ("vsidecarset.kb.io", "/validate-apps-kruise-io-sidecarset",
     K, BOTH, "sidecarsets", CU, "Fail", None, None),
    ("vstatefulset.kb.io", "/validate-apps-kruise-io-statefulset",
     K, BOTH, "statefulsets", CUD, "Fail", None, None),
    ("vephemeraljobs.kb.io", "/validate-apps-kruise-io-v1alpha1-ephemeraljob",
     K, ALPHA, "ephemeraljobs", CU, "Fail", None, None),
    ("vuniteddeployment.kb.io", "/validate-apps-kruise-io-v1alpha1-uniteddeployment",
     K, SERVED_BETA, "uniteddeployments", CUD, "Fail", None, None),
]  # fmt: skip

TARGET = ClientTarget(namespace="kruise-system")
GENERATED = {
    api_set: {
        "mutating": mutating_configuration(TARGET, api_set=api_set),
        "validating": validating_configuration(TARGET, api_set=api_set),
    }
    for api_set in ("1.9", "2.0")
}
GENERATED_DEFAULT = {
    "mutating": mutating_configuration(TARGET),
    "validating": validating_configuration(TARGET),
}
TABLE = [("mutating", row) for row in MUTATING] + [("validating", row) for row in VALIDATING]


def test_the_default_is_the_1_9_set() -> None:
    assert GENERATED["1.9"] == GENERATED_DEFAULT


@pytest.mark.parametrize("api_set", ["1.9", "2.0"])
@pytest.mark.parametrize(("which", "row"), TABLE, ids=[row[0] for _, row in TABLE])
def test_entry_matches_upstream(api_set: str, which: str, row: tuple[Any, ...]) -> None:
    name, path, group, versions, resource, operations, failure, ns_selector, obj_selector = row
    if versions == SERVED_BETA:
        versions = ALPHA if api_set == "1.9" else BOTH
    [hook] = [h for h in GENERATED[api_set][which]["webhooks"] if h["name"] == name]
    expected: dict[str, Any] = {
        "name": name,
        "clientConfig": {
            "service": {
                "namespace": "kruise-system",
                "name": "kruise-webhook-service",
                "port": 443,
                "path": path,
            }
        },
        "rules": [
            {"apiGroups": [group], "apiVersions": versions, "resources": [resource], "operations": operations}
        ],
        "failurePolicy": failure,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1", "v1beta1"],
        "timeoutSeconds": 30,
    }
    if ns_selector is not None:
        expected["namespaceSelector"] = ns_selector
    if obj_selector is not None:
        expected["objectSelector"] = obj_selector
    # the whole webhook, so a field upstream does not set (matchPolicy, reinvocationPolicy, a
    # selector on a kind webhook) fails here too
    assert hook == expected


@pytest.mark.parametrize(("which", "rows"), [("mutating", MUTATING), ("validating", VALIDATING)])
def test_same_webhooks_in_upstream_order(which: str, rows: list[tuple[Any, ...]]) -> None:
    for api_set in GENERATED:
        assert [h["name"] for h in GENERATED[api_set][which]["webhooks"]] == [row[0] for row in rows]


def test_every_upstream_path_is_answered() -> None:
    """Every entry points at a path this process routes (`/validate-pod` only once PUB checks or
    WorkloadSpread bookkeeping are wired in, so it is absent from a bare route table)."""
    routes = set(registry.routes(context()))
    missing = {row[1] for _, row in TABLE} - routes
    assert missing == {"/validate-pod"}
