"""A CRD's `status.storedVersions`, kept and checked as apiextensions-apiserver does.

storedVersions lists every version objects of the CRD may still be stored at in etcd. kube-apiserver
records it itself — the storage version on create, and on every update of the CRD (not of its
/status) the new storage version appended when missing — and refuses an update whose `spec.versions`
leaves out a version still listed: objects stored at it could no longer be read. The list only
shrinks through `/status`, which a storage migration writes once it has rewritten every object at
the current storage version (the status strategy checks nothing about it). The establishing
controller never touches it.
"""

from __future__ import annotations

from typing import Any

from kruise.sandbox.apiserver.errors import field_error


def storage_version(crd: dict[str, Any]) -> str | None:
    return next(
        (v.get("name") for v in (crd.get("spec") or {}).get("versions") or [] if v.get("storage")), None
    )


def on_create(crd: dict[str, Any]) -> list[str]:
    """strategy.PrepareForCreate: the storage version alone."""
    storage = storage_version(crd)
    return [storage] if storage else []


def prepare_update(crd: dict[str, Any], old: dict[str, Any]) -> None:
    """strategy.PrepareForUpdate of the CRD itself: the stored status stays (the caller has put it
    back), and the storage version is appended to storedVersions when it is not listed yet."""
    status = crd.setdefault("status", {})
    stored = list(status.get("storedVersions") or [])
    storage = storage_version(crd)
    if storage and storage not in stored:
        stored.append(storage)
    status["storedVersions"] = stored


def validate(crd: dict[str, Any]) -> list[dict[str, str]]:
    """ValidateCustomResourceDefinitionStoredVersions, on create and on update of the CRD (not /status)."""
    stored = list((crd.get("status") or {}).get("storedVersions") or [])
    if not stored:
        return [
            field_error(
                "FieldValueInvalid",
                "status.storedVersions",
                None,
                "[]string{}: must have at least one stored version",
                show_value=False,
            )
        ]
    causes = []
    index = {name: i for i, name in enumerate(stored)}  # a repeated name: its last position, as Go's map
    # ("must have the storage version" cannot happen here: create and update both list it)
    for version in (crd.get("spec") or {}).get("versions") or []:
        index.pop(version.get("name"), None)
    for name, i in sorted(index.items(), key=lambda item: item[1]):
        causes.append(
            field_error(
                "FieldValueInvalid", f"status.storedVersions[{i}]", name, "must appear in spec.versions"
            )
        )
    return causes
