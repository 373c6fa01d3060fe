"""Pause, resume, restart and scaledown: which field each kind changes, and upstream's refusals."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import kinds, mutate


@pytest.mark.parametrize(
    ("workload", "patch"),
    [
        (kinds.DEPLOYMENT, {"spec": {"paused": True}}),
        (kinds.CLONESET, {"spec": {"updateStrategy": {"paused": True}}}),
        (kinds.ADVANCED_STATEFULSET, {"spec": {"updateStrategy": {"rollingUpdate": {"paused": True}}}}),
        (kinds.ADVANCED_DAEMONSET, {"spec": {"updateStrategy": {"rollingUpdate": {"paused": True}}}}),
    ],
)
def test_pause_and_resume_patches(workload, patch):
    assert mutate.pause_patch(workload, {"spec": {}}) == patch
    with pytest.raises(mutate.MutationError, match="is not paused"):
        mutate.resume_patch(workload, {"spec": {}})
    paused = {"spec": {"paused": True, "updateStrategy": {"paused": True, "rollingUpdate": {"paused": True}}}}
    assert mutate.is_paused(workload, paused)
    with pytest.raises(mutate.MutationError, match="is already paused"):
        mutate.pause_patch(workload, paused)
    resumed = mutate.resume_patch(workload, paused)
    assert str(resumed) == str(patch).replace("True", "False")


@pytest.mark.parametrize("workload", [kinds.STATEFULSET, kinds.DAEMONSET])
def test_builtin_sets_cannot_pause(workload):
    with pytest.raises(mutate.UnsupportedError, match="pausing is not supported"):
        mutate.pause_patch(workload, {"spec": {}})
    with pytest.raises(mutate.UnsupportedError, match="resuming is not supported"):
        mutate.resume_patch(workload, {"spec": {}})


def test_restart_annotation_for_builtin_kinds():
    patch = mutate.restart_annotation_patch(kinds.DAEMONSET, {"spec": {}}, "2026-01-01T00:00:00Z")
    assert patch == {
        "spec": {
            "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}}
            }
        }
    }
    with pytest.raises(
        mutate.MutationError, match=r"can't restart paused deployment \(run rollout resume first\)"
    ):
        mutate.restart_annotation_patch(kinds.DEPLOYMENT, {"spec": {"paused": True}}, "t")
    with pytest.raises(mutate.UnsupportedError):
        mutate.restart_annotation_patch(kinds.CLONESET, {"spec": {}}, "t")


def test_restart_env_replaces_or_appends_in_every_container():
    obj = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "a",
                            "env": [{"name": "X", "value": "1"}, {"name": "RESTARTED_AT", "value": "old"}],
                        },
                        {"name": "b"},
                    ]
                }
            }
        }
    }
    out = mutate.with_restart_env(obj, "now")
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers[0]["env"] == [{"name": "X", "value": "1"}, {"name": "RESTARTED_AT", "value": "now"}]
    assert containers[1]["env"] == [{"name": "RESTARTED_AT", "value": "now"}]
    assert "env" not in obj["spec"]["template"]["spec"]["containers"][1]  # input untouched


@pytest.mark.parametrize(
    ("text", "names"),
    [("a,b", ["a", "b"]), ("a, b ,", ["a", "b"]), ("a,a,b", ["a", "b"])],
)
def test_parse_pod_list(text, names):
    assert mutate.parse_pod_list(text) == names


def test_parse_pod_list_needs_one_name():
    with pytest.raises(mutate.MutationError, match="must specify one pod name"):
        mutate.parse_pod_list(" , ")


@pytest.mark.parametrize(
    ("replicas", "existing", "pods", "new_replicas", "listed"),
    [
        (5, [], ["a", "b"], 3, ["a", "b"]),
        (5, ["a"], ["a", "b"], 4, ["a", "b"]),
        (None, [], ["a"], 0, ["a"]),
    ],
)
def test_scaledown(replicas, existing, pods, new_replicas, listed):
    cloneset = {"spec": {"replicas": replicas, "scaleStrategy": {"podsToDelete": existing}}}
    out = mutate.scaledown(cloneset, pods)
    assert out["spec"]["replicas"] == new_replicas
    assert out["spec"]["scaleStrategy"]["podsToDelete"] == listed
    assert cloneset["spec"]["scaleStrategy"]["podsToDelete"] == existing


def test_scaledown_cannot_go_below_zero():
    with pytest.raises(mutate.MutationError, match="cannot delete 2 pods from 1 replicas"):
        mutate.scaledown({"spec": {"replicas": 1}}, ["a", "b"])
