"""ResourceDistribution controller on the emulator: a Secret copied into listed and label-selected
namespaces, kept in sync, a foreign Secret reported as a conflict, copies removed when a namespace
stops being a target and garbage-collected with the distribution."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.errors import NotFound
from kruise.kube.resources import NAMESPACES, RESOURCEDISTRIBUTIONS, SECRETS
from kruise.manager.controllers import resourcedistribution

FROM = "kruise.io/resourcedistribution.resource.from"
HASH = "kruise.io/resourcedistribution.resource.hashcode"


@pytest.fixture
def controller_setups():
    return [resourcedistribution.SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"ResourceDistributionGate": True}, env={})


def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def distribution(data="djE=", included=("ns-1", "ns-2")):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": "share"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred"},
                         "type": "Opaque", "data": {"token": data}},
            "targets": {
                "includedNamespaces": {"list": [{"name": n} for n in included]},
                "namespaceLabelSelector": {"matchLabels": {"shared": "yes"}},
            },
        },
    }  # fmt: skip


async def test_secret_distributed_synced_conflicting_and_cleaned_up(kruise_cluster):
    client = kruise_cluster.client
    for name in ("ns-1", "ns-2", "ns-3"):
        await client.create(NAMESPACES, namespace(name))
    foreign = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred", "namespace": "ns-3"},
               "data": {"token": "bWluZQ=="}}  # fmt: skip
    await client.create(SECRETS, foreign)
    await client.create(RESOURCEDISTRIBUTIONS, distribution())

    async def copies():
        items = (await client.list(SECRETS))["items"]
        return {s["metadata"]["namespace"]: s for s in items if s["metadata"]["name"] == "regcred"}

    found = await kruise_cluster.until(copies, lambda c: {"ns-1", "ns-2"} <= set(c))
    assert found["ns-1"]["data"] == {"token": "djE="}
    assert found["ns-1"]["metadata"]["annotations"][FROM] == "share"
    assert len(found["ns-1"]["metadata"]["annotations"][HASH]) == 64

    # a namespace labelled into the selector gets a copy; one already holding a foreign Secret conflicts
    await client.create(NAMESPACES, namespace("ns-4", shared="yes"))
    await kruise_cluster.until(copies, lambda c: "ns-4" in c)
    await client.patch(NAMESPACES, "ns-3", {"metadata": {"labels": {"shared": "yes"}}})

    async def status():
        return (await client.get(RESOURCEDISTRIBUTIONS, "share")).get("status") or {}

    def conflict(s):
        return next((c for c in s.get("conditions") or [] if c["type"] == "ConflictOccurred"), {})

    seen = await kruise_cluster.until(status, lambda s: conflict(s).get("status") == "True")
    assert conflict(seen)["failedNamespace"] == ["ns-3"]
    assert (seen["desired"], seen["succeeded"], seen["failed"]) == (4, 3, 1)
    assert (await copies())["ns-3"]["data"] == {"token": "bWluZQ=="}

    # a changed resource reaches every copy; an edited copy is put back
    await client.patch(
        RESOURCEDISTRIBUTIONS, "share", {"spec": {"resource": distribution("djI=")["spec"]["resource"]}}
    )
    await kruise_cluster.until(
        copies, lambda c: all(c[n]["data"] == {"token": "djI="} for n in ("ns-1", "ns-2", "ns-4"))
    )
    await client.patch(SECRETS, "regcred", {"data": {"token": "aGFjaw=="}}, "ns-1")
    await kruise_cluster.until(copies, lambda c: c["ns-1"]["data"] == {"token": "djI="})

    # ns-2 leaves the list: its copy goes, the foreign Secret in ns-3 stays
    await client.patch(
        RESOURCEDISTRIBUTIONS,
        "share",
        {"spec": {"targets": {"includedNamespaces": {"list": [{"name": "ns-1"}]}}}},
    )
    await kruise_cluster.until(copies, lambda c: set(c) == {"ns-1", "ns-3", "ns-4"})

    # deleting the distribution garbage-collects its copies (they are controlled by it)
    await client.delete(RESOURCEDISTRIBUTIONS, "share")
    remaining = await kruise_cluster.until(copies, lambda c: set(c) == {"ns-3"})
    assert remaining["ns-3"]["data"] == {"token": "bWluZQ=="}
    with pytest.raises(NotFound):
        await client.get(RESOURCEDISTRIBUTIONS, "share")
