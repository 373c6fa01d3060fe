"""When a CRD's change ends the open watches of its custom resource.

kube-apiserver's crdHandler serves each CRD from a storage (watch cache included) built from one
version of the CRD. An update whose spec or status.acceptedNames differs from the one the storage
was built from drops that storage and tears it down: open watches end (the stream closes without an
ERROR event) and the new storage's watch cache starts at the current resourceVersion, so a resume
from before it is 410 Gone and clients re-list against the new definition. Any other status-only
update (conditions, storedVersions) keeps the storage and its watches.
"""

from __future__ import annotations

from typing import Any


def redefined(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Would this update drop the storage that serves `old`'s custom resources?"""
    if old.get("spec") != new.get("spec"):
        return True
    accepted = (old.get("status") or {}).get("acceptedNames") or {}
    # The first names accepted are no redefinition: kube-apiserver serves nothing before them (the
    # emulator serves from the spec at once, so a watch opened then has nothing to re-learn).
    return bool(accepted.get("kind")) and accepted != ((new.get("status") or {}).get("acceptedNames") or {})


def resource_of(crd: dict[str, Any]) -> tuple[str, str]:
    """The store key of the custom resources `crd` served."""
    spec = crd.get("spec") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    return spec.get("group", ""), accepted.get("plural") or (spec.get("names") or {}).get("plural", "")
