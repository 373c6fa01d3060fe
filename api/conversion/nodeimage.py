"""NodeImage v1alpha1 <-> v1beta1 (apps.kruise.io; cluster-scoped; upstream 1.9 stores v1beta1,
kruise-py stores v1alpha1 — see docs/api.md).

v1beta1 adds `mode` to each `spec.images[<name>].pullSecrets[]` reference (`batch`: the secret is
synced once for all pull jobs rather than once per job). v1alpha1 has no place for it; upstream's
ConvertFrom copies namespace and name only, and so does this mapping (the conversion-data
annotation keeps the mode for the way back).
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.errors import ConversionError
from kruise.api.conversion.fields import child

GROUP = "apps.kruise.io"
KIND = "NodeImage"


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Every v1alpha1 field has the same place in v1beta1."""


def _pull_secrets(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(path, reference) for every pull secret reference under spec.images."""
    spec = child(obj, "spec", "")
    images = child(spec, "images", "spec") if spec is not None else None
    found: list[tuple[str, dict[str, Any]]] = []
    for name in images or {}:
        image = child(images, name, "spec.images")  # type: ignore[arg-type]
        secrets = image.get("pullSecrets") if image is not None else None
        path = f"spec.images[{name}].pullSecrets"
        if secrets is None:
            continue
        if not isinstance(secrets, list):
            raise ConversionError(path, f"must be a list, got {type(secrets).__name__}")
        for index, ref in enumerate(secrets):
            if not isinstance(ref, dict):
                raise ConversionError(f"{path}[{index}]", f"must be an object, got {type(ref).__name__}")
            found.append((f"{path}[{index}]", ref))
    return found


def to_v1alpha1(obj: dict[str, Any]) -> None:
    for _path, ref in _pull_secrets(obj):
        ref.pop("mode", None)
