# ruff: noqa: E501  (exact apiserver messages read best unsplit in the tables below)
"""SidecarSet defaults, validation (own rules, update rules, conflicts) and seed YAML acceptance."""

import copy

import pytest

from kruise.api import sidecarset
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check
from kruise.api.sidecarset import SidecarSet


def make(name: str = "log", **spec_overrides) -> dict:
    spec = {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "999d"]}],
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": spec,
    }


def defaulted(data: dict) -> SidecarSet:
    obj = SidecarSet.model_validate(data)
    sidecarset.set_defaults(obj)
    return obj


def test_defaults():
    spec = defaulted(
        make(
            initContainers=[{"name": "init", "image": "busybox:latest"}],
            patchPodMetadata=[{"annotations": {"a": "b"}}],
        )
    ).to_dict()["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 0}
    assert spec["revisionHistoryLimit"] == 10
    container = spec["containers"][0]
    assert container["podInjectPolicy"] == "BeforeAppContainer"
    assert container["upgradeStrategy"] == {"upgradeType": "ColdUpgrade"}
    assert container["shareVolumePolicy"] == {"type": "disabled"}
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["command"] == ["sleep", "999d"]
    init = spec["initContainers"][0]
    assert init["podInjectPolicy"] == "AfterAppContainer"
    assert init["imagePullPolicy"] == "Always"
    assert spec["patchPodMetadata"] == [{"annotations": {"a": "b"}, "patchPolicy": "Retain"}]


def test_revision_policy_defaults_to_always():
    spec = defaulted(make(injectionStrategy={"revision": {"customVersion": "v1"}})).to_dict()["spec"]
    assert spec["injectionStrategy"] == {"revision": {"customVersion": "v1", "policy": "Always"}}


def test_valid():
    assert sidecarset.validate(defaulted(make())) == []


def test_native_sidecar_is_valid_only_with_not_update():
    """Upstream refuses RollingUpdate (the default) for a SidecarSet carrying an initContainer with
    restartPolicy Always: it never upgrades native sidecars in place (openkruise/kruise#1671, wontfix)."""
    native = {
        "name": "proxy",
        "image": "envoy:v1",
        "restartPolicy": "Always",
        "readinessProbe": {"exec": {"command": ["true"]}},
        "lifecycle": {"preStop": {"exec": {"command": ["true"]}}},
    }
    not_update = make(updateStrategy={"type": "NotUpdate"}, initContainers=[native])
    assert sidecarset.validate(defaulted(not_update)) == []
    rolling = make(initContainers=[native])
    assert [str(e) for e in sidecarset.validate(defaulted(rolling))] == [
        "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported."
    ]
    switched = copy.deepcopy(not_update)
    switched["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    assert [str(e) for e in sidecarset.validate(defaulted(switched), defaulted(not_update))] == [
        "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported."
    ]


INVALID = [
    ({"selector": None}, ["spec.selector: Required value: no selector defined for SidecarSet"]),
    ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is not valid for sidecarset."]),
    (
        {"namespace": "a", "namespaceSelector": {"matchLabels": {"x": "y"}}},
        [
            "spec.namespace, namespaceSelector: Required value: namespace and namespaceSelector are mutually exclusive"
        ],
    ),
    ({"containers": []}, ["spec: Required value: no initContainer or container defined for SidecarSet"]),
    (
        {"containers": [{"name": "s", "image": "i", "podInjectPolicy": "Middle"}]},
        ['spec.container.podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy'],
    ),
    (
        {"containers": [{"name": "s", "image": "i"}, {"name": "s", "image": "j"}]},
        ['spec.containers[1].name: Duplicate value: "s"'],
    ),
    (
        {"updateStrategy": {"partition": 1, "selector": {"matchLabels": {"a": "b"}}}},
        [
            'updateStrategy: Invalid value: {"maxUnavailable":1,"partition":1,"selector":{"matchLabels":{"a":"b"}},"type":"RollingUpdate"}: Partition and Selector cannot be used together'
        ],
    ),
    (
        {"updateStrategy": {"maxUnavailable": "5"}},
        [
            "spec.updateStrategy.maxUnavailable: Invalid value: \"5\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
        ],
    ),
    (
        {"injectionStrategy": {"revision": {"policy": "Always"}}},
        [
            'revision: Invalid value: {"policy":"Always"}: revisionName and customVersion cannot be empty simultaneously'
        ],
    ),
    (
        {"patchPodMetadata": [{"annotations": {"a": "1"}}, {"annotations": {"a": "2"}}]},
        ["spec.patchPodMetadata: Required value: patch annotation[a] already exist"],
    ),
    (
        {"initContainers": [{"name": "native", "image": "i", "restartPolicy": "Always"}]},
        [
            "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported."
        ],
    ),
    (
        {
            "updateStrategy": {"type": "NotUpdate"},
            "initContainers": [{"name": "once", "image": "i", "restartPolicy": "OnFailure"}],
        },
        ['spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ),
    (
        {
            "containers": [
                {"name": "sidecar", "image": "busybox:1.36", "restartPolicy": "Always"},
            ]
        },
        ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"],
    ),
    (
        {
            "initContainers": [
                {
                    "name": "setup",
                    "image": "i",
                    "readinessProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {"postStart": {"exec": {"command": ["true"]}}},
                }
            ]
        },
        [
            "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always",
            "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
        ],
    ),
]


def transfer_from(field_path: str, api_version: str | None = None) -> dict:
    ref = (
        {"fieldPath": field_path}
        if api_version is None
        else {"fieldPath": field_path, "apiVersion": api_version}
    )
    container = {
        "name": "s",
        "image": "i",
        "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": ref}, "envNames": ["A"]}],
    }
    return {"containers": [container]}


