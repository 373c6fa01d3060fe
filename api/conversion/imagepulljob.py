"""ImagePullJob and ImageListPullJob v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 storage since
1.9): the two versions have the same shape (upstream copies every field one to one); only the
apiVersion changes."""

from __future__ import annotations

from typing import Any

GROUP = "apps.kruise.io"
KIND = "ImagePullJob"


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move."""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move."""
