"""AdvancedCronJob with an ImageListPullJob template (upstream 1.9): defaults, the validating webhook's
template rules (one template only, Replace/Forbid, the ImageListPullJob checks, Always-only completion)
and which updates are allowed."""

from __future__ import annotations

import copy

import pytest

from kruise.api import advancedcronjob as acj
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

ILPJ_TEMPLATE = {
    "metadata": {"labels": {"pull": "nightly"}},
    "spec": {"images": ["nginx:1.25", "busybox:1.36"], "parallelism": 2},
}
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "AdvancedCronJob",
    "metadata": {"name": "prepull", "namespace": "default"},
    "spec": {"schedule": "0 2 * * *", "template": {"imageListPullJobTemplate": ILPJ_TEMPLATE}},
}


def _obj(template_spec: dict | None = None, **spec_changes) -> dict:
    obj = copy.deepcopy(BASE)
    if template_spec is not None:
        obj["spec"]["template"]["imageListPullJobTemplate"]["spec"] = template_spec
    obj["spec"].update(spec_changes)
    return obj


def _parsed(obj: dict, *, defaults: bool = True) -> acj.AdvancedCronJob:
    parsed = acj.AdvancedCronJob.model_validate(obj)
    if defaults:
        acj.set_defaults(parsed)
    return parsed


def _errors(obj: dict, *, defaults: bool = True) -> list[str]:
    return [str(e) for e in acj.validate(_parsed(obj, defaults=defaults))]


def test_v1alpha1_schema_keeps_the_template():
    report = check(BASE, build_crd(acj.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert report.errors == [] and report.pruned == []


def test_defaults_replace_and_the_pull_policy():
    spec = _parsed(BASE).to_dict()["spec"]
    assert spec["concurrencyPolicy"] == "Replace"
    assert spec["successfulJobsHistoryLimit"] == 3
    assert spec["failedJobsHistoryLimit"] == 1
    template_spec = spec["template"]["imageListPullJobTemplate"]["spec"]
    assert template_spec["completionPolicy"] == {"type": "Always"}
    assert template_spec["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}
    assert template_spec["imagePullPolicy"] == "IfNotPresent"
    assert acj.template_kind(_parsed(BASE).spec) == "ImageListPullJob"


def test_defaults_leave_a_template_with_a_completion_type_alone():
    """Upstream only fills the pull policy in while the completion type is empty."""
    spec = _parsed(_obj({"images": ["nginx"], "completionPolicy": {"type": "Always"}})).to_dict()["spec"]
    template_spec = spec["template"]["imageListPullJobTemplate"]["spec"]
    assert "pullPolicy" not in template_spec
    assert "imagePullPolicy" not in template_spec


def test_an_explicit_concurrency_policy_is_kept():
    assert _parsed(_obj(concurrencyPolicy="Forbid")).spec.concurrency_policy == "Forbid"


def test_valid_template_is_accepted():
    assert _errors(BASE) == []
    assert _errors(_obj(concurrencyPolicy="Forbid")) == []


def test_allow_is_refused():
    assert _errors(_obj(concurrencyPolicy="Allow")) == [
        'spec.spec.concurrencyPolicy: Invalid value: "Allow": '
        "concurrencyPolicy should be Replace or Forbid, but current value is: Allow"
    ]


def test_only_one_template():
    obj = _obj()
    obj["spec"]["template"]["jobTemplate"] = {
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "b"}]}}
        }
    }
    assert _errors(obj) == [
        "spec.template: Forbidden: spec can have only one template, either JobTemplate or "
        "BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
    ]


P = "spec.template.imageListPullJobTemplate.spec"


@pytest.mark.parametrize(
    ("template_spec", "expected"),
    [
        ({"images": []}, f"{P}.images: Invalid value: []: image can not be empty"),
        (
            {"images": [f"img{i}" for i in range(256)]},
            f"{P}.images: Invalid value: 256: the maximum number of images cannot > 255",
        ),
        (
            {"images": ["nginx", "redis", "nginx"]},
            f'{P}.images[2]: Invalid value: "nginx": images cannot have duplicate values',
        ),
        ({"images": ["Not Valid"]}, f'{P}.images[0]: Invalid value: "Not Valid": invalid image Not Valid'),
        (
            {"images": ["nginx"], "selector": {"names": ["n1", "n1"]}},
            f"{P}.selector.names: Invalid value:",
        ),
        (
            {"images": ["nginx"], "selector": {"names": ["n1"], "matchLabels": {"a": "b"}}},
            f"{P}.selector: Forbidden: can not set both names and labelSelector in this spec.selector",
        ),
        (
            {"images": ["nginx"], "selector": {"names": ["n1"]}, "podSelector": {"matchLabels": {"a": "b"}}},
            f"{P}.podSelector: Forbidden: can not set both selector and podSelector",
        ),
        (
            {"images": ["nginx"], "completionPolicy": {"type": "Never"}},
            f'{P}.completionPolicy.type: Invalid value: "Never": '
            "completionPolicy should be Always, but current value is: Never",
        ),
        (
            {"images": ["nginx"], "completionPolicy": {"activeDeadlineSeconds": 86401}},
            f"{P}.completionPolicy.activeDeadlineSeconds: Invalid value: 86401: "
            "activeDeadlineSeconds must be less than 86400, current value is: 86401",
        ),
        (
            {"images": ["nginx"], "completionPolicy": {"activeDeadlineSeconds": 300}},
            f"{P}.completionPolicy.activeDeadlineSeconds: Invalid value: 300: "
            "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(600)",
        ),
        (
            {"images": ["nginx"], "completionPolicy": {"ttlSecondsAfterFinished": 60}},
            f"{P}.completionPolicy.ttlSecondsAfterFinished: Invalid value: 60: "
            "ttlSecondsAfterFinished is not supported in advancedCronJob",
        ),
    ],
)
def test_template_rules_report_the_first_problem(template_spec, expected):
    errors = _errors(_obj(template_spec))
    assert len(errors) == 1
    assert errors[0].startswith(expected), errors[0]


def test_a_deadline_above_the_timeout_is_accepted():
    template_spec = {
        "images": ["nginx"],
        "pullPolicy": {"timeoutSeconds": 120},
        "completionPolicy": {"activeDeadlineSeconds": 3600},
    }
    assert _errors(_obj(template_spec)) == []


def test_without_defaults_the_empty_completion_type_is_refused():
    """A template stored without the webhook's defaults has no completion type: not Always."""
    errors = _errors(_obj(concurrencyPolicy="Replace"), defaults=False)
    assert errors == [
        f'{P}.completionPolicy.type: Invalid value: "": '
        "completionPolicy should be Always, but current value is: "
    ]


def test_update_may_change_the_image_list_pull_job_template():
    old = _parsed(BASE)
    new = _parsed(_obj({"images": ["redis:7"], "parallelism": 5}))
    assert acj.validate_update(new, old) == []


def test_update_may_not_switch_a_job_cron_job_to_image_pulls():
    job_cron = copy.deepcopy(BASE)
    job_cron["spec"]["template"] = {
        "jobTemplate": {
            "spec": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "b"}]}}
            }
        }
    }
    job_cron["spec"]["concurrencyPolicy"] = "Forbid"
    old = _parsed(job_cron)
    new = _parsed(_obj(concurrencyPolicy="Forbid"))
    errors = [str(e) for e in acj.validate_update(new, old)]
    assert errors == [
        "spec: Forbidden: updates to advancedcronjob spec for fields other than 'imageListPullJobTemplate', "
        "'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', "
        "'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden"
    ]
