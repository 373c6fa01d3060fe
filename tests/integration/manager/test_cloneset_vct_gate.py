"""CloneSet and RecreatePodWhenChangeVCTInCloneSetGate, through the emulator.

Every revision carries ``kruise.io/cloneset-volumeclaimtemplate-hash``. Changing the image together
with the volumeClaimTemplates makes a new revision with a different hash: with the gate on the pods
are recreated (so they get claims from the new templates), with it off they are updated in place.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.api.features import FeatureGates
from kruise.control.cloneset.vcthash import revision_annotation
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, EVENTS, PODS
from kruise.manager.controllers.cloneset import SETUP

NS = "default"
NAME = "vct"
HASH_KEY = "kruise.io/cloneset-volumeclaimtemplate-hash"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture(params=[True, False], ids=["gate-on", "gate-off"])
def feature_gates(request):
    return FeatureGates({"RecreatePodWhenChangeVCTInCloneSetGate": request.param}, env={})


def claim(size: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
    }


def manifest() -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "100%"},
            "volumeClaimTemplates": [claim("1Gi")],
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.25",
                            "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                        }
                    ]
                },
            },
        },
    }
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def live_pods(client) -> list[dict[str, Any]]:
    listing = await client.list(PODS, NS, label_selector={"app": NAME})
    return [p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")]


def settled(replicas: int):
    def done(cs: dict[str, Any]) -> bool:
        status = cs.get("status") or {}
        return status.get("observedGeneration") == cs["metadata"]["generation"] and all(
            status.get(k) == replicas for k in ("replicas", "readyReplicas", "updatedReadyReplicas")
        )

    return done


async def test_vct_and_image_change_recreates_only_with_the_gate(kruise_cluster, feature_gates):
    gate_on = feature_gates.enabled("RecreatePodWhenChangeVCTInCloneSetGate")
    client = kruise_cluster.client
    await client.create(CLONESETS, manifest())
    first = await kruise_cluster.until(lambda: client.get(CLONESETS, NAME, NS), settled(2))
    old_revision = await client.get(CONTROLLER_REVISIONS, first["status"]["updateRevision"], NS)
    # the hash covers the templates as stored (defaulted), as upstream hashes cs.Spec
    assert old_revision["metadata"]["annotations"][HASH_KEY] == revision_annotation(first)
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await live_pods(client)}

    body = copy.deepcopy(await client.get(CLONESETS, NAME, NS))
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    body["spec"]["volumeClaimTemplates"] = [claim("2Gi")]
    await client.update(CLONESETS, body)

    def rolled(cs: dict[str, Any]) -> bool:
        status = cs.get("status") or {}
        return (
            settled(2)(cs)
            and status.get("currentRevision")
            == status.get("updateRevision")
            != (first["status"]["updateRevision"])
        )

    cs = await kruise_cluster.until(lambda: client.get(CLONESETS, NAME, NS), rolled)
    new_revision = await client.get(CONTROLLER_REVISIONS, cs["status"]["updateRevision"], NS)
    assert new_revision["metadata"]["annotations"][HASH_KEY] == revision_annotation(cs)
    assert revision_annotation(cs) != revision_annotation(first)
    after = await kruise_cluster.until(
        lambda: live_pods(client),
        lambda ps: len(ps) == 2 and all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in ps),
    )
    kept = [p for p in after if before.get(p["metadata"]["name"]) == p["metadata"]["uid"]]

    async def reasons_now() -> list[str]:
        events = (await client.list(EVENTS, NS))["items"]
        return [e["reason"] for e in events if e["involvedObject"].get("name") == NAME]

    expected_reason = "SuccessfulUpdatePodReCreate" if gate_on else "SuccessfulUpdatePodInPlace"
    reasons = await kruise_cluster.until(reasons_now, lambda r: r.count(expected_reason) == 2)
    if gate_on:
        assert kept == []
        assert "SuccessfulUpdatePodInPlace" not in reasons
        assert reasons.count("SuccessfulUpdatePodReCreate") == 2
    else:
        assert len(kept) == 2
        assert "SuccessfulUpdatePodReCreate" not in reasons
        assert reasons.count("SuccessfulUpdatePodInPlace") == 2
