"""The webhook's read-only views over SidecarSet, Namespace and ConfigMap informer stores."""

from __future__ import annotations

from kruise.kube.store import Store
from kruise.webhook.caches import StoreSidecarSets


def _store(*objects: dict) -> Store:
    store = Store()
    for obj in objects:
        store.upsert(obj)
    return store


def test_views_before_and_after_sidecarsets_are_attached():
    namespaces = _store({"metadata": {"name": "a", "labels": {"x": "1"}}}, {"metadata": {"name": "b"}})
    view = StoreSidecarSets(namespaces)
    assert view.list() == [] and view.get("s") is None and view.configuration() == {}
    assert view.namespace_labels("a") == {"x": "1"}
    assert view.namespace_labels("b") == {}
    assert view.namespace_labels("missing") is None
    sidecarset = {"metadata": {"name": "s"}, "spec": {}}
    view.attach(_store(sidecarset))
    assert view.list() == [sidecarset] and view.get("s") == sidecarset


def test_configuration_is_the_configmap_data():
    config_map = {
        "metadata": {"name": "kruise-configuration", "namespace": "kruise-system"},
        "data": {"k": "v"},
    }
    view = StoreSidecarSets(_store(), None, _store(config_map))
    assert view.configuration() == {"k": "v"}
    assert StoreSidecarSets(_store(), None, _store()).configuration() == {}


def test_revisions_come_from_the_attached_store_with_the_kruise_namespace():
    revision = {"metadata": {"name": "s-abc", "namespace": "kruise-system"}}
    view = StoreSidecarSets(_store(), None, None, _store(revision), "kruise-system")
    assert view.revisions() == [revision] and view.namespace == "kruise-system"
    assert StoreSidecarSets(_store()).revisions() == []
