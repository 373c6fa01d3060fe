"""Which resource serves a kind named in configuration: kruise's known resources, else a CRD."""

from __future__ import annotations

from kruise.kube.kinds import crd_resource, known_resource
from kruise.kube.resources import REPLICASETS, ResourceRef


def crd(scope: str = "Namespaced", served: bool = True) -> dict:
    return {
        "spec": {
            "group": "demo.io",
            "scope": scope,
            "names": {"kind": "GameSet", "plural": "gamesets"},
            "versions": [{"name": "v1", "served": served}, {"name": "v2"}],
        }
    }


def test_known_resource_by_exact_group_version_kind() -> None:
    assert known_resource("apps", "v1", "ReplicaSet") == REPLICASETS
    assert known_resource("apps", "v2", "ReplicaSet") is None
    assert known_resource("demo.io", "v1", "GameSet") is None


def test_crd_resource() -> None:
    assert crd_resource(crd(), "demo.io", "v1", "GameSet") == ResourceRef(
        "demo.io", "v1", "gamesets", True, "GameSet"
    )
    assert crd_resource(crd(), "demo.io", "v2", "GameSet") == ResourceRef(
        "demo.io", "v2", "gamesets", True, "GameSet"
    )
    assert crd_resource(crd("Cluster"), "demo.io", "v1", "GameSet").namespaced is False
    assert crd_resource(crd(served=False), "demo.io", "v1", "GameSet") is None
    assert crd_resource(crd(), "demo.io", "v3", "GameSet") is None
    assert crd_resource(crd(), "other.io", "v1", "GameSet") is None
    assert crd_resource(crd(), "demo.io", "v1", "Other") is None
