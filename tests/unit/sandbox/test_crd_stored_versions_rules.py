"""status.storedVersions rules of the emulator (apiextensions' strategy and validation), without a server."""

from kruise.sandbox.apiserver import crdversions


def crd(versions: list[tuple[str, bool]], stored: list[str] | None = None) -> dict:
    out: dict = {"spec": {"versions": [{"name": n, "served": True, "storage": s} for n, s in versions]}}
    if stored is not None:
        out["status"] = {"storedVersions": stored}
    return out


def test_create_records_the_storage_version():
    assert crdversions.on_create(crd([("v1alpha1", False), ("v1beta1", True)])) == ["v1beta1"]


def test_update_appends_a_new_storage_version_and_keeps_order():
    new = crd([("v1alpha1", True), ("v1beta1", False)], ["v1beta1"])
    crdversions.prepare_update(new, new)
    assert new["status"]["storedVersions"] == ["v1beta1", "v1alpha1"]
    crdversions.prepare_update(new, new)  # listed already: unchanged
    assert new["status"]["storedVersions"] == ["v1beta1", "v1alpha1"]


def test_a_listed_version_missing_from_spec_is_refused_at_its_index():
    causes = crdversions.validate(crd([("v1alpha1", True)], ["v1beta1", "v1alpha1"]))
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "v1beta1": must appear in spec.versions',
            "field": "status.storedVersions[0]",
        }
    ]
    assert crdversions.validate(crd([("v1alpha1", True), ("v1beta1", False)], ["v1beta1", "v1alpha1"])) == []


def test_no_stored_version_at_all_is_refused():
    (cause,) = crdversions.validate(crd([("v1", False)], []))
    assert cause["field"] == "status.storedVersions"
    assert cause["message"] == "Invalid value: []string{}: must have at least one stored version"