INVALID += [
    (
        transfer_from("metadata.name"),
        [
            '[0].transferEnv.fieldRef.fieldPath: Invalid value: "metadata.name": error converting fieldPath: field label not supported: metadata.name'
        ],
    ),
    (
        transfer_from("spec.containers['x']"),
        [
            "[0].transferEnv.fieldRef.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field path not supported: spec.containers"
        ],
    ),
    (
        transfer_from("metadata.labels['biz']", "v2"),
        [
            "[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.labels['biz']\": error converting fieldPath: unsupported pod version: v2"
        ],
    ),
    (
        transfer_from("metadata.labels['bad key']"),
        [
            "[0].transferEnv.fieldRef: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ],
    ),
]


def test_transfer_env_from_a_label_or_annotation_key_is_valid():
    """Upstream e2e "sidecarSet inject pod sidecar container transfer Envs with downward API by
    metadata.labels" / "... by metadata.annotations": the source container named by a pod label or
    annotation; apiVersion defaults to v1, an annotation key is checked lower-cased."""
    for path in ("metadata.labels['biz']", "metadata.annotations['Biz.Example.com/app']"):
        obj = defaulted(make(**transfer_from(path)))
        assert sidecarset.validate(obj) == [], path


@pytest.mark.parametrize(("overrides", "messages"), INVALID)
def test_invalid(overrides, messages):
    assert [str(e) for e in sidecarset.validate(defaulted(make(**overrides)))] == messages


def test_name_rules():
    errs = [str(e) for e in sidecarset.validate(defaulted(make(name="bad.name")))]
    assert errs == [
        "metadata.name: Invalid value: \"bad.name\": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')"
    ]


def test_update_keeps_upgrade_type_and_container_names():
    old = defaulted(make())
    hot = make()
    hot["spec"]["containers"][0]["upgradeStrategy"] = {"upgradeType": "HotUpgrade"}
    assert [str(e) for e in sidecarset.validate(defaulted(hot), old)] == [
        'spec.containers.upgradeStrategy.upgradeType: Invalid value: "sidecar": container sidecar upgradeType is immutable'
    ]
    renamed = make(containers=[{"name": "other", "image": "busybox"}])
    assert [str(e) for e in sidecarset.validate(defaulted(renamed), old)] == [
        'spec.containers.name: Invalid value: "other": container other is not found'
    ]


def test_conflicts_with_overlapping_sidecarsets():
    other = defaulted(
        make(
            name="other",
            volumes=[{"name": "logs", "emptyDir": {}}],
            patchPodMetadata=[{"annotations": {"k": "v"}, "patchPolicy": "Overwrite"}],
        )
    )
    mine = defaulted(
        make(
            volumes=[{"name": "logs", "hostPath": {"path": "/var/log"}}],
            patchPodMetadata=[{"annotations": {"k": "w"}, "patchPolicy": "MergePatchJson"}],
        )
    )
    errs = [str(e) for e in sidecarset.validate(mine, others=[other, mine])]
    assert errs == [
        'spec.containers: Invalid value: "sidecar": container sidecar already exist in other',
        'spec.volumes: Invalid value: "logs": volume logs is in conflict with sidecarset other',
        'spec.patchPodMetadata: Invalid value: "k": annotation k is in conflict with sidecarset other',
    ]
    disjoint = defaulted(make(name="db", selector={"matchLabels": {"app": "db"}}))
    assert sidecarset.validate(mine, others=[disjoint]) == []
    other_ns = defaulted(make(name="ns", namespace="a"))
    mine_ns = defaulted(make(namespace="b"))
    assert sidecarset.validate(mine_ns, others=[other_ns]) == []


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ({"matchLabels": {"a": "1"}}, {"matchLabels": {"a": "2"}}, False),
        ({"matchLabels": {"a": "1"}}, {"matchLabels": {"b": "2"}}, True),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
            {"matchLabels": {"a": "2"}},
            True,
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            False,
        ),
        (
            {"matchLabels": {"a": "1"}},
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
            False,
        ),
    ],
)
def test_selector_overlap(first, second, overlap):
    from kruise.api.common import LabelSelector

    a, b = LabelSelector.model_validate(first), LabelSelector.model_validate(second)
    assert sidecarset.selectors_overlap(a, b) is overlap
    assert sidecarset.selectors_overlap(b, a) is overlap


def test_seed_yaml(seeds_by_kind):
    """Applyable seeds pass; the field-reference template ("disabled | enabled", `Name:`) is rejected by name,
    as upstream rejects it; update-strategy snippets are merged onto the first example."""
    schema = build_crd(sidecarset.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    seeds = seeds_by_kind("SidecarSet")
    base = seeds[0]
    accepted = 0
    for data in seeds:
        if "containers" not in data["spec"]:
            data = {**base, "spec": {**base["spec"], **data["spec"]}}
        report = check(data, schema)
        assert not report.errors, report
        errs = [str(e) for e in sidecarset.validate(defaulted(copy.deepcopy(data)))]
        if "disabled | enabled" in str(data):
            assert errs == [
                'spec.container.shareVolumePolicy: Invalid value: {"type":"disabled | enabled"}: unsupported share volume policy',
                "spec.volumes[0].name: Required value",
                'spec.containers[0].volumeMounts[0].name: Not found: "nginx.conf"',
            ]
        else:
            assert errs == [], data["metadata"]["name"]
            assert check(defaulted(copy.deepcopy(data)).to_dict(), schema).ok
            accepted += 1
    assert accepted >= 3
