"""PersistentVolumeClaim admission as kube-apiserver 1.33 does it: the class a new claim gets from the
DefaultStorageClass plugin, what the claim strategy allows on update and what the resize plugin lets through.

On create, the DefaultStorageClass mutating plugin gives a claim that names no class (no
`spec.storageClassName`, no beta class annotation; an empty string is "no class" on purpose and is kept)
the class annotated `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation); of
several such classes the newest wins, then the first by name.

On update, two separate gates, in kube-apiserver's order:

1. `ValidatePersistentVolumeClaimUpdate` (422 Invalid): a claim's spec is fixed at creation except
   `volumeName` (set once, by the binder), `resources.requests` (only once the claim is Bound) and
   `volumeAttributesClassName`; `volumeMode` never changes. With RecoverVolumeExpansionFailure (beta,
   on by default in 1.33) the request may go down again, but never to or below `status.capacity`.
2. The `PersistentVolumeClaimResize` validating admission plugin (403 Forbidden): a request that
   grows is allowed only for a Bound claim whose StorageClass (same before and after) has
   `allowVolumeExpansion: true`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from typing import Any

from kruise.sandbox.apiserver.errors import StatusError, field_error
from kruise.sandbox.quantity import amount

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
SPEC_RULE = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)
RESIZE_RULE = (
    "only dynamically provisioned pvc can be resized and "
    "the storageclass that provisions the pvc must support resize"
)

StorageClassLookup = Callable[[str], dict[str, Any] | None]


def requested_storage(claim: dict[str, Any]) -> Any:
    """`spec.resources.requests.storage` as written (a quantity string), or None."""
    return (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")


def capacity_storage(claim: dict[str, Any]) -> Any:
    return ((claim.get("status") or {}).get("capacity") or {}).get("storage")


def claim_class(claim: dict[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in annotations:
        return annotations[BETA_CLASS_ANNOTATION]
    return (claim.get("spec") or {}).get("storageClassName") or ""


def is_default_class(sc: dict[str, Any]) -> bool:
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def admit_default_class(claim: dict[str, Any], classes: Iterable[dict[str, Any]]) -> None:
    """The DefaultStorageClass plugin on create: name the default class in a claim that names none."""
    spec = claim.setdefault("spec", {})
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if spec.get("storageClassName") is not None or BETA_CLASS_ANNOTATION in annotations:
        return
    defaults = sorted(
        (sc for sc in classes if is_default_class(sc)), key=lambda sc: sc["metadata"].get("name", "")
    )
    if defaults:
        # stable sorts: by name first, then newest first, so equal timestamps keep name order
        defaults.sort(key=lambda sc: sc["metadata"].get("creationTimestamp") or "", reverse=True)
        spec["storageClassName"] = defaults[0]["metadata"]["name"]


def _size(value: Any) -> Any:
    return amount(value) if value is not None else None


def _less(a: Any, b: Any) -> bool:
    """Quantity.Cmp(a, b) < 0 with a missing quantity read as zero."""
    return (_size(a) or 0) < (_size(b) or 0)


def _comparable_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with storage written as numbers, so 1Gi and 1024Mi compare equal (Semantic.DeepEqual)."""
    view = copy.deepcopy(spec)
    for group in ("requests", "limits"):
        values = (view.get("resources") or {}).get(group)
        if isinstance(values, dict):
            for key, value in list(values.items()):
                values[key] = str(_size(value))
    return view


