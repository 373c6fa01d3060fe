"""Talking a Kruise kind's storage version on the wire while code keeps its own version's shapes.

kruise-py's components are written against one version per kind (`ResourceRef.version`, v1alpha1 for
most kinds). On API set 1.9 seven of those kinds are stored at v1beta1, so every request at v1alpha1
would make kube-apiserver call kruise-webhook's `/convert` for each object it reads, watches or writes
— a start-up dependency on the webhook and a per-object HTTPS round trip. Instead the client talks the
storage version and converts at its own boundary with `kruise.api.conversion.convert`, the function
`/convert` itself answers with: requests' bodies on the way out, answers and watch events on the way
in. Controllers still see (and write) their version's dict shapes.

How a component learns the version to talk: it reads the CRDs (`load`). The storage version in a
CRD is what the cluster really holds, whatever chart value, flag or manual `kubectl apply` put it
there, so there is no setting to get out of step with the installed set. A kind whose CRD cannot be
read (not installed yet, RBAC without `list` on CRDs) keeps its code version on the wire, which every
API set serves: correct, through `/convert`, just slower. The versions are read once per process;
switching a live cluster's API set restarts the components (see docs/api.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import structlog

from kruise.api.conversion import VERSIONS, convert, convertible
from kruise.api.objects import MutableObj
from kruise.kube.resources import ResourceRef

log = structlog.get_logger("kruise.kube.wire")


@dataclass(frozen=True)
class WireVersions:
    """Which version to talk on the wire per (group, plural): each convertible kind's storage version.

    Empty (the default) means "talk every ref's own version", which is what a client without CRD
    knowledge does.
    """

    storage: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def from_crds(cls, crds: Iterable[MutableObj]) -> WireVersions:
        """The storage version of every CRD whose kind has a v1alpha1 <-> v1beta1 conversion here."""
        storage: dict[tuple[str, str], str] = {}
        for crd in crds:
            spec = crd.get("spec") or {}
            group = spec.get("group") or ""
            names = spec.get("names") or {}
            if not convertible(group, names.get("kind") or ""):
                continue
            version = storage_version(crd)
            if version is not None:
                storage[(group, names.get("plural") or "")] = version
        return cls(storage)

    def wire_ref(self, ref: ResourceRef) -> ResourceRef | None:
        """The ref to send requests to instead of `ref`, or None when `ref` already talks storage."""
        version = self.storage.get((ref.group, ref.plural))
        if version is None or version == ref.version or ref.version not in VERSIONS:
            return None
        return dataclasses.replace(ref, version=version)

    def describe(self) -> dict[str, str]:
        """plural.group -> wire version, for the start-up log line."""
        return {f"{plural}.{group}": version for (group, plural), version in sorted(self.storage.items())}


def storage_version(crd: MutableObj) -> str | None:
    """The CRD's storage version if it is also served (a storage version may be unserved), else None."""
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("storage") and version.get("served") and version.get("name") in VERSIONS:
            return str(version["name"])
    return None


def to_wire(obj: MutableObj, wire: ResourceRef) -> MutableObj:
    """A request body in code's version, as a new dict in the wire version."""
    return convert(obj, wire.api_version)


def from_wire(obj: MutableObj, wire: ResourceRef, code: ResourceRef) -> MutableObj:
    """An object as the server sent it (wire version) as a new dict in code's version.

    A list's items carry no apiVersion/kind on some servers; they are the wire ref's, which
    conversion needs to know what it converts. A Status (a delete that finished at once) passes.
    """
    if obj.get("kind") == "Status":
        return obj
    source = (
        obj
        if obj.get("apiVersion") and obj.get("kind")
        else {
            **obj,
            "apiVersion": obj.get("apiVersion") or wire.api_version,
            "kind": obj.get("kind") or wire.kind,
        }
    )
    return convert(source, code.api_version)


def list_from_wire(listing: MutableObj, wire: ResourceRef, code: ResourceRef) -> MutableObj:
    """A list answer with every item in code's version, and the list's apiVersion code's."""
    out = dict(listing)
    out["apiVersion"] = code.api_version
    out["items"] = [from_wire(item, wire, code) for item in listing.get("items") or []]
    return out


def scale_passes(subresource: str | None) -> bool:
    """The scale subresource speaks autoscaling/v1 Scale whatever the kind's version: nothing to convert."""
    return subresource == "scale"
