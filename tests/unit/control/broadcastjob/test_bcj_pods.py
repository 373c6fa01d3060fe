"""The job's pods: ownership, node assignment, counting, and the pod created for a node."""

from __future__ import annotations

import pytest
from bcj_builders import UID, job, job_pod

from kruise.control.broadcastjob.pods import assigned_node, group_pods, job_labels, new_pod, owned_pods


def test_new_pod_is_bound_by_node_affinity_with_the_jobs_labels_and_owner():
    j = job()
    template = {
        "metadata": {"labels": {"app": "probe"}, "annotations": {"a": "1"}, "name": "ignored"},
        "spec": {"containers": [{"name": "main"}], "affinity": {"podAffinity": {"x": 1}}},
    }
    pod = new_pod(template, "bcj", "ns", UID, "node-a")
    meta = pod["metadata"]
    assert meta["generateName"] == "bcj-"
    assert "name" not in meta
    assert meta["namespace"] == "ns"
    assert meta["labels"] == {"app": "probe", **job_labels("bcj", UID)}
    assert meta["annotations"] == {"a": "1"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "BroadcastJob",
            "name": "bcj",
            "uid": UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    affinity = pod["spec"]["affinity"]
    assert affinity["podAffinity"] == {"x": 1}
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]
    assert "nodeName" not in pod["spec"]
    assert assigned_node(pod) == "node-a"
    assert j.spec.template["spec"].get("affinity") is None


def test_new_pod_without_the_scheduler_sets_node_name():
    pod = new_pod({"spec": {"containers": []}}, "bcj", "ns", UID, "node-b", by_scheduler=False)
    assert pod["spec"]["nodeName"] == "node-b"
    assert "affinity" not in pod["spec"]


def _name_in(*values):
    return {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(values)}]}


def test_assigned_node_searches_every_term_and_needs_one_value():
    pod = {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_name_in("a", "b"), _name_in("c")]
                    }
                }
            }
        }
    }
    assert assigned_node(pod) == "c"
    assert assigned_node({"spec": {}}) == ""


def test_owned_pods_need_both_labels_and_the_controller_reference():
    j = job()
    mine = job_pod(j, "a")
    foreign_owner = job_pod(j, "b")
    foreign_owner["metadata"]["ownerReferences"][0]["uid"] = "other"
    unlabelled = job_pod(j, "c")
    del unlabelled["metadata"]["labels"]["broadcastjob-name"]
    assert owned_pods([mine, foreign_owner, unlabelled], "bcj", UID) == [mine]


@pytest.mark.parametrize(
    ("phase", "restarts", "deleting", "policy", "group"),
    [
        ("Succeeded", 0, False, "Never", "succeeded"),
        ("Succeeded", 0, True, "Never", "succeeded"),
        ("Failed", 0, False, "Never", "failed"),
        ("Failed", 0, True, "Never", "failed"),
        ("Running", 0, False, "Never", "active"),
        ("Pending", 0, False, "Never", "active"),
        ("Running", 0, True, "Never", None),
        ("Running", 5, False, "Never", "active"),
        ("Running", 3, False, "OnFailure", "failed"),
        ("Running", 2, False, "OnFailure", "active"),
        ("Running", 3, True, "OnFailure", None),
    ],
)
def test_group_pods_counts_as_upstream(phase, restarts, deleting, policy, group):
    pod = job_pod(job(restart_policy=policy), "a", phase=phase, restarts=restarts, deleting=deleting)
    groups = group_pods([pod], restart_limit=2)
    found = [name for name in ("active", "failed", "succeeded") if getattr(groups, name)]
    assert found == ([group] if group else [])


def test_restarts_of_init_containers_count_too():
    pod = job_pod(job(restart_policy="OnFailure"), "a", restarts=1)
    pod["status"]["initContainerStatuses"] = [{"name": "init", "restartCount": 1}]
    assert group_pods([pod], restart_limit=1).failed == (pod,)