def validate_claim_update(new: dict[str, Any], old: dict[str, Any]) -> list[dict[str, str]]:
    """The causes `ValidatePersistentVolumeClaimUpdate` reports for this update (strategy validation)."""
    causes: list[dict[str, str]] = []
    new_spec = copy.deepcopy(new.get("spec") or {})
    old_spec = copy.deepcopy(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        # the binder sets volumeName once
        _copy_key(new_spec, old_spec, "volumeName")
    causes += _storage_class_upgrade(new, old, new_spec, old_spec)
    if (new.get("status") or {}).get("phase") == "Bound" and "requests" in (new_spec.get("resources") or {}):
        requests = new_spec["resources"]["requests"]
        old_storage = requested_storage(old)
        if old_storage is None:
            requests.pop("storage", None)
        else:
            requests["storage"] = old_storage
    _copy_key(new_spec, old_spec, "volumeAttributesClassName")
    if _comparable_spec(new_spec) != _comparable_spec(old_spec):
        causes.append(
            field_error("FieldValueForbidden", "spec", detail=f"{SPEC_RULE}\n{_diff(old_spec, new_spec)}")
        )
    new_size, old_size = requested_storage(new), requested_storage(old)
    if _less(new_size, old_size) and not _less(capacity_storage(old), new_size):
        causes.append(
            field_error(
                "FieldValueForbidden",
                "spec.resources.requests.storage",
                detail="field can not be less than status.capacity",
            )
        )
    if (new.get("spec") or {}).get("volumeMode") != (old.get("spec") or {}).get("volumeMode"):
        causes.append(
            field_error(
                "FieldValueInvalid",
                "volumeMode",
                (new.get("spec") or {}).get("volumeMode"),
                "field is immutable",
            )
        )
    return causes


def _storage_class_upgrade(
    new: dict[str, Any], old: dict[str, Any], new_spec: dict[str, Any], old_spec: dict[str, Any]
) -> list[dict[str, str]]:
    """The two ways storageClassName may be set after creation (from the beta annotation, or from
    no class at all); otherwise the beta annotation is immutable. Drops an allowed upgrade from
    `new_spec` so the spec comparison does not see it."""
    old_annotations = (old.get("metadata") or {}).get("annotations") or {}
    new_annotations = (new.get("metadata") or {}).get("annotations") or {}
    old_beta = old_annotations.get(BETA_CLASS_ANNOTATION)
    new_beta = new_annotations.get(BETA_CLASS_ANNOTATION)
    old_named = old_spec.get("storageClassName") is not None
    new_class = new_spec.get("storageClassName")
    if (
        old_beta is not None
        and not old_named
        and new_class == old_beta
        and (new_beta is None or new_beta == old_beta)
    ):
        new_spec.pop("storageClassName", None)
        return []
    causes = []
    if (new_beta or "") != (old_beta or ""):
        causes.append(
            field_error(
                "FieldValueInvalid",
                f"metadata.annotations.{BETA_CLASS_ANNOTATION}",
                new_beta or "",
                "field is immutable",
            )
        )
    if new_class is not None and not old_named and (old_beta is None or new_class == old_beta):
        _copy_key(new_spec, old_spec, "storageClassName")
    return causes


def _copy_key(target: dict[str, Any], source: dict[str, Any], key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The fields that differ, one `- old` / `+ new` pair each (kube-apiserver prints a cmp.Diff)."""
    lines = []
    for key in sorted(set(old) | set(new)):
        if _comparable_spec({key: old.get(key)}) != _comparable_spec({key: new.get(key)}):
            lines.append(f"-\t{key}: {json.dumps(old.get(key), sort_keys=True)}")
            lines.append(f"+\t{key}: {json.dumps(new.get(key), sort_keys=True)}")
    return "\n".join(lines)


def admit_claim_resize(
    new: dict[str, Any], old: dict[str, Any], storage_class: StorageClassLookup
) -> StatusError | None:
    """The PersistentVolumeClaimResize admission plugin: the 403 a growing request earns, or None."""
    if not _less(requested_storage(old), requested_storage(new)):
        return None
    name = (new.get("metadata") or {}).get("name") or (old.get("metadata") or {}).get("name", "")
    if (old.get("status") or {}).get("phase") != "Bound":
        return _forbidden(name, "Only bound persistent volume claims can be expanded")
    new_class, old_class = claim_class(new), claim_class(old)
    allowed = False
    if new_class and new_class == old_class:
        sc = storage_class(new_class)
        allowed = sc is not None and sc.get("allowVolumeExpansion") is True
    return None if allowed else _forbidden(name, RESIZE_RULE)


def _forbidden(name: str, why: str) -> StatusError:
    return StatusError(
        403,
        "Forbidden",
        f'persistentvolumeclaims "{name}" is forbidden: {why}',
        {"name": name, "kind": "persistentvolumeclaims"},
    )
