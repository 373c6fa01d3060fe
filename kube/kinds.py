"""Which REST resource serves a (group, version, kind): the kinds kruise knows by name, else the
CustomResourceDefinitions in the cluster. Used to follow kinds named only in configuration (the
WorkloadSpread custom-workload whitelist), where a kind, not a resource, is what the user writes.
"""

from __future__ import annotations

from kruise.kube import resources
from kruise.kube.client import Client
from kruise.kube.resources import CRDS, ResourceRef


def known_resource(group: str, version: str, kind: str) -> ResourceRef | None:
    """A ResourceRef declared in `kruise.kube.resources` serving exactly this group/version/kind."""
    for value in vars(resources).values():
        if isinstance(value, ResourceRef) and (value.group, value.version, value.kind) == (
            group,
            version,
            kind,
        ):
            return value
    return None


def crd_resource(crd: dict, group: str, version: str, kind: str) -> ResourceRef | None:
    """The resource a CRD object serves for the kind, when it is that kind's and serves the version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    if spec.get("group") != group or names.get("kind") != kind or not names.get("plural"):
        return None
    served = [v.get("name") for v in spec.get("versions") or [] if v.get("served", True)]
    if version not in served:
        return None
    return ResourceRef(group, version, names["plural"], spec.get("scope", "Namespaced") == "Namespaced", kind)


async def resource_for_kind(client: Client, group: str, version: str, kind: str) -> ResourceRef | None:
    """The resource serving the kind, or None when no known resource or CRD serves it."""
    known = known_resource(group, version, kind)
    if known is not None:
        return known
    for crd in (await client.list(CRDS)).get("items") or []:
        found = crd_resource(crd, group, version, kind)
        if found is not None:
            return found
    return None
