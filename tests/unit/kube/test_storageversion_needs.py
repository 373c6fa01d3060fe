"""When a CRD needs a storage-version migration (kruise.kube.storageversion), without a server."""

from kruise.kube.storageversion import established, needs_migration, resource_at, storage_version


def crd(storage: str, stored: list[str], established_: str = "True") -> dict:
    return {
        "spec": {
            "group": "apps.kruise.io",
            "scope": "Namespaced",
            "names": {"plural": "daemonsets", "kind": "DaemonSet"},
            "versions": [
                {"name": "v1alpha1", "storage": storage == "v1alpha1"},
                {"name": "v1beta1", "storage": storage == "v1beta1"},
            ],
        },
        "status": {"storedVersions": stored, "conditions": [{"type": "Established", "status": established_}]},
    }


def test_only_a_list_other_than_the_storage_version_alone_needs_migration():
    assert needs_migration(crd("v1alpha1", ["v1beta1", "v1alpha1"]))
    assert needs_migration(crd("v1beta1", ["v1alpha1", "v1beta1"]))
    assert not needs_migration(crd("v1alpha1", ["v1alpha1"]))


def test_storage_version_resource_and_established():
    obj = crd("v1beta1", ["v1beta1"], "False")
    assert storage_version(obj) == "v1beta1"
    assert str(resource_at(obj, "v1beta1")) == "daemonsets.v1beta1.apps.kruise.io"
    assert not established(obj) and established(crd("v1beta1", ["v1beta1"]))
