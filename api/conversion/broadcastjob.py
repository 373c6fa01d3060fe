"""BroadcastJob v1alpha1 <-> v1beta1 (apps.kruise.io): the two versions have the same shape; only
the apiVersion changes (1.9 moved the storage version to v1beta1)."""

from __future__ import annotations

from typing import Any

GROUP = "apps.kruise.io"
KIND = "BroadcastJob"


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move."""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move."""
