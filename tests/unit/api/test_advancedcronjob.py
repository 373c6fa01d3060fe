"""AdvancedCronJob: upstream's defaults, the validating webhook's rules, the CRD, and the seed YAML."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kruise.api import advancedcronjob as acj
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

SEED = Path("/work/shared/reference/seeds/002_4051790c1ba74477.txt")

POD_TEMPLATE = {
    "spec": {"restartPolicy": "Never", "containers": [{"name": "counter", "image": "busybox"}]},
}
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "AdvancedCronJob",
    "metadata": {"name": "acj-test", "namespace": "default"},
    "spec": {
        "schedule": "*/1 * * * *",
        "template": {"broadcastJobTemplate": {"spec": {"template": POD_TEMPLATE}}},
    },
}
JOB_TEMPLATE = {"spec": {"template": POD_TEMPLATE}}


def _obj(name: str = "acj-test", **spec_changes) -> dict:
    obj = copy.deepcopy(BASE)
    obj["metadata"]["name"] = name
    obj["spec"].update(spec_changes)
    return obj


def _parsed(obj: dict) -> acj.AdvancedCronJob:
    job = acj.AdvancedCronJob.model_validate(obj)
    acj.set_defaults(job)
    return job


def _errors(obj: dict) -> list[str]:
    return [str(e) for e in acj.validate(_parsed(obj))]


def test_defaults_match_upstream():
    spec = _parsed(BASE).to_dict()["spec"]
    assert spec["concurrencyPolicy"] == "Allow"
    assert spec["paused"] is False
    assert spec["successfulJobsHistoryLimit"] == 3
    assert spec["failedJobsHistoryLimit"] == 1
    pod = spec["template"]["broadcastJobTemplate"]["spec"]["template"]["spec"]
    assert pod["schedulerName"] == "default-scheduler"
    assert "parallelism" not in spec["template"]["broadcastJobTemplate"]["spec"]


def test_job_template_pod_gets_defaults():
    obj = _obj(template={"jobTemplate": copy.deepcopy(JOB_TEMPLATE)})
    spec = _parsed(obj).to_dict()["spec"]
    assert spec["template"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert acj.template_kind(_parsed(obj).spec) == "Job"
    assert acj.template_kind(_parsed(BASE).spec) == "BroadcastJob"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"schedule": "TZ=Asia/Shanghai 0 1 * * *"}, []),
        ({"schedule": "@every 1h"}, []),
        ({"timeZone": "Europe/Berlin"}, []),
        (
            {"schedule": ""},
            [
                'spec.schedule: Invalid value: "": '
                "schedule cannot be empty, please provide valid cron schedule.",
                'spec.schedule: Invalid value: "": empty spec string',
            ],
        ),
        (
            {"schedule": "* * * * * *"},
            [
                'spec.schedule: Invalid value: "* * * * * *": '
                "expected exactly 5 fields, found 6: [* * * * * *]"
            ],
        ),
        (
            {"schedule": "TZ=UTC * * * * *", "timeZone": "UTC"},
            [
                'spec.schedule: Invalid value: "TZ=UTC * * * * *": '
                "cannot use both timeZone field and TZ or CRON_TZ in schedule"
            ],
        ),
        ({"timeZone": ""}, ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']),
        (
            {"timeZone": "Local"},
            [
                'spec.timeZone: Invalid value: "Local": '
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
            ],
        ),
        (
            {"timeZone": "Nowhere/City"},
            ['spec.timeZone: Invalid value: "Nowhere/City": unknown time zone Nowhere/City'],
        ),
        (
            {"startingDeadlineSeconds": -1},
            ["spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"successfulJobsHistoryLimit": -1},
            ["spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"failedJobsHistoryLimit": -2},
            ["spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0"],
        ),
        (
            {"template": {}},
            [
                "spec.template: Forbidden: spec must have one template, "
                "either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
            ],
        ),
        (
            {
                "template": {
                    "jobTemplate": JOB_TEMPLATE,
                    "broadcastJobTemplate": {"spec": {"template": POD_TEMPLATE}},
                }
            },
            [
                "spec.template: Forbidden: spec can have only one template, "
                "either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
            ],
        ),
    ],
)
def test_spec_rules(changes, expected):
    assert _errors(_obj(**changes)) == expected


def test_child_pod_template_is_validated():
    obj = _obj(template={"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}})
    assert any(e.startswith("spec.template.spec.containers") for e in _errors(obj))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Daily-Report-1", []),
        (
            "acj_test",
            [
                'metadata.name: Invalid value: "acj_test": AdvancedCronJob name must consist of alphanumeric '
                "characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')"
            ],
        ),
        ("a" * 64, [f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters']),
    ],
)
def test_name_rules(name, expected):
    assert _errors(_obj(name=name)) == expected


def test_update_may_change_only_scheduling_knobs():
    old = _parsed(BASE)
    allowed = _parsed(
        _obj(
            schedule="@hourly",
            concurrencyPolicy="Forbid",
            paused=True,
            timeZone="UTC",
            startingDeadlineSeconds=5,
        )
    )
    assert acj.validate_update(allowed, old) == []
    changed_template = copy.deepcopy(BASE)
    changed_template["spec"]["template"]["broadcastJobTemplate"]["spec"]["paused"] = True
    errors = [str(e) for e in acj.validate_update(_parsed(changed_template), old)]
    assert errors == [
        "spec: Forbidden: updates to advancedcronjob spec for fields other than 'imageListPullJobTemplate', "
        "'schedule', "
        "'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', "
        "'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden"
    ]


def test_crd_metadata_and_printer_columns():
    crd = build_crd(acj.CRD)
    assert crd["metadata"]["name"] == "advancedcronjobs.apps.kruise.io"
    assert crd["spec"]["names"]["shortNames"] == ["acj"]
    alpha, beta = crd["spec"]["versions"]
    assert (alpha["name"], alpha["storage"], beta["name"], beta["storage"]) == (
        "v1alpha1",
        True,
        "v1beta1",
        False,
    )  # both served, v1alpha1 stores (what controllers read; docs/api.md)
    assert alpha["additionalPrinterColumns"] == beta["additionalPrinterColumns"]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    version = alpha
    columns = [(c["name"], c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("Schedule", "string", ".spec.schedule"),
        ("Type", "string", ".status.type"),
        ("LastScheduleTime", "date", ".status.lastScheduleTime"),
        ("AGE", "date", ".metadata.creationTimestamp"),
    ]
    assert version["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"] == ["schedule", "template"]


def test_seed_example_is_accepted():
    blocks = re.findall(r"```\n(.*?)```", SEED.read_text(), re.S)
    docs = [yaml.safe_load(b) for b in blocks if "kind: AdvancedCronJob" in b]
    full = [d for d in docs if (d.get("spec") or {}).get("schedule")]
    assert len(full) == 1
    schema = build_crd(acj.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(full[0], schema).ok
    assert _errors(full[0]) == []
    assert check(_parsed(full[0]).to_dict(), schema).ok
