"""Child rendering, subset patch, revisions, the per-pass plan and the status arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.plan import group_children, plan_children
from kruise.control.uniteddeployment.podpatch import PatchError, patch_pod_template
from kruise.control.uniteddeployment.revision import new_revision, plan_history, truncate
from kruise.control.uniteddeployment.status import (
    aggregate,
    set_united_deployment_condition,
    set_updated_condition,
)
from kruise.control.uniteddeployment.subsets import (
    ANNOTATION_SUBSET_PATCH,
    attach_node_affinity,
    read_child,
    render_child,
    subset_prefix,
)
from tests.kit.pods import pod

ZONE = "topology.kubernetes.io/zone"


def ud_obj(**spec: Any) -> dict[str, Any]:
    base = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "ud", "namespace": "ns", "uid": "u-1", "generation": 1},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "cloneSetTemplate": {
                    "metadata": {"labels": {"app": "x", "team": "t"}, "annotations": {"note": "n"}},
                    "spec": {
                        "template": {
                            "metadata": {"labels": {"app": "x"}},
                            "spec": {"containers": [{"name": "main", "image": "img:1"}]},
                        },
                        "updateStrategy": {"type": "ReCreate"},
                    },
                }
            },
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
    base["spec"].update(spec)
    return base


def model(obj: dict[str, Any]) -> UnitedDeployment:
    return UnitedDeployment.model_validate(obj)


def test_render_new_cloneset_child() -> None:
    obj = ud_obj()
    child = render_child(obj, model(obj), "a", "ud-rev1", 3, 1)
    meta = child["metadata"]
    assert child["apiVersion"] == "apps.kruise.io/v1alpha1" and child["kind"] == "CloneSet"
    assert meta["generateName"] == "ud-a-"
    assert meta["labels"] == {
        "app": "x",
        "team": "t",
        LABEL_KRUISE_CONTROLLER_REVISION_HASH: "ud-rev1",
        LABEL_SUBSET_NAME: "a",
    }
    assert meta["annotations"] == {"note": "n", ANNOTATION_SUBSET_PATCH: ""}
    assert meta["ownerReferences"][0]["uid"] == "u-1" and meta["ownerReferences"][0]["controller"]
    spec = child["spec"]
    assert spec["replicas"] == 3
    assert spec["selector"] == {"matchLabels": {"app": "x", LABEL_SUBSET_NAME: "a"}}
    assert spec["updateStrategy"] == {"type": "ReCreate", "partition": 1}
    pod = spec["template"]
    assert pod["metadata"]["labels"] == {
        "app": "x",
        LABEL_SUBSET_NAME: "a",
        LABEL_KRUISE_CONTROLLER_REVISION_HASH: "ud-rev1",
    }
    required = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}]
    }
    # The template itself is untouched.
    assert "affinity" not in obj["spec"]["template"]["cloneSetTemplate"]["spec"]["template"]["spec"]


def test_render_update_keeps_foreign_labels_and_name() -> None:
    obj = ud_obj()
    existing = {
        "metadata": {"name": "ud-b-xyz", "namespace": "ns", "labels": {"extra": "1"}, "resourceVersion": "7"},
        "spec": {"replicas": 9},
    }
    child = render_child(obj, model(obj), "b", "ud-rev2", 1, 0, existing=existing)
    assert child["metadata"]["name"] == "ud-b-xyz"
    assert child["metadata"]["resourceVersion"] == "7"
    assert "generateName" not in child["metadata"]
    assert child["metadata"]["labels"]["extra"] == "1"
    assert child["spec"]["replicas"] == 1
    assert "affinity" not in child["spec"]["template"]["spec"]


def test_node_affinity_is_appended_to_every_term() -> None:
    pod_spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                    ]
                }
            }
        }
    }
    zone = {"key": ZONE, "operator": "In", "values": ["z1"]}
    attach_node_affinity(pod_spec, {"matchExpressions": [zone], "matchFields": [{"key": "ignored"}]})
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms[0]["matchExpressions"][-1] == zone
    assert terms[1] == {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
        "matchExpressions": [zone],
    }


def test_prefix_falls_back_when_too_long() -> None:
    assert subset_prefix("ud", "a") == "ud-a-"
    assert subset_prefix("u" * 200, "s" * 60) == "u" * 200 + "-"


def test_pod_patch_merges_containers_by_name_and_replaces_other_lists() -> None:
    template = {
        "metadata": {"labels": {"app": "x"}},
        "spec": {
            "containers": [
                {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}]},
                {"name": "side", "image": "s:1"},
            ],
            "tolerations": [{"key": "t1"}],
        },
    }
    patch = {
        "metadata": {"labels": {"zone": "a", "app": None}},
        "spec": {
            "containers": [
                {"name": "main", "env": [{"name": "B", "value": "2"}]},
                {"name": "side", "$patch": "delete"},
                {"name": "new", "image": "n:1"},
            ],
            "tolerations": [{"key": "t2"}],
        },
    }
    out = patch_pod_template(template, patch)
    assert out["metadata"]["labels"] == {"zone": "a"}
    assert out["spec"]["containers"] == [
        {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"name": "new", "image": "n:1"},
    ]
    assert out["spec"]["tolerations"] == [{"key": "t2"}]
    assert template["spec"]["containers"][1]["name"] == "side"


def test_pod_patch_needs_merge_keys() -> None:
    with pytest.raises(PatchError, match="merge key 'name'"):
        patch_pod_template(
            {"spec": {"containers": [{"name": "a"}]}}, {"spec": {"containers": [{"image": "x"}]}}
        )


def child_obj(
    name: str, subset: str, revision: str, spec_replicas: int, status: dict[str, int] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {LABEL_SUBSET_NAME: subset, LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision},
            "annotations": {ANNOTATION_SUBSET_PATCH: ""},
        },
        "spec": {"replicas": spec_replicas, "updateStrategy": {"partition": 0}},
        "status": status or {},
    }


def child_pod(revision: str, ready: bool = True, **meta: Any) -> dict[str, Any]:
    """A nameless running pod of `revision` (the child only counts them); `meta`: more metadata."""
    return pod(
        None,
        namespace=None,
        labels={LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision},
        meta=meta,
        phase="Running",
        ready=ready,
    )


def test_read_child_counts_updated_active_pods() -> None:
    pods = [
        child_pod("r2"),
        child_pod("r2", ready=False),
        child_pod("r1"),
        child_pod("r2", deletionTimestamp="now"),
    ]
    child = read_child(
        "CloneSet", child_obj("c", "a", "r2", 4, {"replicas": 4, "readyReplicas": 3}), pods, "r2"
    )
    assert (child.updated_replicas, child.updated_ready_replicas) == (2, 1)
    assert (child.status_replicas, child.ready_replicas, child.partition) == (4, 3, 0)


def test_percent_partition_rounds_up() -> None:
    obj = child_obj("c", "a", "r", 5)
    obj["spec"]["updateStrategy"]["partition"] = "30%"
    assert read_child("CloneSet", obj, [], "r").partition == 2


def test_plan_creates_deletes_updates_and_duplicates() -> None:
    obj = ud_obj()
    ud = model(obj)
    kids = [
        read_child(
            "CloneSet",
            child_obj("ud-a-2", "a", "r1", 2, {"replicas": 2}),
            [child_pod("r1"), child_pod("r1")],
            "r1",
        ),
        read_child("CloneSet", child_obj("ud-a-1", "a", "r1", 2), [], "r1"),
        read_child("CloneSet", child_obj("ud-old-1", "old", "r1", 1), [], "r1"),
    ]
    existing, duplicates = group_children(kids)
    assert [c.name for c in duplicates] == ["ud-a-2"]
    plan = plan_children(obj, ud, existing, "r1", {"a": 2, "b": 2}, {"a": 0, "b": 0})
    assert [w.subset for w in plan.creates] == ["b"]
    assert [c.name for c in plan.deletes] == ["ud-old-1"]
    assert plan.updates == ()  # ud-a-1 already matches
    plan = plan_children(obj, ud, existing, "r2", {"a": 2, "b": 2}, {"a": 0, "b": 0})
    assert [(w.subset, w.reason) for w in plan.updates] == [("a", "revision changed")]
    plan = plan_children(obj, ud, existing, "r1", {"a": 3, "b": 1}, {"a": 0, "b": 0})
    assert [(w.subset, w.reason) for w in plan.updates] == [("a", "replicas changed")]
    plan = plan_children(obj, ud, existing, "r1", {"a": 2, "b": 2}, {"a": 1, "b": 0})
    assert [(w.subset, w.reason) for w in plan.updates] == [("a", "partition changed")]


def test_revision_is_stable_and_template_labels_only_for_non_cloneset() -> None:
    obj = ud_obj()
    first = new_revision(obj, 1, 0)
    assert first == new_revision(obj, 1, 0)
    assert first["metadata"]["name"].startswith("ud-")
    assert set(first["metadata"]["labels"]) == {"controller.kubernetes.io/hash"}
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert new_revision(obj, 1, 1)["metadata"]["name"] != first["metadata"]["name"]
    sts = ud_obj(template={"statefulSetTemplate": {"metadata": {"labels": {"app": "x"}}, "spec": {}}})
    assert new_revision(sts, 1, 0)["metadata"]["labels"]["app"] == "x"


def test_plan_history_create_reuse_rollback() -> None:
    obj = ud_obj()
    plan = plan_history(obj, [])
    assert plan.action == "create" and plan.current_name == plan.update["metadata"]["name"]
    stored = [{**plan.update, "revision": 1}]
    assert plan_history(obj, stored).action == "reuse"
    changed = ud_obj()
    changed["spec"]["template"]["cloneSetTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "img:2"
    )
    changed["status"] = {"currentRevision": stored[0]["metadata"]["name"]}
    second = plan_history(changed, stored)
    assert second.action == "create" and second.current_name == stored[0]["metadata"]["name"]
    history = [*stored, {**second.update, "revision": 2}]
    back = plan_history({**obj, "status": {}}, history)
    assert back.action == "rollback" and back.update["revision"] == 3


def test_truncate_keeps_live_revisions() -> None:
    revs = [{"metadata": {"name": f"r{i}"}, "revision": i} for i in range(1, 6)]
    obj = ud_obj(revisionHistoryLimit=2)
    obj["status"] = {"currentRevision": "r1", "updateStatus": {"updatedRevision": "r5"}}
    doomed, kept = truncate(revs, obj)
    assert doomed == ["r2", "r3"]
    assert [r["metadata"]["name"] for r in kept] == ["r4", "r5"]


def test_conditions_keep_transition_time() -> None:
    status: dict[str, Any] = {}
    set_updated_condition(status, "r1", "r1", "t0")
    assert status["conditions"][0]["reason"] == "UnitedDeploymentRevisionUpdated"
    set_updated_condition(status, "r1", "r2", "t1")
    assert status["conditions"][0] == {
        "type": "UnitedDeploymentUpdated",
        "status": "False",
        "lastTransitionTime": "t1",
        "reason": "UnitedDeploymentRevisionUpdating",
        "message": "updating to revision r2",
    }
    set_united_deployment_condition(status, "SubsetUpdated", "True", "", "", "t2")
    set_united_deployment_condition(status, "SubsetUpdated", "True", "", "", "t3")
    assert status["conditions"][-1]["lastTransitionTime"] == "t2"


def test_aggregate_sums_children_and_promotes_current_revision() -> None:
    kids = {
        "a": read_child(
            "CloneSet",
            child_obj("a1", "a", "r2", 2, {"replicas": 2, "readyReplicas": 2}),
            [child_pod("r2"), child_pod("r2")],
            "r2",
        ),
        "b": read_child(
            "CloneSet",
            child_obj("b1", "b", "r2", 1, {"replicas": 1, "readyReplicas": 0}),
            [child_pod("r2", ready=False)],
            "r2",
        ),
    }
    base = {"currentRevision": "r1", "subsetStatuses": [{"name": "a"}, {"name": "b"}]}
    out = aggregate(base, kids, {"a": 2, "b": 1}, {"a": 0, "b": 1}, "r1", "r2")
    assert (out["replicas"], out["readyReplicas"], out["updatedReplicas"], out["updatedReadyReplicas"]) == (
        3,
        2,
        3,
        2,
    )
    assert out["currentRevision"] == "r1"  # not all updated pods are ready yet
    assert out["subsetStatuses"] == [
        {"name": "a", "replicas": 2, "readyReplicas": 2},
        {"name": "b", "replicas": 1, "partition": 1},
    ]
    assert out["updateStatus"] == {"updatedRevision": "r2", "currentPartitions": {"a": 0, "b": 1}}
    ready_b = read_child(
        "CloneSet",
        child_obj("b1", "b", "r2", 1, {"replicas": 1, "readyReplicas": 1}),
        [child_pod("r2")],
        "r2",
    )
    out = aggregate(base, {**kids, "b": ready_b}, {"a": 2, "b": 1}, {"a": 0, "b": 0}, "r1", "r2")
    assert out["currentRevision"] == "r2"
