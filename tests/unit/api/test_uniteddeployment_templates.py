"""UnitedDeployment subset templates: upstream 1.9's per-kind checks on CREATE and the update rules."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from kruise.api import uniteddeployment as ud
from kruise.api.validation import ErrorType

POD = {
    "metadata": {"labels": {"app": "sample"}},
    "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
}
WORKLOAD = {"metadata": {"labels": {"app": "sample"}}, "spec": {"template": POD}}
ROLLING = {
    "type": "RollingUpdate",
    "rollingUpdate": {"maxUnavailable": 1, "podUpdatePolicy": "InPlaceIfPossible"},
}

# The shapes of upstream's samples (docs/uniteddeployment.md), one per template kind.
TEMPLATES = {
    "statefulSetTemplate": WORKLOAD,
    "advancedStatefulSetTemplate": {**WORKLOAD, "spec": {"template": POD, "updateStrategy": ROLLING}},
    "cloneSetTemplate": {
        **WORKLOAD,
        "spec": {"template": POD, "updateStrategy": {"type": "InPlaceIfPossible"}},
    },
    "deploymentTemplate": WORKLOAD,
}


def _ud(kind: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "sample-ud", "namespace": "default"},
        "spec": {
            "replicas": 6,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "sample"}},
            "template": {kind: copy.deepcopy(TEMPLATES[kind])},
            "topology": {
                "subsets": [
                    {
                        "name": "subset-a",
                        "nodeSelectorTerm": {
                            "matchExpressions": [{"key": "az", "operator": "In", "values": ["zone-a"]}]
                        },
                        "replicas": 2,
                    },
                    {"name": "subset-b", "replicas": "50%"},
                    {"name": "subset-c"},
                ]
            },
        },
    }


def _errors(obj: dict, old: dict | None = None):
    parsed_old = ud.UnitedDeployment.model_validate(old) if old is not None else None
    return ud.validate(ud.UnitedDeployment.model_validate(obj), old=parsed_old)


def _spec(obj: dict, kind: str) -> dict:
    return obj["spec"]["template"][kind]["spec"]


def _pod(obj: dict, kind: str) -> dict:
    return _spec(obj, kind)["template"]


@pytest.mark.parametrize("kind", sorted(TEMPLATES))
def test_upstream_sample_of_each_kind_is_valid(kind):
    assert _errors(_ud(kind)) == []


def _set(kind: str, *keys: str, value: object) -> Callable[[dict], None]:
    def change(obj: dict) -> None:
        target = obj["spec"]["template"][kind]
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        target[keys[-1]] = value

    return change


STS = "spec.template.statefulSetTemplate"
ASTS = "spec.template.advancedStatefulSetTemplate"
DEPLOY = "spec.template.deploymentTemplate"

# (template kind, change, expected: [(type, field, detail fragment)])
CREATE_CASES = [
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "replicas", value=3),
        [(ErrorType.Invalid, f"{STS}.spec.replicas", "replicas in statefulSetTemplate will not be used")],
        id="sts-replicas",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set(
            "statefulSetTemplate",
            "spec",
            "updateStrategy",
            value={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
        ),
        [
            (
                ErrorType.Invalid,
                f"{STS}.spec.updateStrategy.rollingUpdate.partition",
                "partition in statefulSetTemplate will not be used",
            )
        ],
        id="sts-partition",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "metadata", "labels", value={"app": "other"}),
        [(ErrorType.Invalid, f"{STS}.metadata.labels", "`selector` does not match template `labels`")],
        id="sts-workload-labels",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "template", "metadata", value={"labels": {"app": "other"}}),
        [
            (
                ErrorType.Invalid,
                f"{STS}.spec.template.metadata.labels",
                "`selector` does not match template `labels`",
            )
        ],
        id="sts-pod-labels",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set(
            "statefulSetTemplate",
            "spec",
            "template",
            "metadata",
            value={"labels": {"app": "sample", "bad key": "x"}},
        ),
        [
            (
                ErrorType.Invalid,
                f"{STS}.spec.template.labels",
                "name part must consist of alphanumeric characters",
            )
        ],
        id="sts-pod-label-key",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set(
            "statefulSetTemplate",
            "spec",
            "template",
            "metadata",
            value={"labels": {"app": "sample"}, "annotations": {"a/b/c": "x"}},
        ),
        [(ErrorType.Invalid, f"{STS}.spec.template.annotations", "a qualified name must consist of")],
        id="sts-pod-annotation-key",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set(
            "statefulSetTemplate",
            "spec",
            "template",
            "metadata",
            value={"labels": {"app": "sample"}, "annotations": {"big": "x" * (256 * 1024)}},
        ),
        [(ErrorType.TooLong, f"{STS}.spec.template.annotations", "must have at most 262144 bytes")],
        id="sts-pod-annotations-too-long",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "spec", "replicas", value=2),
        [
            (
                ErrorType.Invalid,
                f"{ASTS}.spec.replicas",
                "replicas in advancedStatefulSetTemplate will not be used",
            )
        ],
        id="asts-replicas",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "spec", "updateStrategy", "rollingUpdate", "partition", value=2),
        [
            (
                ErrorType.Invalid,
                f"{ASTS}.spec.updateStrategy.rollingUpdate.partition",
                "partition in advancedStatefulSetTemplate will not be used",
            )
        ],
        id="asts-partition",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "metadata", "labels", value={}),
        # upstream reports an advancedStatefulSetTemplate's own labels under statefulSetTemplate
        [(ErrorType.Invalid, f"{STS}.metadata.labels", "`selector` does not match template `labels`")],
        id="asts-workload-labels",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "spec", "template", "metadata", value={}),
        [
            (
                ErrorType.Invalid,
                f"{ASTS}.spec.template.metadata.labels",
                "`selector` does not match template `labels`",
            )
        ],
        id="asts-pod-labels",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "replicas", value=4),
        [(ErrorType.Invalid, f"{DEPLOY}.spec.replicas", "replicas in deploymentTemplate will not be used")],
        id="deploy-replicas",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "metadata", "labels", value={"app": "other"}),
        [(ErrorType.Invalid, f"{DEPLOY}.metadata.labels", "`selector` does not match template `labels`")],
        id="deploy-workload-labels",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "template", "spec", "restartPolicy", value="Never"),
        [
            (
                ErrorType.NotSupported,
                f"{DEPLOY}.spec.template.spec.restartPolicy",
                'supported values: "Always"',
            )
        ],
        id="deploy-restart-policy",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "template", "spec", "activeDeadlineSeconds", value=30),
        [
            (
                ErrorType.Invalid,
                f"{DEPLOY}.spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        ],
        id="deploy-active-deadline",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "template", "spec", "containers", value=[]),
        [(ErrorType.Required, f"{DEPLOY}.spec.template.spec.containers", "")],
        id="deploy-no-containers",
    ),
    pytest.param(
        "deploymentTemplate",
        _set(
            "deploymentTemplate",
            "spec",
            "template",
            "metadata",
            value={"labels": {"app": "sample"}, "annotations": {"-bad": "x"}},
        ),
        [(ErrorType.Invalid, f"{DEPLOY}.spec.template.metadata.annotations", "name part must consist of")],
        id="deploy-pod-annotation-key",
    ),
]


@pytest.mark.parametrize(("kind", "change", "expected"), CREATE_CASES)
def test_template_spec_rules(kind, change, expected):
    obj = _ud(kind)
    change(obj)
    errors = _errors(obj)
    assert [(e.type, e.field) for e in errors] == [(t, f) for t, f, _ in expected], [str(e) for e in errors]
    for error, (_, _, detail) in zip(errors, expected, strict=True):
        assert detail in error.detail


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        # a partition is only refused under an explicit RollingUpdate type, as upstream reads it
        (
            "statefulSetTemplate",
            _set("statefulSetTemplate", "spec", "updateStrategy", value={"rollingUpdate": {"partition": 1}}),
        ),
        # StatefulSet pod templates get no pod-spec validation (native StatefulSets neither)
        (
            "statefulSetTemplate",
            _set("statefulSetTemplate", "spec", "template", "spec", "restartPolicy", value="Never"),
        ),
        (
            "advancedStatefulSetTemplate",
            _set("advancedStatefulSetTemplate", "spec", "template", "spec", "containers", value=[]),
        ),
        # upstream checks nothing inside a cloneSetTemplate
        ("cloneSetTemplate", _set("cloneSetTemplate", "spec", "replicas", value=5)),
        ("cloneSetTemplate", _set("cloneSetTemplate", "metadata", "labels", value={"app": "other"})),
        # a Deployment pod template without restartPolicy is defaulted to Always before the check
        ("deploymentTemplate", _set("deploymentTemplate", "spec", "strategy", value={"type": "Recreate"})),
    ],
)
def test_accepted_as_upstream(kind, change):
    obj = _ud(kind)
    change(obj)
    assert [str(e) for e in _errors(obj)] == []


def _adaptive(obj: dict, reserve: bool) -> None:
    obj["spec"]["topology"]["scheduleStrategy"] = {
        "type": "Adaptive",
        "adaptive": {"reserveUnschedulablePods": reserve},
    }
    obj["spec"]["topology"]["subsets"] = [{"name": "subset-a", "maxReplicas": 3}, {"name": "subset-b"}]


@pytest.mark.parametrize(
    ("kind", "allowed"),
    [
        ("statefulSetTemplate", False),
        ("advancedStatefulSetTemplate", False),
        ("cloneSetTemplate", True),
        ("deploymentTemplate", True),
    ],
)
def test_reserved_rescheduling_needs_a_stateless_template(kind, allowed):
    obj = _ud(kind)
    _adaptive(obj, reserve=True)
    errors = [str(e) for e in _errors(obj)]
    if allowed:
        assert errors == []
    else:
        assert errors == [
            'spec.topology.scheduleStrategy: Invalid value: {"adaptive":{"reserveUnschedulablePods":true},'
            '"type":"Adaptive"}: only stateless workloads (Deployment and CloneSet) are supported by '
            "reserved rescheduling"
        ]
    _adaptive(obj, reserve=False)
    assert [str(e) for e in _errors(obj)] == []


def test_adaptive_strategy_forbids_subset_replicas():
    obj = _ud("cloneSetTemplate")
    obj["spec"]["topology"]["scheduleStrategy"] = {"type": "Adaptive"}
    assert [str(e) for e in _errors(obj)] == [
        f"spec.topology.subsets[{i}].replicas: Forbidden: "
        "specify replicas use minReplicas/maxReplicas to enable adaptive strategy"
        for i in (0, 1)
    ]


def test_invalid_selector_skips_the_template_checks():
    obj = _ud("deploymentTemplate")
    obj["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Near"}]}
    assert [str(e) for e in _errors(obj)] == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Near"}]}',
    ]


STS_FORBIDDEN = (
    f"{STS}.spec: Forbidden: updates to statefulsetTemplate spec for fields other than 'template', "
    "and 'updateStrategy' are forbidden"
)
ASTS_FORBIDDEN = (
    f"{ASTS}.spec: Forbidden: updates to advancedStatefulsetTemplate spec for fields other than "
    "'template', and 'updateStrategy' are forbidden"
)

# (template kind, change applied to the new object, expected update errors)
UPDATE_CASES = [
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "serviceName", value="svc"),
        [STS_FORBIDDEN],
        id="sts-service-name",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "volumeClaimTemplates", value=[{"metadata": {"name": "data"}}]),
        [STS_FORBIDDEN],
        id="sts-claims",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "revisionHistoryLimit", value=3),
        [STS_FORBIDDEN],
        id="sts-history",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "minReadySeconds", value=5),
        [STS_FORBIDDEN],
        id="sts-min-ready",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set(
            "statefulSetTemplate",
            "spec",
            "template",
            "spec",
            "containers",
            value=[{"name": "nginx", "image": "nginx:1.27"}],
        ),
        [],
        id="sts-pod-template",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "updateStrategy", value={"type": "OnDelete"}),
        [],
        id="sts-strategy",
    ),
    # Go's typed comparison: explicit zero values and empty lists equal leaving them out
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "podManagementPolicy", value=""),
        [],
        id="sts-zero-value",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "volumeClaimTemplates", value=[]),
        [],
        id="sts-empty-list",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "metadata", "annotations", value={"a": "b"}),
        [],
        id="sts-metadata",
    ),
    pytest.param(
        "statefulSetTemplate",
        _set("statefulSetTemplate", "spec", "replicas", value=-1),
        [f"{STS}.spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        id="sts-negative-replicas",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "spec", "podManagementPolicy", value="Parallel"),
        [ASTS_FORBIDDEN],
        id="asts-pod-management",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set(
            "advancedStatefulSetTemplate",
            "spec",
            "updateStrategy",
            "rollingUpdate",
            "maxUnavailable",
            value="50%",
        ),
        [],
        id="asts-strategy",
    ),
    pytest.param(
        "advancedStatefulSetTemplate",
        _set("advancedStatefulSetTemplate", "spec", "replicas", value=-2),
        [f"{ASTS}.spec.replicas: Invalid value: -2: must be greater than or equal to 0"],
        id="asts-negative-replicas",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "minReadySeconds", value=9),
        [],
        id="deploy-any-field",
    ),
    pytest.param(
        "deploymentTemplate",
        _set("deploymentTemplate", "spec", "replicas", value=-1),
        [f"{DEPLOY}.spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        id="deploy-negative-replicas",
    ),
    pytest.param(
        "cloneSetTemplate",
        _set("cloneSetTemplate", "spec", "scaleStrategy", value={"maxUnavailable": 1}),
        [],
        id="cloneset-any-field",
    ),
]


@pytest.mark.parametrize(("kind", "change", "expected"), UPDATE_CASES)
def test_template_update_rules(kind, change, expected):
    old = _ud(kind)
    new = copy.deepcopy(old)
    change(new)
    errors = ud.validate_update(
        ud.UnitedDeployment.model_validate(new), ud.UnitedDeployment.model_validate(old)
    )
    assert [str(e) for e in errors] == expected


@pytest.mark.parametrize(
    ("old_kind", "new_kind"),
    [("statefulSetTemplate", "deploymentTemplate"), ("cloneSetTemplate", "advancedStatefulSetTemplate")],
)
def test_switching_template_kind_is_not_checked_on_update(old_kind, new_kind):
    assert _errors(_ud(new_kind), old=_ud(old_kind)) == []


def test_validate_with_old_runs_create_and_update_rules():
    old = _ud("statefulSetTemplate")
    new = copy.deepcopy(old)
    _spec(new, "statefulSetTemplate")["serviceName"] = "svc"
    _spec(new, "statefulSetTemplate")["replicas"] = 2
    assert [str(e) for e in _errors(new, old=old)] == [
        f"{STS}.spec.replicas: Invalid value: 2: replicas in statefulSetTemplate will not be used",
        STS_FORBIDDEN,
    ]
