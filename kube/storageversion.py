"""Storage-version migration of one CRD's objects, the way Kubernetes does it.

A CRD's `status.storedVersions` lists every version its objects may be stored at. Changing the
storage version rewrites nothing: objects stay at the version they were written at (read through
conversion) and the old version stays listed, so kube-apiserver refuses to drop it from
spec.versions. kube-storage-version-migrator (and `kubectl get -o json | kubectl replace`) finish the
move: every object gets a no-op update at the storage version, which re-encodes it there, and then
`status.storedVersions` is set to the storage version alone.

Two rules from kube-storage-version-migrator: the list is taken after the storage version changed,
so any later write (ours or anyone's) stores at the new version — an update refused with Conflict
means the object was written since and is migrated already, NotFound that it is gone; and the list
is trimmed only if the storage version is still the one migrated to (a CRD changed again meanwhile
is migrated again by the caller).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kruise.api.conditions import condition_of, is_true
from kruise.kube.client import Client
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import CRDS, ResourceRef

FIELD_MANAGER = "kruise-storage-version-migrator"
MAX_ATTEMPTS = 5


class StorageVersionChanged(Exception):
    """The CRD's storage version changed while its objects were rewritten: migrate again."""


@dataclass(frozen=True)
class Migration:
    crd: str
    storage_version: str
    rewritten: int
    """Objects re-encoded at the storage version (those gone or written meanwhile are not counted)."""
    dropped: tuple[str, ...]
    """The versions removed from status.storedVersions."""


def storage_version(crd: dict[str, Any]) -> str | None:
    versions = (crd.get("spec") or {}).get("versions") or []
    return next((v.get("name") for v in versions if v.get("storage")), None)


def stored_versions(crd: dict[str, Any]) -> list[str]:
    return list((crd.get("status") or {}).get("storedVersions") or [])


def needs_migration(crd: dict[str, Any]) -> bool:
    """Objects may be stored at a version other than the storage version."""
    storage = storage_version(crd)
    return storage is not None and stored_versions(crd) != [storage]


def established(crd: dict[str, Any]) -> bool:
    return is_true(condition_of(crd, "Established"))


def resource_at(crd: dict[str, Any], version: str) -> ResourceRef:
    spec = crd["spec"]
    names = spec["names"]
    return ResourceRef(spec["group"], version, names["plural"], spec["scope"] == "Namespaced", names["kind"])


async def migrate(client: Client, name: str) -> Migration | None:
    """Rewrite every object of CRD `name` at its storage version, then trim storedVersions to it.
    None when there is nothing to do; raises StorageVersionChanged when the CRD moved meanwhile."""
    crd = await client.get(CRDS, name)
    storage = storage_version(crd)
    if storage is None or not needs_migration(crd):
        return None
    ref = resource_at(crd, storage)
    items, _ = await client.list_all(ref)
    rewritten = 0
    for obj in items:
        rewritten += await _rewrite(client, ref, obj)
    for _ in range(MAX_ATTEMPTS):
        current = await client.get(CRDS, name)
        if (
            current["metadata"].get("uid") != crd["metadata"].get("uid")
            or storage_version(current) != storage
        ):
            raise StorageVersionChanged(
                f"customresourcedefinitions/{name}: storage version changed during migration"
            )
        dropped = tuple(v for v in stored_versions(current) if v != storage)
        current.setdefault("status", {})["storedVersions"] = [storage]
        try:
            await client.update_status(CRDS, current, field_manager=FIELD_MANAGER)
        except Conflict:
            continue
        return Migration(name, storage, rewritten, dropped)
    raise RuntimeError(
        f"customresourcedefinitions/{name}: {MAX_ATTEMPTS} conflicting writes of storedVersions"
    )


async def _rewrite(client: Client, ref: ResourceRef, obj: dict[str, Any]) -> bool:
    """A no-op update at the storage version; False when the object needed none (gone, or written
    since the list, which stored it at the storage version already)."""
    try:
        await client.update(ref, obj, field_manager=FIELD_MANAGER)
    except (Conflict, NotFound):
        return False
    return True
