"""UnitedDeployment controller with a CloneSet template, against the emulator and the simulator.

The CloneSet controller runs too, so the children's pods are created and scheduled: each subset
pins its pods to one zone of the simulated nodes (node-1..3 in zone-a..c).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.api import uniteddeployment as ud_api
from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.kube.errors import Conflict
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, EVENTS, NODES, PODS, UNITED_DEPLOYMENTS
from kruise.manager.controllers.cloneset import SETUP as CLONESET_SETUP
from kruise.manager.controllers.uniteddeployment import SETUP
from tests.kit.polling import until

NS = "default"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def controller_setups():
    return [SETUP, CLONESET_SETUP]


def cloneset_spec(image: str = "nginx:alpine") -> dict[str, Any]:
    """A cloneSetTemplate spec as the CloneSet webhook would default the child."""
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "x", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    spec = model.model_dump(by_alias=True, exclude_none=True)["spec"]
    spec.pop("replicas", None)
    spec.pop("selector", None)
    return spec


def zone_subset(zone: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": f"subset-{zone[-1]}",
        "nodeSelectorTerm": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]},
        **fields,
    }


def manifest(name: str, replicas: int, subsets: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {
                "cloneSetTemplate": {"metadata": {"labels": {"app": "demo"}}, "spec": cloneset_spec()}
            },
            "topology": {"subsets": subsets},
            **spec,
        },
    }
    model = ud_api.UnitedDeployment.model_validate(body)
    ud_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def children(cluster, ud_name: str) -> dict[str, dict[str, Any]]:
    listing = await cluster.client.list(CLONESETS, NS)
    out = {}
    for cs in listing["items"]:
        refs = cs["metadata"].get("ownerReferences") or []
        if any(r.get("name") == ud_name and r.get("kind") == "UnitedDeployment" for r in refs):
            out[cs["metadata"]["labels"][LABEL_SUBSET_NAME]] = cs
    return out


async def edit_ud(cluster, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply `change` to the latest UnitedDeployment, again on a Conflict with a status write."""

    async def attempt() -> dict[str, Any]:
        ud = await cluster.client.get(UNITED_DEPLOYMENTS, name, NS)
        change(ud)
        return await cluster.client.update(UNITED_DEPLOYMENTS, ud)

    return await until(attempt, timeout=10, ignore=(Conflict,))


def replicas_of(found: dict[str, dict[str, Any]]) -> dict[str, int]:
    return {name: cs["spec"]["replicas"] for name, cs in found.items()}


