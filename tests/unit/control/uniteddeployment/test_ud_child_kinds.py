"""Children of the non-CloneSet templates: Advanced / native StatefulSet and Deployment.

What differs per kind is where the partition lives (or whether there is one), the child's
apiVersion/kind, how the partition is read back, and the native StatefulSet's stuck-pod cleanup.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.plan import plan_children
from kruise.control.uniteddeployment.subsets import (
    KIND_ADVANCED_STATEFULSET,
    KIND_DEPLOYMENT,
    KIND_STATEFULSET,
    pod_ordinal,
    read_child,
    render_child,
    spec_partition,
    stuck_pods,
    template_kind,
)
from tests.kit.pods import pod

ZONE = "topology.kubernetes.io/zone"
POD_TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "main", "image": "img:1"}]},
}


def ud_obj(field: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    workload_spec = {"template": copy.deepcopy(POD_TEMPLATE), **(spec or {})}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "ud", "namespace": "ns", "uid": "u-1", "generation": 1},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {field: {"metadata": {"labels": {"app": "x"}}, "spec": workload_spec}},
            "topology": {
                "subsets": [
                    {
                        "name": "a",
                        "nodeSelectorTerm": {
                            "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]
                        },
                    },
                    {"name": "b"},
                ]
            },
        },
    }


def render(obj: dict[str, Any], replicas: int = 3, partition: int = 1, **kw: Any) -> dict[str, Any]:
    return render_child(obj, UnitedDeployment.model_validate(obj), "a", "ud-rev1", replicas, partition, **kw)


@pytest.mark.parametrize(
    ("field", "kind", "api_version", "child_kind"),
    [
        ("advancedStatefulSetTemplate", KIND_ADVANCED_STATEFULSET, "apps.kruise.io/v1beta1", "StatefulSet"),
        ("statefulSetTemplate", KIND_STATEFULSET, "apps/v1", "StatefulSet"),
        ("deploymentTemplate", KIND_DEPLOYMENT, "apps/v1", "Deployment"),
    ],
)
def test_each_template_renders_its_kind_with_subset_labels_and_affinity(
    field: str, kind: str, api_version: str, child_kind: str
) -> None:
    obj = ud_obj(field)
    assert template_kind(obj) == kind
    child = render(obj)
    assert (child["apiVersion"], child["kind"]) == (api_version, child_kind)
    assert child["metadata"]["generateName"] == "ud-a-"
    assert child["metadata"]["labels"][LABEL_SUBSET_NAME] == "a"
    assert child["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] == "ud-rev1"
    assert child["spec"]["replicas"] == 3
    assert child["spec"]["selector"] == {"matchLabels": {"app": "x", LABEL_SUBSET_NAME: "a"}}
    pod_labels = child["spec"]["template"]["metadata"]["labels"]
    assert pod_labels == {
        "app": "x",
        LABEL_SUBSET_NAME: "a",
        LABEL_KRUISE_CONTROLLER_REVISION_HASH: "ud-rev1",
    }
    required = child["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert required["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}
    ]


def test_native_statefulset_gets_rolling_update_type_and_partition() -> None:
    child = render(ud_obj("statefulSetTemplate", {"serviceName": "svc"}), partition=2)
    assert child["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    assert child["spec"]["serviceName"] == "svc"


def test_advanced_statefulset_keeps_empty_type_and_its_rolling_update_fields() -> None:
    rolling = {"maxUnavailable": 2, "podUpdatePolicy": "InPlaceIfPossible"}
    spec = {"updateStrategy": {"rollingUpdate": rolling}}
    child = render(ud_obj("advancedStatefulSetTemplate", spec), partition=1)
    assert child["spec"]["updateStrategy"] == {
        "rollingUpdate": {"maxUnavailable": 2, "podUpdatePolicy": "InPlaceIfPossible", "partition": 1}
    }


@pytest.mark.parametrize("field", ["statefulSetTemplate", "advancedStatefulSetTemplate"])
def test_on_delete_statefulset_gets_no_partition(field: str) -> None:
    child = render(ud_obj(field, {"updateStrategy": {"type": "OnDelete"}}), partition=2)
    assert child["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_deployment_has_no_partition_and_keeps_its_strategy() -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    child = render(ud_obj("deploymentTemplate", {"strategy": strategy, "minReadySeconds": 5}), partition=2)
    assert "updateStrategy" not in child["spec"]
    assert child["spec"]["strategy"] == strategy
    assert child["spec"]["minReadySeconds"] == 5


def test_update_rebuilds_spec_and_keeps_foreign_metadata() -> None:
    obj = ud_obj("deploymentTemplate")
    existing = render(obj)
    existing["metadata"].update(name="ud-a-xyz", uid="c-1")
    existing["metadata"]["labels"]["extra"] = "kept"
    existing["spec"]["paused"] = True
    child = render(obj, replicas=5, existing=existing)
    assert child["metadata"]["name"] == "ud-a-xyz"
    assert child["metadata"]["labels"]["extra"] == "kept"
    assert "paused" not in child["spec"] and child["spec"]["replicas"] == 5


def child_pod(name: str, revision: str, ready: bool = True) -> dict[str, Any]:
    """A running pod of `revision`."""
    return pod(
        name,
        namespace=None,
        labels={LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision},
        phase="Running",
        ready=ready,
    )


def sts(strategy: dict[str, Any], revision: str = "r2") -> dict[str, Any]:
    return {
        "metadata": {
            "name": "ud-a-x",
            "uid": "s-1",
            "labels": {LABEL_SUBSET_NAME: "a", LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision},
        },
        "spec": {"replicas": 3, "updateStrategy": strategy},
        "status": {"replicas": 3, "readyReplicas": 3},
    }


def test_partition_read_back_per_kind() -> None:
    pods = [child_pod("p-0", "r1"), child_pod("p-1", "r2"), child_pod("p-2", "r1")]
    rolling = sts({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    assert spec_partition(KIND_STATEFULSET, rolling, pods) == 2
    assert spec_partition(KIND_ADVANCED_STATEFULSET, sts({}), pods) is None
    # OnDelete: the pods not at the child's revision stand for the partition.
    assert spec_partition(KIND_STATEFULSET, sts({"type": "OnDelete"}), pods) == 2
    assert read_child(KIND_ADVANCED_STATEFULSET, sts({"type": "OnDelete"}), pods, "r2").partition == 2
    assert spec_partition(KIND_DEPLOYMENT, {"spec": {"replicas": 3}}, pods) is None


def test_deployment_child_under_manual_partition_is_rewritten_as_upstream() -> None:
    """Upstream reads a Deployment's partition as 0, so a manual partition always differs."""
    obj = ud_obj("deploymentTemplate")
    obj["spec"]["updateStrategy"] = {"type": "Manual", "manualUpdate": {"partitions": {"a": 1}}}
    ud = UnitedDeployment.model_validate(obj)
    existing = render_child(obj, ud, "a", "rev", 2, 1)
    existing["metadata"].update(name="ud-a-1", uid="d-1")
    existing["status"] = {"replicas": 2, "readyReplicas": 2}
    child = read_child(KIND_DEPLOYMENT, existing, [child_pod("x", "rev"), child_pod("y", "rev")], "rev")
    assert child.partition is None
    plan = plan_children(obj, ud, {"a": child}, "rev", {"a": 2, "b": 2}, {"a": 1, "b": 0})
    assert [(w.subset, w.reason) for w in plan.updates] == [("a", "partition changed")]
    assert "updateStrategy" not in plan.updates[0].body["spec"]


def test_stuck_pods_are_old_unready_at_or_above_partition() -> None:
    pods = [
        child_pod("web-0", "r1", ready=False),  # below the partition
        child_pod("web-1", "r1", ready=False),  # stuck
        child_pod("web-2", "r2", ready=False),  # already updated
        child_pod("web-3", "r1", ready=True),  # ready: the controller will roll it
        child_pod("web", "r1", ready=False),  # no ordinal: -1
    ]
    stuck = stuck_pods(sts({"type": "RollingUpdate"}), pods, "r2", 1)
    assert [p["metadata"]["name"] for p in stuck] == ["web-1"]
    assert stuck_pods(sts({"type": "OnDelete"}), pods, "r2", 1) == []


@given(st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True), st.integers(0, 10_000))
def test_pod_ordinal_is_the_trailing_number(prefix: str, ordinal: int) -> None:
    assert pod_ordinal({"metadata": {"name": f"{prefix}-{ordinal}"}}) == ordinal


def test_pod_ordinal_without_number() -> None:
    assert pod_ordinal({"metadata": {"name": "web"}}) == -1
    assert pod_ordinal({"metadata": {"name": "web-x"}}) == -1
