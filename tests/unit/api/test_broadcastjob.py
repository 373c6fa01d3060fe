"""BroadcastJob: upstream's defaults, the validating webhook's rules, the CRD, and the seed YAML."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kruise.api import broadcastjob as bcj
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

SEED = Path("/work/shared/reference/seeds/002_4051790c1ba74477.txt")

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "BroadcastJob",
    "metadata": {"name": "bcj-demo", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "counter", "image": "busybox", "command": ["/bin/sh", "-c", "echo hi"]}
                ],
            }
        }
    },
}


def _obj(**spec_changes) -> dict:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    return obj


def _errors(obj: dict, inject_template_defaults: bool = True) -> list[str]:
    job = bcj.BroadcastJob.model_validate(obj)
    bcj.set_defaults(job, inject_template_defaults)
    return [str(e) for e in bcj.validate(job)]


def test_defaults_match_upstream():
    job = bcj.BroadcastJob.model_validate(BASE)
    bcj.set_defaults(job)
    spec = job.to_dict()["spec"]
    assert spec["parallelism"] == 2147483647
    assert spec["completionPolicy"] == {"type": "Always"}
    assert spec["failurePolicy"] == {"type": "FailFast"}
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["dnsPolicy"] == "ClusterFirst"
    assert pod["containers"][0]["imagePullPolicy"] == "Always"


def test_user_values_are_kept():
    obj = _obj(
        parallelism="50%",
        completionPolicy={"type": "Never"},
        failurePolicy={"type": "Pause", "restartLimit": 2},
    )
    job = bcj.BroadcastJob.model_validate(obj)
    bcj.set_defaults(job)
    spec = job.to_dict()["spec"]
    assert spec["parallelism"] == "50%"
    assert spec["completionPolicy"] == {"type": "Never"}
    assert spec["failurePolicy"] == {"type": "Pause", "restartLimit": 2}


def test_empty_restart_policy_becomes_always_first_and_is_rejected_like_upstream():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["template"]["spec"]["restartPolicy"]
    assert _errors(obj) == [
        'spec.template.spec.restartPolicy: Invalid value: "Always": '
        "pod restartPolicy can only be Never or OnFailure"
    ]


def test_without_template_defaults_restart_policy_defaults_to_on_failure():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["template"]["spec"]["restartPolicy"]
    job = bcj.BroadcastJob.model_validate(obj)
    bcj.set_defaults(job, inject_template_defaults=False)
    assert job.spec.template["spec"]["restartPolicy"] == "OnFailure"
    assert bcj.validate(job) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {
                "completionPolicy": {
                    "type": "Always",
                    "ttlSecondsAfterFinished": 30,
                    "activeDeadlineSeconds": 10,
                }
            },
            [],
        ),
        (
            {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 30}},
            [
                "spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 30: "
                "ttlSecondsAfterFinished can just work with Always CompletionPolicyType"
            ],
        ),
        (
            {"completionPolicy": {"type": "Never", "activeDeadlineSeconds": 10}},
            [
                "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 10: "
                "activeDeadlineSeconds can just work with Always CompletionPolicyType"
            ],
        ),
    ],
)
def test_completion_policy_rules(change, expected):
    assert _errors(_obj(**change)) == expected


@pytest.mark.parametrize("restart_policy", ["Never", "OnFailure"])
def test_job_restart_policies_are_allowed(restart_policy):
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["spec"]["restartPolicy"] = restart_policy
    assert _errors(obj) == []


@pytest.mark.parametrize("label", ["broadcastjob-name", "broadcastjob-controller-uid"])
def test_controller_labels_may_not_be_preset(label):
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["metadata"] = {"labels": {label: "x"}}
    errors = _errors(obj)
    assert len(errors) == 1
    assert errors[0].startswith("spec.template.metadata.labels: Invalid value: ")
    assert errors[0].endswith(
        '"broadcastjob-name" and "broadcastjob-controller-uid" are not allowed to preset in pod labels'
    )


def test_pod_template_is_validated():
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["spec"]["containers"] = []
    assert any(e.startswith("spec.template.spec.containers") for e in _errors(obj))


@pytest.mark.parametrize("restart_policy", ["Always", "Sometimes"])
def test_other_restart_policies_are_rejected(restart_policy):
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["spec"]["restartPolicy"] = restart_policy
    assert (
        f'spec.template.spec.restartPolicy: Invalid value: "{restart_policy}": '
        "pod restartPolicy can only be Never or OnFailure"
    ) in _errors(obj)


@pytest.mark.parametrize("name", ["bcj-demo", "BCJ1", "a", "9-9", "x" * 63])
def test_names_of_letters_digits_and_dashes_up_to_63_are_accepted(name):
    obj = copy.deepcopy(BASE)
    obj["metadata"]["name"] = name
    assert _errors(obj) == []


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (
            {"name": "bcj.demo"},
            [
                'metadata.name: Invalid value: "bcj.demo": BroadcastJob name must consist of alphanumeric '
                "characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')"
            ],
        ),
        (
            {"name": "b" * 64},
            [f'metadata.name: Invalid value: "{"b" * 64}": must be no more than 63 characters'],
        ),
        (
            {"generateName": "bcj_"},
            [
                'metadata.generateName: Invalid value: "bcj_": BroadcastJob name must consist of '
                "alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is "
                "'^[a-zA-Z0-9\\-]+$')"
            ],
        ),
        ({}, ["metadata.name: Required value: name or generateName is required"]),
    ],
)
def test_names_outside_upstreams_rule_are_rejected(meta, expected):
    obj = copy.deepcopy(BASE)
    obj["metadata"] = {"namespace": "default", **meta}
    assert _errors(obj) == expected


def test_crd_metadata_and_printer_columns():
    crd = build_crd(bcj.CRD)
    assert crd["metadata"]["name"] == "broadcastjobs.apps.kruise.io"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["shortNames"] == ["bcj"]
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
    assert version["subresources"] == {"status": {}}
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("Desired", ".status.desired"),
        ("Active", ".status.active"),
        ("Succeeded", ".status.succeeded"),
        ("Failed", ".status.failed"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


def _seed_objects(kind: str) -> list[dict]:
    blocks = re.findall(r"```\n(.*?)```", SEED.read_text(), re.S)
    found = []
    for block in blocks:
        try:
            doc = yaml.safe_load(block)
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and doc.get("kind") == kind:
            found.append(doc)
    return found


def test_seed_examples_are_accepted():
    """The full example is accepted as is; the completionPolicy fragments are accepted on top of it."""
    seeds = _seed_objects("BroadcastJob")
    full = [s for s in seeds if (s.get("spec") or {}).get("template")]
    fragments = [s for s in seeds if not (s.get("spec") or {}).get("template")]
    assert len(full) == 1 and len(fragments) == 3
    schema = build_crd(bcj.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for fragment in fragments:
        obj = copy.deepcopy(full[0])
        obj["spec"].update(fragment["spec"])
        for candidate in (full[0], obj):
            assert check(candidate, schema).ok
            assert _errors(candidate) == []
            job = bcj.BroadcastJob.model_validate(candidate)
            bcj.set_defaults(job)
            assert check(job.to_dict(), schema).ok
