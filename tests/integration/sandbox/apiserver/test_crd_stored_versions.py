"""Conformance: a CRD's status.storedVersions, as apiextensions-apiserver keeps and enforces it.

Create records the storage version; an update of the CRD appends a new storage version (never sorts,
never drops one, ignores storedVersions in the body); an update whose spec.versions leaves out a
version still listed is refused with kube-apiserver's words; only /status shrinks the list, after
which the version may go.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.integration.sandbox.apiserver.conftest import CRDS, GROUP, gadget_crd, served

NAME = f"gadgets.{GROUP}"


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    yield c
    await c.close()


def version(name: str, storage: bool) -> dict[str, Any]:
    return {**copy.deepcopy(gadget_crd()["spec"]["versions"][0]), "name": name, "storage": storage}


async def update_crd(
    client: Client, change: Callable[[dict[str, Any]], None], sub: str = ""
) -> dict[str, Any]:
    """A read-modify-write of the CRD (or its /status), again on a Conflict: the emulator's
    establishing controller writes the CRD's conditions right after each spec change."""
    for _ in range(20):
        crd = await client.get(f"{CRDS}/{NAME}")
        change(crd)
        try:
            return await client.replace(f"{CRDS}/{NAME}{sub}", crd)
        except ApiError as err:
            if err.status != 409:
                raise
    raise AssertionError("20 conflicting CRD writes in a row")


def set_versions(*versions: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(crd: dict[str, Any]) -> None:
        crd["spec"]["versions"] = list(versions)

    return change


async def test_stored_versions_recorded_enforced_and_trimmed_by_status(emulator, client):
    created = await client.create(CRDS, gadget_crd())
    assert created["status"]["storedVersions"] == ["v1"]
    gadgets_v1 = f"/apis/{GROUP}/v1/namespaces/default/gadgets"
    await served(client, gadgets_v1)
    await client.create(
        gadgets_v1, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    )

    # v2 becomes the storage version: appended after v1 (in order of storage, not sorted)
    crd = await update_crd(client, set_versions(version("v2", True), version("v1", False)))
    assert crd["status"]["storedVersions"] == ["v1", "v2"]
    stored = emulator.server.store.get((GROUP, "gadgets"), "default", "g")
    assert stored["apiVersion"] == f"{GROUP}/v1"  # a storage change rewrites nothing by itself

    # storedVersions in the body of an update of the CRD itself is ignored
    def trim_in_body(crd: dict[str, Any]) -> None:
        crd["status"]["storedVersions"] = ["v2"]

    assert (await update_crd(client, trim_in_body))["status"]["storedVersions"] == ["v1", "v2"]

    # dropping v1 from spec.versions while it is listed: refused, kube-apiserver's words
    with pytest.raises(ApiError) as refused:
        await update_crd(client, set_versions(version("v2", True)))
    assert refused.value.status == 422
    assert refused.value.message == (
        f'CustomResourceDefinition.apiextensions.k8s.io "{NAME}" is invalid: '
        'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions'
    )

    # the migration: a no-op update rewrites the object at the storage version, then /status trims
    gadgets_v2 = f"/apis/{GROUP}/v2/namespaces/default/gadgets"
    await served(client, gadgets_v2)
    await client.replace(f"{gadgets_v2}/g", await client.get(f"{gadgets_v2}/g"))
    assert emulator.server.store.get((GROUP, "gadgets"), "default", "g")["apiVersion"] == f"{GROUP}/v2"
    trimmed = await update_crd(client, trim_in_body, sub="/status")
    assert trimmed["status"]["storedVersions"] == ["v2"]

    crd = await update_crd(client, set_versions(version("v2", True)))
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v2"]
    assert crd["status"]["storedVersions"] == ["v2"]
    assert (await client.get(f"{gadgets_v2}/g"))["metadata"]["name"] == "g"


async def test_every_listed_version_missing_is_named_at_its_index(client):
    crd = gadget_crd()
    crd["spec"]["versions"] = [version("v1", True), version("v2", False), version("v3", False)]
    await client.create(CRDS, crd)
    await update_crd(client, set_versions(version("v2", True), version("v1", False), version("v3", False)))
    await update_crd(client, set_versions(version("v3", True), version("v1", False), version("v2", False)))
    with pytest.raises(ApiError) as refused:
        await update_crd(client, set_versions(version("v3", True)))
    assert refused.value.message == (
        f'CustomResourceDefinition.apiextensions.k8s.io "{NAME}" is invalid: ['
        'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions, '
        'status.storedVersions[1]: Invalid value: "v2": must appear in spec.versions]'
    )
