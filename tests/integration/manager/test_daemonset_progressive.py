"""Progressive pod creation against the emulator: a DaemonSet written at v1beta1 with
``scaleStrategy.partitionedScaling: true`` (stored at v1alpha1 as the
``daemonset.kruise.io/progressive-create-pod`` annotation, through ``kruise.api.conversion.convert``
as the conversion webhook would) creates pods on only ``nodes − partition`` nodes, in node-name order,
and on the rest once the partition is lowered."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import daemonset as daemonset_api
from kruise.api.conversion import convert
from kruise.api.keys import ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD
from kruise.control.common.nodeeligibility import target_node_name
from kruise.kube.resources import ADVANCED_DAEMONSETS, PODS
from kruise.manager.controllers.daemonset import SETUP

NS = "default"
NAME = "ds-progressive"
ALPHA = "apps.kruise.io/v1alpha1"


@pytest.fixture
def controller_setups():
    return [SETUP]


def beta_manifest(partition: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
            },
            "scaleStrategy": {"partitionedScaling": True},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
        },
    }


def stored(beta: dict[str, Any]) -> dict[str, Any]:
    """The object as the apiserver stores it: converted to v1alpha1, defaulted as the webhook would."""
    model = daemonset_api.DaemonSet.model_validate(convert(beta, ALPHA))
    daemonset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def placed_nodes(cluster) -> list[str]:
    listing = await cluster.client.list(PODS, NS, label_selector={"app": NAME})
    return sorted(target_node_name(p) for p in listing["items"] if not p["metadata"].get("deletionTimestamp"))


async def status_once_observed(cluster, desired: int, current: int) -> dict[str, Any]:
    """The DaemonSet once a full pass (observedGeneration caught up) counted ``current`` ready pods
    of ``desired``: that pass ran the manage step with every earlier create observed."""

    def done(ds: dict[str, Any]) -> bool:
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == ds["metadata"]["generation"]
            and status.get("desiredNumberScheduled") == desired
            and status.get("currentNumberScheduled") == current
            and status.get("numberReady") == current
        )

    return await cluster.until(lambda: cluster.client.get(ADVANCED_DAEMONSETS, NAME, NS), done, timeout=30.0)


@pytest.mark.parametrize("simulator_nodes", [4])
async def test_partition_holds_back_creation_until_lowered(kruise_cluster):
    client = kruise_cluster.client
    body = stored(beta_manifest(partition=2))
    assert body["metadata"]["annotations"][ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD] == "true"
    await client.create(ADVANCED_DAEMONSETS, body)

    await status_once_observed(kruise_cluster, desired=4, current=2)
    assert await placed_nodes(kruise_cluster) == ["node-1", "node-2"]
    # later passes (a pod status change brings one) still hold the other two nodes back
    ds = await status_once_observed(kruise_cluster, desired=4, current=2)
    assert ds["status"]["updatedNumberScheduled"] == 2
    assert await placed_nodes(kruise_cluster) == ["node-1", "node-2"]

    lowered = copy.deepcopy(ds)
    lowered["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0
    await client.update(ADVANCED_DAEMONSETS, lowered)
    await status_once_observed(kruise_cluster, desired=4, current=4)
    assert await placed_nodes(kruise_cluster) == ["node-1", "node-2", "node-3", "node-4"]


@pytest.mark.parametrize("simulator_nodes", [4])
async def test_without_partitioned_scaling_the_partition_does_not_hold_back_creation(kruise_cluster):
    beta = beta_manifest(partition=2)
    del beta["spec"]["scaleStrategy"]
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, stored(beta))
    await status_once_observed(kruise_cluster, desired=4, current=4)
    assert await placed_nodes(kruise_cluster) == ["node-1", "node-2", "node-3", "node-4"]
