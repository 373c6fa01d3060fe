# ruff: noqa: E501  (exact apiserver messages read best unsplit in the tables below)
"""Advanced DaemonSet defaults, validation and seed YAML acceptance."""

import copy

import pytest

from kruise.api import daemonset
from kruise.api.crdgen import build_crd
from kruise.api.daemonset import DaemonSet
from kruise.api.schemacheck import check


def make(**spec_overrides) -> dict:
    spec = {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {
            "metadata": {"labels": {"app": "agent"}},
            "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}]},
        },
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "a"},
        "spec": spec,
    }


def defaulted(data: dict) -> DaemonSet:
    obj = DaemonSet.model_validate(data)
    daemonset.set_defaults(obj)
    return obj


def test_defaults():
    spec = defaulted(make()).to_dict()["spec"]
    assert spec["burstReplicas"] == 250
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0},
    }
    assert "restartPolicy" not in spec["template"]["spec"]


@pytest.mark.parametrize(
    ("rolling", "expected"),
    [
        (
            {"rollingUpdateType": "Surging"},
            {"rollingUpdateType": "Standard", "maxUnavailable": 0, "maxSurge": 1},
        ),
        ({"maxSurge": "10%"}, {"rollingUpdateType": "Standard", "maxSurge": "10%"}),
        (
            {"rollingUpdateType": "InPlaceIfPossible", "partition": 2},
            {"rollingUpdateType": "InPlaceIfPossible", "partition": 2, "maxUnavailable": 1, "maxSurge": 0},
        ),
    ],
)
def test_rolling_update_defaults(rolling, expected):
    spec = defaulted(make(updateStrategy={"rollingUpdate": rolling})).to_dict()["spec"]
    assert spec["updateStrategy"]["rollingUpdate"] == expected


def test_valid():
    assert daemonset.validate(defaulted(make())) == []


INVALID = [
    (
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
        ["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}},
        [
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
        ],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "120%"}}},
        [
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "120%": must not be greater than 100%'
        ],
    ),
    (
        {
            "updateStrategy": {
                "rollingUpdate": {
                    "rollingUpdateType": "InPlaceIfPossible",
                    "maxUnavailable": 0,
                    "maxSurge": 1,
                }
            }
        },
        ["spec.updateStrategy.rollingUpdate.maxSurge: Required value: must be 0 for InPlaceIfPossible type"],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Fast"}}},
        [
            'spec.updateStrategy.rollingUpdate.rollingUpdate.type: Unsupported value: "Fast": supported values: "Standard", "Surging", "InPlaceIfPossible"'
        ],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"partition": -1}}},
        [
            "spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"
        ],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"partition": "150%"}}},
        [
            'spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: "150%": must not be greater than 100%'
        ],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"partition": "half"}}},
        [
            "spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: \"half\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
        ],
    ),
    (
        {"updateStrategy": {"type": "Recreate"}},
        [
            'spec.updateStrategy: Unsupported value: {"type":"Recreate"}: supported values: "RollingUpdate", "OnDelete"'
        ],
    ),
    (
        {"minReadySeconds": -1},
        ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
    ),
    ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]),
    (
        {"selector": {"matchLabels": {"app": "x"}}},
        [
            'spec.template.metadata.labels: Invalid value: {"app":"agent"}: `selector` does not match template `labels`'
        ],
    ),
    (
        {"lifecycle": {"inPlaceUpdate": {"labelsHandler": {"a": "b"}}}},
        ["spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet"],
    ),
]


def test_partition_is_int_or_percent():
    """1.9: partition is int-or-string in v1alpha1 too; a percentage is scaled against desired pods."""
    for partition in (3, "30%", "100%"):
        obj = defaulted(make(updateStrategy={"rollingUpdate": {"partition": partition}}))
        assert obj.spec.update_strategy.rolling_update.partition == partition
        assert daemonset.validate(obj) == []
    schema = build_crd(daemonset.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rolling = schema["properties"]["spec"]["properties"]["updateStrategy"]["properties"]["rollingUpdate"]
    assert rolling["properties"]["partition"]["x-kubernetes-int-or-string"] is True


@pytest.mark.parametrize(("overrides", "messages"), INVALID)
def test_invalid(overrides, messages):
    assert [str(e) for e in daemonset.validate(defaulted(make(**overrides)))] == messages


def test_restart_policy_must_be_always():
    data = make()
    data["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert [str(e) for e in daemonset.validate(defaulted(data))] == [
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
    ]


def test_update_forbids_selector_change():
    old = defaulted(make())
    assert daemonset.validate(defaulted(make(minReadySeconds=5)), old) == []
    changed = make(selector={"matchExpressions": [{"key": "app", "operator": "Exists"}]})
    errs = [str(e) for e in daemonset.validate(defaulted(changed), old)]
    assert errs == [
        "spec: Forbidden: updates to daemonset spec for fields other than 'BurstReplicas', 'template', 'lifecycle',  'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden"
    ]


def test_seed_yaml_is_accepted(seeds_by_kind):
    schema = build_crd(daemonset.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    seeds = seeds_by_kind("DaemonSet")
    assert seeds
    for data in seeds:
        report = check(data, schema)
        assert report.ok, (data["metadata"]["name"], report)
        obj = defaulted(copy.deepcopy(data))
        assert daemonset.validate(obj) == [], data["metadata"]["name"]
        assert check(obj.to_dict(), schema).ok
