"""PersistentVolumeClaim update rules: ValidatePersistentVolumeClaimUpdate and the resize plugin (1.33)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.claims import (
    RESIZE_RULE,
    SPEC_RULE,
    admit_claim_resize,
    admit_default_class,
    validate_claim_update,
)


def claim(
    storage: str = "1Gi", *, phase: str = "Bound", capacity: str | None = "1Gi", sc: str | None = "fast"
):
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
        "volumeMode": "Filesystem",
    }
    if sc is not None:
        spec["storageClassName"] = sc
    status: dict[str, Any] = {"phase": phase}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    return {"metadata": {"name": "data-0"}, "spec": spec, "status": status}


def grown(old: dict[str, Any], storage: str) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"]["resources"]["requests"]["storage"] = storage
    return new


def messages(causes: list[dict[str, str]]) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in causes]


CLASSES = {"fast": {"allowVolumeExpansion": True}, "fixed": {"allowVolumeExpansion": False}, "plain": {}}


def lookup(name: str) -> dict[str, Any] | None:
    return CLASSES.get(name)


def test_bound_claim_may_grow():
    old = claim("1Gi")
    assert validate_claim_update(grown(old, "2Gi"), old) == []
    assert admit_claim_resize(grown(old, "2Gi"), old, lookup) is None


def test_same_size_in_other_units_is_no_change():
    old = claim("1Gi", sc=None)
    assert validate_claim_update(grown(old, "1024Mi"), old) == []
    assert admit_claim_resize(grown(old, "1024Mi"), old, lookup) is None


def test_unbound_claim_spec_is_immutable():
    old = claim("1Gi", phase="Pending", capacity=None)
    causes = validate_claim_update(grown(old, "2Gi"), old)
    assert [c["field"] for c in causes] == ["spec"]
    assert causes[0]["message"].startswith(f"Forbidden: {SPEC_RULE}\n")
    assert "resources" in causes[0]["message"]


def test_resize_of_an_unbound_claim_is_forbidden_by_the_plugin():
    old = claim("1Gi", phase="Pending", capacity=None)
    refusal = admit_claim_resize(grown(old, "2Gi"), old, lookup)
    assert refusal is not None and refusal.code == 403
    assert refusal.message == (
        'persistentvolumeclaims "data-0" is forbidden: Only bound persistent volume claims can be expanded'
    )


def test_shrink_to_capacity_is_refused():
    old = claim("1Gi")
    assert messages(validate_claim_update(grown(old, "512Mi"), old)) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
    ]
    assert messages(validate_claim_update(grown(old, "1Gi"), grown(old, "3Gi"))) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
    ]


def test_shrink_above_capacity_recovers_from_a_failed_expansion():
    old = grown(claim("1Gi"), "3Gi")  # asked for 3Gi, the volume still has 1Gi
    assert validate_claim_update(grown(old, "2Gi"), old) == []
    assert admit_claim_resize(grown(old, "2Gi"), old, lookup) is None  # not a growth


@pytest.mark.parametrize("sc", ["fixed", "plain", "missing", None])
def test_growth_needs_a_class_that_allows_expansion(sc):
    old = claim("1Gi", sc=sc)
    assert validate_claim_update(grown(old, "2Gi"), old) == []
    refusal = admit_claim_resize(grown(old, "2Gi"), old, lookup)
    assert refusal is not None
    assert (refusal.code, refusal.reason) == (403, "Forbidden")
    assert refusal.message == f'persistentvolumeclaims "data-0" is forbidden: {RESIZE_RULE}'


@pytest.mark.parametrize(
    ("path", "value"),
    [(("accessModes",), ["ReadWriteMany"]), (("selector",), {"matchLabels": {"a": "b"}})],
)
def test_other_spec_fields_are_immutable(path, value):
    old = claim()
    new = copy.deepcopy(old)
    new["spec"][path[0]] = value
    causes = validate_claim_update(new, old)
    assert [c["field"] for c in causes] == ["spec"]
    assert path[0] in causes[0]["message"]


def test_volume_mode_is_immutable():
    old = claim()
    new = copy.deepcopy(old)
    new["spec"]["volumeMode"] = "Block"
    assert 'volumeMode: Invalid value: "Block": field is immutable' in messages(
        validate_claim_update(new, old)
    )


def test_volume_name_is_set_once():
    old = claim(phase="Pending", capacity=None)
    bound = copy.deepcopy(old)
    bound["spec"]["volumeName"] = "pvc-1"
    assert validate_claim_update(bound, old) == []
    moved = copy.deepcopy(bound)
    moved["spec"]["volumeName"] = "pvc-2"
    assert [c["field"] for c in validate_claim_update(moved, bound)] == ["spec"]


def test_storage_class_may_be_set_once_from_none():
    old = claim(sc=None)
    new = copy.deepcopy(old)
    new["spec"]["storageClassName"] = "fast"
    assert validate_claim_update(new, old) == []
    changed = copy.deepcopy(new)
    changed["spec"]["storageClassName"] = "slow"
    assert [c["field"] for c in validate_claim_update(changed, new)] == ["spec"]


def test_beta_annotation_is_immutable_and_upgrades_to_the_field():
    old = claim(sc=None)
    old["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "fast"}
    upgraded = copy.deepcopy(old)
    upgraded["spec"]["storageClassName"] = "fast"
    assert validate_claim_update(upgraded, old) == []
    other = copy.deepcopy(old)
    other["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"] = "slow"
    assert messages(validate_claim_update(other, old)) == [
        "metadata.annotations.volume.beta.kubernetes.io/storage-class: "
        'Invalid value: "slow": field is immutable'
    ]


@given(
    old_mi=st.integers(min_value=1, max_value=4096),
    capacity_mi=st.integers(min_value=1, max_value=4096),
    new_mi=st.integers(min_value=1, max_value=8192),
)
def test_size_rules_for_any_sizes(old_mi, capacity_mi, new_mi):
    old = grown(claim(capacity=f"{capacity_mi}Mi"), f"{old_mi}Mi")
    new = grown(old, f"{new_mi}Mi")
    refused = bool(validate_claim_update(new, old))
    assert refused == (new_mi < old_mi and new_mi <= capacity_mi)
    assert (admit_claim_resize(new, old, lookup) is not None) is False  # class "fast" allows it
    old["spec"]["storageClassName"] = new["spec"]["storageClassName"] = "fixed"
    assert (admit_claim_resize(new, old, lookup) is not None) == (new_mi > old_mi)


def storage_class(
    name: str, created: str, default: str | None = "true", beta: bool = False
) -> dict[str, Any]:
    key = (
        "storageclass.beta.kubernetes.io/is-default-class"
        if beta
        else "storageclass.kubernetes.io/is-default-class"
    )
    annotations = {key: default} if default is not None else {}
    return {"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}}


def new_claim(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "datadir-ss-0"}, "spec": {"accessModes": ["ReadWriteOnce"], **spec}}


def test_a_claim_naming_no_class_gets_the_newest_default_one():
    """kind's `standard` is why upstream's class-less claim templates bind; of several defaults the newest
    wins, equal timestamps by name."""
    classes = [
        storage_class("old", "2026-01-01T00:00:00Z"),
        storage_class("zeta", "2026-02-01T00:00:00Z"),
        storage_class("beta", "2026-02-01T00:00:00Z", beta=True),
        storage_class("newest-not-default", "2026-03-01T00:00:00Z", default="false"),
    ]
    c = new_claim()
    admit_default_class(c, classes)
    assert c["spec"]["storageClassName"] == "beta"


@pytest.mark.parametrize(
    "c",
    [
        new_claim(storageClassName="fast"),
        new_claim(storageClassName=""),  # "" is "no class" on purpose
        {"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}}, "spec": {}},
    ],
)
def test_a_claim_that_names_a_class_or_none_on_purpose_keeps_it(c: dict[str, Any]):
    before = copy.deepcopy(c)
    admit_default_class(c, [storage_class("standard", "2026-01-01T00:00:00Z")])
    assert c == before


def test_without_a_default_class_the_claim_stays_classless():
    c = new_claim()
    admit_default_class(c, [storage_class("plain", "2026-01-01T00:00:00Z", default=None)])
    assert "storageClassName" not in c["spec"]
