"""The pure rules of `set selector|subject|serviceaccount` and `rollout approve`: argument parsing,
the patches they build and upstream's refusals."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.approve import ApproveError, approve_edit
from kruise.cli.kubectl_kruise.approve import plan as approve_plan
from kruise.cli.kubectl_kruise.setselector import Requirement, SetSelectorError, parse_selector
from kruise.cli.kubectl_kruise.setserviceaccount import SetServiceAccountError, split_arguments
from kruise.cli.kubectl_kruise.setserviceaccount import plan as sa_plan
from kruise.cli.kubectl_kruise.setsubject import SetSubjectError, SubjectOptions, added_subjects
from kruise.cli.kubectl_kruise.setsubject import plan as subject_plan


def test_selector_equalities_become_match_labels_and_the_rest_expressions():
    parsed = parse_selector("app=web, tier==front,env in (qa, dev),!legacy,canary,zone notin (a)")
    assert parsed.match_labels == {"app": "web", "tier": "front"}
    assert parsed.match_expressions == (
        Requirement("env", "In", ("dev", "qa")),
        Requirement("legacy", "DoesNotExist"),
        Requirement("canary", "Exists"),
        Requirement("zone", "NotIn", ("a",)),
    )
    assert [req.go() for req in parsed.match_expressions][:2] == [
        "{env In [dev qa]}",
        "{legacy DoesNotExist []}",
    ]
    assert parse_selector("").match_labels == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("env!=qa", '"!=" is not a valid label selector operator'),
        ("-bad=x", 'unable to parse requirement: invalid label key "-bad"'),
        ("app=has space", 'unable to parse requirement: invalid label key "app=has space"'),
        ("app=" + "v" * 64, f'unable to parse requirement: invalid label value: "{"v" * 64}"'),
    ],
)
def test_selector_refusals_name_the_rule(text, message):
    with pytest.raises(SetSelectorError) as err:
        parse_selector(text)
    assert str(err.value) == message


def test_serviceaccount_patch_targets_each_kinds_pod_spec():
    targets, account = split_arguments(["cloneset/demo", "po/one", "rc/old", "robot"])
    assert account == "robot"
    edit = sa_plan(account)
    assert [edit(t, {}).ops[0]["path"] for t in targets] == [
        "/spec/template/spec/serviceAccountName",
        "/spec/serviceAccountName",
        "/spec/template/spec/serviceAccountName",
    ]
    with pytest.raises(SetServiceAccountError) as err:
        edit(kinds.Target(objects.SIDECARSET, "logs"), {})
    assert str(err.value) == (
        "sidecarsets/logs the object is not a pod or does not have a pod template: *v1alpha1.SidecarSet"
    )
    with pytest.raises(SetServiceAccountError, match="serviceaccount is required"):
        split_arguments([])


def test_subjects_are_sorted_deduplicated_and_only_missing_ones_added():
    options = SubjectOptions(
        users=("bob", "alice", "bob"), groups=("ops",), service_accounts=(":robot", "x:y")
    )
    wanted = options.subjects("shop")
    assert [(s["kind"], s["name"], s.get("namespace")) for s in wanted] == [
        ("User", "alice", None), ("User", "bob", None), ("Group", "ops", None),
        ("ServiceAccount", "robot", "shop"), ("ServiceAccount", "y", "x"),
    ]  # fmt: skip
    existing = [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}]
    assert [s["name"] for s in added_subjects(existing, wanted)] == ["alice", "ops", "robot", "y"]
    edit = subject_plan(options, "shop")(kinds.Target(objects.ROLEBINDING, "admin"), {"subjects": existing})
    assert edit.ops[0] == {"op": "test", "path": "/subjects", "value": existing}
    assert edit.ops[1]["value"][:1] == existing and len(edit.ops[1]["value"]) == 5
    assert (
        subject_plan(SubjectOptions(users=("bob",)), "shop")(
            kinds.Target(objects.ROLEBINDING, "admin"), {"subjects": existing}
        ).ops
        == []
    )


def test_subject_flag_rules():
    with pytest.raises(SetSubjectError, match="at least one value of user, group or serviceaccount"):
        SubjectOptions().validate([])
    with pytest.raises(SetSubjectError, match=r"^serviceaccount must be <namespace>:<name>$"):
        SubjectOptions(service_accounts=("ns:",)).validate([])
    binding = [kinds.Target(objects.CLUSTERROLEBINDING, "viewers")]
    with pytest.raises(SetSubjectError, match="namespace must be specified"):
        SubjectOptions(service_accounts=(":robot",)).validate(binding)
    SubjectOptions(service_accounts=(":robot",)).validate([kinds.Target(objects.ROLEBINDING, "admin")])


def test_approve_moves_a_paused_step_to_ready_and_refuses_otherwise():
    paused = {"status": {"blueGreenStatus": {"currentStepState": "StepPaused"}}}
    path = "/status/blueGreenStatus/currentStepState"
    assert approve_edit(paused).ops == [
        {"op": "test", "path": path, "value": "StepPaused"},
        {"op": "replace", "path": path, "value": "StepReady"},
    ]
    with pytest.raises(ApproveError, match="current canary state is not 'StepPaused'"):
        approve_edit({"status": {"canaryStatus": {"currentStepState": "StepReady"}}})
    with pytest.raises(ApproveError, match="no need to approve: not in canary or blue-green progress"):
        approve_edit({"status": {}})
    with pytest.raises(ApproveError) as err:
        approve_plan()(kinds.Target(kinds.CLONESET, "demo"), paused)
    assert str(err.value) == 'clonesets.apps.kruise.io "demo" approving is not supported'
