"""A Kruise object that no running controller reconciles gets one Warning event, not silence."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import EVENTS, ResourceRef
from kruise.manager.controllers import cloneset, imagepulljob, unhandled

EPHEMERAL_JOBS = ResourceRef("apps.kruise.io", "v1alpha1", "ephemeraljobs", True, "EphemeralJob")
CLONESETS = ResourceRef("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")


@pytest.fixture
def controller_setups():
    # cloneset and ephemeraljob are left out, as `--controllers=*,-cloneset,-ephemeraljob` would
    return [unhandled.SETUP, imagepulljob.SETUP]


@pytest.fixture
def feature_gates() -> FeatureGates:
    return FeatureGates(env={})


def _ephemeral_job(name: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"ephemeralContainers": [{"name": "debug", "image": "busybox"}]},
        },
    }


async def _warnings(client, name: str) -> list[dict]:
    events = (await client.list(EVENTS, "default"))["items"]
    return [e for e in events if e["involvedObject"]["name"] == name and e["reason"] == "NoController"]


async def test_objects_without_a_controller_get_one_warning(kruise_cluster):
    client = kruise_cluster.client
    await client.create(EPHEMERAL_JOBS, _ephemeral_job("debug-1"))
    (event,) = await kruise_cluster.until(lambda: _warnings(client, "debug-1"), lambda e: len(e) == 1)
    assert event["type"] == "Warning"
    # ephemeraljob is left out of this manager too (the "no controller yet" reason is unit-tested)
    assert "EphemeralJob.apps.kruise.io" in event["message"]
    assert "controller ephemeraljob of kruise-manager does not run: it is disabled" in event["message"]

    clone = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs-off", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "off"}},
            "template": {
                "metadata": {"labels": {"app": "off"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }
    await client.create(CLONESETS, clone)
    (event,) = await kruise_cluster.until(lambda: _warnings(client, "cs-off"), lambda e: len(e) == 1)
    assert "controller cloneset of kruise-manager does not run: it is disabled" in event["message"]

    # a new generation warns again (aggregated into the same event by the recorder)
    await client.patch(CLONESETS, "cs-off", {"spec": {"replicas": 2}}, "default")
    (event,) = await kruise_cluster.until(
        lambda: _warnings(client, "cs-off"), lambda e: len(e) == 1 and e[0].get("count", 1) == 2
    )
    assert cloneset.SETUP.kinds == ("CloneSet.apps.kruise.io",)
