"""Custom workloads for manager integration tests: a schemaless CRD for a made-up kind, served, and
listed in a kruise-configuration whitelist before kruise-webhook starts.

Upstream's WorkloadSpread and PersistentPodState follow third-party workloads named in
kruise-configuration; the tests stand those up the same way, so the setup lives here.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from kruise.api.keys import CONFIGMAP_KRUISE_CONFIGURATION
from kruise.kube.client import Client
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.resources import CONFIGMAPS, CRDS, NAMESPACES, ResourceRef
from tests.kit.polling import until

OPEN_SCHEMA = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def open_crd(ref: ResourceRef) -> dict[str, Any]:
    """A namespaced CRD serving and storing `ref`'s one version, any fields allowed."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{ref.plural}.{ref.group}"},
        "spec": {
            "group": ref.group,
            "scope": "Namespaced",
            "names": {"plural": ref.plural, "singular": ref.kind.lower(), "kind": ref.kind,
                      "listKind": f"{ref.kind}List"},
            "versions": [{
                "name": ref.version, "served": True, "storage": True,
                "schema": {"openAPIV3Schema": OPEN_SCHEMA},
            }],
        },
    }  # fmt: skip


def controller_ref(obj: dict[str, Any]) -> dict[str, Any]:
    """An ownerReference naming `obj` as controller."""
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True}  # fmt: skip


async def install_whitelisted(
    client: Client, refs: list[ResourceRef], key: str, whitelist: dict[str, Any], *, namespace: str, what: str
) -> None:
    """Create an `open_crd` per ref, wait (30 s) until each is listable in `namespace` (`what` names
    that wait in a timeout), then write `whitelist` as JSON under `key` of kruise-configuration in
    kruise-system (creating the namespace if need be)."""
    for ref in refs:
        await client.create(CRDS, open_crd(ref))

    async def served() -> bool:
        try:
            for ref in refs:
                await client.list(ref, namespace, limit=1)
        except NotFound:
            return False
        return True

    await until(served, 30, 0.05, message=what)
    with contextlib.suppress(AlreadyExists):
        await client.create(NAMESPACES, {"metadata": {"name": "kruise-system"}})
    config_map = {"metadata": {"name": CONFIGMAP_KRUISE_CONFIGURATION}, "data": {key: json.dumps(whitelist)}}
    await client.create(CONFIGMAPS, config_map, "kruise-system")