async def test_three_zone_subsets_resplit_and_removal(kruise_cluster) -> None:
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a", replicas=1), zone_subset("zone-b"), zone_subset("zone-c")]
    await cluster.client.create(UNITED_DEPLOYMENTS, manifest("demo", 5, subsets), NS)

    found = await cluster.until(lambda: children(cluster, "demo"), lambda c: len(c) == 3)
    assert replicas_of(found) == {"subset-a": 1, "subset-b": 2, "subset-c": 2}
    for subset, cs in found.items():
        zone = f"zone-{subset[-1]}"
        assert cs["metadata"]["name"].startswith(f"demo-{subset}-")
        assert cs["metadata"]["labels"]["app"] == "demo"
        assert cs["spec"]["selector"]["matchLabels"] == {"app": "demo", LABEL_SUBSET_NAME: subset}
        pod_template = cs["spec"]["template"]
        assert pod_template["metadata"]["labels"][LABEL_SUBSET_NAME] == subset
        terms = pod_template["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]
        assert cs["spec"]["updateStrategy"]["partition"] == 0

    # Pods run in their subset's zone and the status adds them up.
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "demo", NS),
        lambda u: (
            (u.get("status") or {}).get("readyReplicas") == 5
            and u["status"].get("updatedReadyReplicas") == 5
            and u["status"].get("observedGeneration") == u["metadata"]["generation"]
        ),
        timeout=60,
    )
    status = ud["status"]
    assert status["replicas"] == 5
    assert status["updatedReplicas"] == 5
    assert status["subsetReplicas"] == {"subset-a": 1, "subset-b": 2, "subset-c": 2}
    assert status["labelSelector"] == "app=demo"
    revision = status["currentRevision"]
    assert revision.startswith("demo-")
    assert status["updateStatus"] == {
        "updatedRevision": revision,
        "currentPartitions": {"subset-a": 0, "subset-b": 0, "subset-c": 0},
    }
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["UnitedDeploymentUpdated"]["status"] == "True"
    assert conditions["SubsetProvisioned"]["status"] == "True"
    assert conditions["SubsetUpdated"]["status"] == "True"
    assert sorted(s["name"] for s in status["subsetStatuses"]) == ["subset-a", "subset-b", "subset-c"]
    await cluster.client.get(CONTROLLER_REVISIONS, revision, NS)
    nodes = {
        n["metadata"]["name"]: n["metadata"]["labels"][ZONE]
        for n in (await cluster.client.list(NODES))["items"]
    }
    pods = (await cluster.client.list(PODS, NS, label_selector={"app": "demo"}))["items"]
    assert len(pods) == 5
    for pod in pods:
        subset = pod["metadata"]["labels"][LABEL_SUBSET_NAME]
        assert nodes[pod["spec"]["nodeName"]] == f"zone-{subset[-1]}"
        assert pod["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] == revision

    # spec.replicas changes: the rest is split again.
    await edit_ud(cluster, "demo", lambda u: u["spec"].__setitem__("replicas", 9))
    found = await cluster.until(
        lambda: children(cluster, "demo"),
        lambda c: replicas_of(c) == {"subset-a": 1, "subset-b": 4, "subset-c": 4},
    )

    # A subset removed: its CloneSet goes, the others take its share.
    removed = found["subset-a"]["metadata"]["name"]

    def drop_a(ud: dict[str, Any]) -> None:
        topology = ud["spec"]["topology"]
        topology["subsets"] = [s for s in topology["subsets"] if s["name"] != "subset-a"]

    await edit_ud(cluster, "demo", drop_a)
    found = await cluster.until(
        lambda: children(cluster, "demo"), lambda c: replicas_of(c) == {"subset-b": 4, "subset-c": 5}
    )
    assert removed not in {cs["metadata"]["name"] for cs in found.values()}
    # the recorder writes events after the delete returns: wait for them
    await cluster.until(
        lambda: cluster.client.list(EVENTS, NS),
        lambda listing: (
            {"Create 3 Subset (CloneSet)", "Delete 1 Subset (CloneSet)"}
            <= {e["message"] for e in listing["items"] if e["involvedObject"].get("name") == "demo"}
        ),
    )


async def test_template_change_and_manual_partition(kruise_cluster) -> None:
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a"), zone_subset("zone-b")]
    body = manifest(
        "roll", 4, subsets, updateStrategy={"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 1}}}
    )
    await cluster.client.create(UNITED_DEPLOYMENTS, body, NS)
    found = await cluster.until(lambda: children(cluster, "roll"), lambda c: len(c) == 2)
    first = {n: cs["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] for n, cs in found.items()}
    assert len(set(first.values())) == 1
    assert found["subset-a"]["spec"]["updateStrategy"]["partition"] == 1
    assert found["subset-b"]["spec"]["updateStrategy"]["partition"] == 0

    def new_image(ud: dict[str, Any]) -> None:
        containers = ud["spec"]["template"]["cloneSetTemplate"]["spec"]["template"]["spec"]["containers"]
        containers[0]["image"] = "nginx:1.27"

    await edit_ud(cluster, "roll", new_image)

    def rolled(c: dict[str, dict[str, Any]]) -> bool:
        return all(
            cs["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] != first[n]
            and cs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
            for n, cs in c.items()
        )

    found = await cluster.until(lambda: children(cluster, "roll"), rolled)
    assert found["subset-a"]["spec"]["updateStrategy"]["partition"] == 1
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "roll", NS),
        lambda u: (
            (u.get("status") or {}).get("updateStatus", {}).get("updatedRevision")
            == found["subset-b"]["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH]
        ),
    )
    assert ud["status"]["updateStatus"]["currentPartitions"] == {"subset-a": 1, "subset-b": 0}


async def test_subset_patch_and_tolerations(kruise_cluster) -> None:
    cluster = kruise_cluster
    toleration = {"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}
    subsets = [
        zone_subset(
            "zone-a",
            tolerations=[toleration],
            patch={
                "metadata": {"labels": {"tier": "front"}},
                "spec": {"containers": [{"name": "main", "env": [{"name": "ZONE", "value": "a"}]}]},
            },
        ),
        zone_subset("zone-b"),
    ]
    await cluster.client.create(UNITED_DEPLOYMENTS, manifest("patched", 2, subsets), NS)
    found = await cluster.until(lambda: children(cluster, "patched"), lambda c: len(c) == 2)
    template_a = found["subset-a"]["spec"]["template"]
    assert template_a["metadata"]["labels"]["tier"] == "front"
    assert template_a["spec"]["tolerations"] == [toleration]
    assert template_a["spec"]["containers"][0]["image"] == "nginx:alpine"
    assert template_a["spec"]["containers"][0]["env"] == [{"name": "ZONE", "value": "a"}]
    assert found["subset-a"]["metadata"]["annotations"]["apps.kruise.io/subset-patch"].startswith(
        '{"metadata"'
    )
    template_b = found["subset-b"]["spec"]["template"]
    assert "tier" not in template_b["metadata"]["labels"]
    assert "tolerations" not in template_b["spec"]
    assert found["subset-b"]["metadata"]["annotations"]["apps.kruise.io/subset-patch"] == ""
