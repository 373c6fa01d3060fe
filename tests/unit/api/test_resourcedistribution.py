"""ResourceDistribution: the validating webhook's rules (minus the dry-run create) and the CRD."""

import copy

import pytest

from kruise.api import resourcedistribution as rd
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ResourceDistribution",
    "metadata": {"name": "share-secret"},
    "spec": {
        "resource": {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "pull-secret"},
            "type": "Opaque",
            "data": {"token": "c2VjcmV0"},
        },
        "targets": {
            "includedNamespaces": {"list": [{"name": "team-a"}, {"name": "team-b"}]},
            "namespaceLabelSelector": {"matchLabels": {"group": "x"}},
        },
    },
}


def _parse(obj: dict) -> rd.ResourceDistribution:
    return rd.ResourceDistribution.model_validate(obj)


def _errors(mutate=None, old: dict | None = None) -> list[str]:
    obj = copy.deepcopy(BASE)
    if mutate:
        mutate(obj)
    return [str(e) for e in rd.validate(_parse(obj), _parse(old) if old else None)]


def _set(path: str, value):
    def mutate(obj):
        target = obj
        *parents, last = path.split(".")
        for key in parents:
            target = target[key]
        target[last] = value

    return mutate


def test_valid_object_and_round_trip_keep_the_resource_unchanged():
    assert _errors() == []
    assert _parse(BASE).to_dict()["spec"] == BASE["spec"]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_set("spec.resource", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}), []),
        (_set("spec.resource", {}), ["spec: Invalid value: null: empty resource is not allowed"]),
        (
            _set("spec.resource", {"apiVersion": "v1", "metadata": {"name": "c"}}),
            [
                "spec: Internal error: failed to deserialize resource, please check your spec.resource, "
                'err Object \'Kind\' is missing in \'{"apiVersion":"v1","metadata":{"name":"c"}}\''
            ],
        ),
        (
            _set("spec.resource", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
            [
                "spec.resource: Invalid value: "
                '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}: '
                "unknown or unsupported resource GroupKind, only support [Secret ConfigMap]"
            ],
        ),
        (
            _set("spec.targets.excludedNamespaces", {"list": [{"name": "team-b"}, {"name": "team-a"}]}),
            [
                "spec.targets: Invalid value: "
                '{"excludedNamespaces":{"list":[{"name":"team-b"},{"name":"team-a"}]},'
                '"includedNamespaces":{"list":[{"name":"team-a"},{"name":"team-b"}]},'
                '"namespaceLabelSelector":{"matchLabels":{"group":"x"}}}: '
                "ambiguous targets because namespace "
                "[team-b team-a] is in both IncludedNamespaces.List and ExcludedNamespaces.List"
            ],
        ),
        (
            _set(
                "spec.targets.namespaceLabelSelector", {"matchExpressions": [{"key": "a", "operator": "In"}]}
            ),
            [
                "spec.targets.namespaceLabelSelector: Invalid value: "
                '{"matchExpressions":[{"key":"a","operator":"In"}]}: labelSelectorAsSelector error: '
                "Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (_set("metadata.name", "Bad_Name"), None),
    ],
)
def test_rules(mutate, expected):
    errors = _errors(mutate)
    if expected is None:
        assert len(errors) == 1 and errors[0].startswith(
            'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123'
        )
    else:
        assert errors == expected


def test_bad_namespace_names_are_reported_per_list():
    errors = _errors(_set("spec.targets.includedNamespaces", {"list": [{"name": "Team_A"}]}))
    assert len(errors) == 1
    assert errors[0].startswith(
        'spec.targets.includedNamespaces: Invalid value: {"list":[{"name":"Team_A"}]}: '
    )
    assert "RFC 1123 label" in errors[0]


def test_update_may_not_change_resource_identity():
    assert _errors(_set("spec.resource.data", {"token": "bmV3"}), old=BASE) == []
    for field, value in (("kind", "ConfigMap"), ("apiVersion", "v2")):

        def mutate(obj, field=field, value=value):
            obj["spec"]["resource"][field] = value

        errors = _errors(mutate, old=BASE)
        if field == "apiVersion":
            assert errors == [
                "spec.resource: Invalid value: null: resource apiVersion, kind, and name are immutable"
            ]
        else:
            assert errors == [
                "spec.resource: Invalid value: null: resource apiVersion, kind, and name are immutable"
            ]
    errors = _errors(_set("spec.resource.metadata", {"name": "other"}), old=BASE)
    assert errors == ["spec.resource: Invalid value: null: resource apiVersion, kind, and name are immutable"]


def test_system_namespaces_are_never_targets():
    targets = _parse(BASE).spec.targets
    assert rd.target_namespace_excluded("kube-system", targets)
    assert rd.target_namespace_excluded("kube-public", targets)
    assert not rd.target_namespace_excluded("team-a", targets)


def test_crd_is_cluster_scoped_with_upstream_columns_and_accepts_the_object():
    crd = build_crd(rd.CRD)
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["shortNames"] == ["distributor"]
    version, beta = crd["spec"]["versions"]  # v1alpha1; v1beta1 is covered by test_crd_versions
    assert beta.get("additionalPrinterColumns") == version.get("additionalPrinterColumns")
    assert beta.get("subresources") == version.get("subresources")
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("TOTAL", ".status.desired"),
        ("SUCCEED", ".status.succeeded"),
        ("FAILED", ".status.failed"),
    ]
    assert check(BASE, version["schema"]["openAPIV3Schema"]).ok
