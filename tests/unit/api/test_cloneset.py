"""CloneSet defaults, validation (create and update) and seed YAML acceptance."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api import cloneset
from kruise.api.cloneset import CloneSet
from kruise.api.common import scaled_value_round_up
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check


def make(**spec_overrides) -> dict:
    spec = {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
        },
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "demo"},
        "spec": spec,
    }


def defaulted(data: dict) -> CloneSet:
    obj = CloneSet.model_validate(data)
    cloneset.set_defaults(obj)
    return obj


def test_defaults_match_upstream():
    obj = defaulted(make(replicas=None))
    spec = obj.to_dict()["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {
        "type": "ReCreate",
        "partition": 0,
        "maxUnavailable": "20%",
        "maxSurge": 0,
    }
    assert spec["scaleStrategy"] == {}
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Always"
    assert pod["dnsPolicy"] == "ClusterFirst"
    assert pod["terminationGracePeriodSeconds"] == 30
    assert pod["schedulerName"] == "default-scheduler"
    assert pod["securityContext"] == {}
    container = pod["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["terminationMessagePolicy"] == "File"


def test_in_place_types_get_in_place_strategy_and_user_values_are_kept():
    obj = defaulted(
        make(updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": 2, "partition": "50%"})
    )
    strategy = obj.to_dict()["spec"]["updateStrategy"]
    assert strategy == {
        "type": "InPlaceIfPossible",
        "partition": "50%",
        "maxUnavailable": 2,
        "maxSurge": 0,
        "inPlaceUpdateStrategy": {},
    }


def test_defaulting_is_idempotent():
    once = defaulted(make()).to_dict()
    twice = defaulted(copy.deepcopy(once)).to_dict()
    assert once == twice


def test_valid_cloneset_has_no_errors():
    assert cloneset.validate(defaulted(make())) == []


INVALID = [
    ({"replicas": -1}, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ({"selector": None}, ["spec.selector: Required value"]),
    ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is invalid for cloneset"]),
    (
        {"selector": {"matchLabels": {"app": "other"}}},
        [
            'spec.template.metadata.labels: Invalid value: {"app":"demo"}: '
            "`selector` does not match template `labels`"
        ],
    ),
    (
        {"updateStrategy": {"partition": -1}},
        ["spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        {"updateStrategy": {"type": "Rolling"}},
        [
            'spec.updateStrategy.type: Invalid value: "Rolling": '
            "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"
        ],
    ),
    (
        {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}},
        [
            'spec.updateStrategy.maxSurge: Invalid value: "1": '
            "can not use maxSurge with strategy type InPlaceOnly"
        ],
    ),
    (
        {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 0}},
        [
            "spec.updateStrategy.maxUnavailable: Invalid value: 0: "
            "maxUnavailable and maxSurge should not both be less than 1"
        ],
    ),
    (
        {"updateStrategy": {"maxUnavailable": "10"}},
        [
            'spec.updateStrategy.maxUnavailable: Invalid value: "10": failed getValueFromIntOrPercent for '
            "maxUnavailable: invalid value for IntOrString: invalid type: string is not a percentage",
            # upstream goes on with maxUnavailable=0, so the both-below-1 rule fires as well
            'spec.updateStrategy.maxUnavailable: Invalid value: "10": '
            "maxUnavailable and maxSurge should not both be less than 1",
        ],
    ),
    (
        {"updateStrategy": {"scatterStrategy": [{"key": "a", "value": "1"}, {"key": "a", "value": "1"}]}},
        ["spec.updateStrategy.scatterStrategy: Required value: duplicated key=a value=1"],
    ),
    (
        {
            "updateStrategy": {
                "priorityStrategy": {
                    "weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"a": "b"}}}]
                }
            }
        },
        [
            "spec.updateStrategy.priorityStrategy: Required value: "
            "weight must be valid number in the range 1-100"
        ],
    ),
    (
        {"minReadySeconds": 10, "progressDeadlineSeconds": 10},
        ["spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds"],
    ),
    (
        {"scaleStrategy": {"podsToDelete": ["a", "b", "a"]}},
        ['spec.scaleStrategy.podsToDelete: Invalid value: ["a","b","a"]: duplicated items [a]'],
    ),
]


@pytest.mark.parametrize(("overrides", "messages"), INVALID)
def test_invalid_clonesets(overrides, messages):
    obj = defaulted(make(**overrides))
    assert [str(e) for e in cloneset.validate(obj)] == messages


def test_template_rules():
    data = make()
    data["spec"]["template"]["spec"].update(restartPolicy="Never", activeDeadlineSeconds=5)
    data["spec"]["template"]["spec"]["containers"].append({"name": "main", "image": ""})
    errs = [str(e) for e in cloneset.validate(defaulted(data))]
    assert 'spec.template.spec.containers[1].name: Duplicate value: "main"' in errs
    assert "spec.template.spec.containers[1].image: Required value" in errs
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' in errs
    assert (
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in cloneset is not Supported" in errs
    )


def test_update_allows_mutable_fields_and_forbids_selector_change():
    old = defaulted(make())
    new = defaulted(make(replicas=5, updateStrategy={"partition": 2}))
    assert cloneset.validate(new, old) == []
    changed = make(selector={"matchLabels": {"app": "demo", "x": "y"}})
    changed["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    errs = [str(e) for e in cloneset.validate(defaulted(changed), old)]
    assert errs[0].startswith("spec: Forbidden: updates to cloneset spec for fields other than 'replicas'")


def _schema():
    return build_crd(cloneset.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_seed_yaml_is_accepted(seeds_by_kind):
    seeds = seeds_by_kind("CloneSet")
    assert seeds, "the tutorials contain CloneSet examples"
    for data in seeds:
        report = check(data, _schema())
        assert report.ok, (data["metadata"]["name"], report)
        obj = defaulted(copy.deepcopy(data))
        assert cloneset.validate(obj) == [], data["metadata"]["name"]
        assert check(obj.to_dict(), _schema()).ok


def test_volume_mounts_must_name_a_volume_or_claim_template():
    data = make(
        volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]
    )
    data["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/data"},
        {"name": "cache", "mountPath": "/cache"},
    ]
    assert [str(e) for e in cloneset.validate(defaulted(data))] == [
        'spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"'
    ]
    assert defaulted(data).to_dict()["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"


def test_in_place_only_update_may_only_change_images():
    old = defaulted(make(updateStrategy={"type": "InPlaceOnly", "maxUnavailable": 1}))
    image_only = copy.deepcopy(old.to_dict())
    image_only["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert cloneset.validate(defaulted(image_only), old) == []
    with_env = copy.deepcopy(image_only)
    with_env["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    assert [str(e) for e in cloneset.validate(defaulted(with_env), old)] == [
        "spec: Forbidden: only allowed to update images in spec for InPlaceOnly, "
        "but found add /containers/0/env"
    ]


def test_pods_to_delete_must_be_live_pods_of_this_cloneset():
    data = make(scaleStrategy={"podsToDelete": ["mine", "gone", "dying", "foreign", "old"]})
    data["metadata"].update(namespace="ns", uid="uid-1")
    pods = {
        "mine": {"metadata": {"ownerReferences": [{"uid": "uid-1", "controller": True}]}},
        "dying": {"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}},
        "foreign": {"metadata": {"ownerReferences": [{"uid": "uid-2", "controller": True}]}},
    }
    old = defaulted(make(scaleStrategy={"podsToDelete": ["old"]}))
    errs = cloneset.pods_to_delete_errors(
        defaulted(data), old, lambda ns, name: pods.get(name) if ns == "ns" else None
    )
    prefix = "spec.scaleStrategy.podsToDelete: Invalid value: "
    assert [str(e) for e in errs] == [
        prefix + '"dying": find pod dying already terminating',
        prefix + '"foreign": find pod foreign owner is not this CloneSet',
        prefix + '"gone": find pod gone failed: pods "gone" not found',
    ]


_INT_OR_PERCENT = st.one_of(st.integers(0, 50), st.integers(0, 150).map(lambda n: f"{n}%"))


@given(
    replicas=st.integers(0, 40),
    strategy_type=st.sampled_from(["ReCreate", "InPlaceIfPossible", "InPlaceOnly"]),
    max_unavailable=_INT_OR_PERCENT,
    max_surge=_INT_OR_PERCENT,
    partition=_INT_OR_PERCENT,
)
def test_update_strategy_rules_follow_scaled_values(
    replicas, strategy_type, max_unavailable, max_surge, partition
):
    strategy = {
        "type": strategy_type,
        "maxUnavailable": max_unavailable,
        "maxSurge": max_surge,
        "partition": partition,
    }
    errs = cloneset.validate(defaulted(make(replicas=replicas, updateStrategy=strategy)))
    unavailable = scaled_value_round_up(max_unavailable, replicas)
    surge = scaled_value_round_up(max_surge, replicas)
    expected = set()
    if strategy_type == "InPlaceOnly" and surge > 0:
        expected.add("spec.updateStrategy.maxSurge")
    if replicas > 0 and unavailable < 1 and surge < 1:
        expected.add("spec.updateStrategy.maxUnavailable")
    assert {e.field for e in errs} == expected
