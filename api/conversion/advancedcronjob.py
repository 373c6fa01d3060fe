"""AdvancedCronJob v1alpha1 <-> v1beta1 (apps.kruise.io).

Upstream 1.9 adds `spec.template.imageListPullJobTemplate` to v1beta1 only. Here v1alpha1 is the
served and storage version until v1beta1 is served, so v1alpha1 carries the field too (see
`kruise.api.advancedcronjob`), and both versions have the same shape: only the apiVersion changes.
"""

from __future__ import annotations

from typing import Any

GROUP = "apps.kruise.io"
KIND = "AdvancedCronJob"


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move."""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    """Same shape: nothing to move (the ImageListPullJob template stays where it is)."""
