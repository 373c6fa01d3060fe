"""Advanced StatefulSet v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 is the storage version).

v1alpha1 is a strict subset of v1beta1: every v1alpha1 field has the same place and meaning in
v1beta1, so the way up changes nothing. The way down drops what v1alpha1 has no place for, as
upstream's ConvertFrom does (it copies the shared fields only); the conversion-data annotation
keeps the dropped fields for the way back.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child

GROUP = "apps.kruise.io"
KIND = "StatefulSet"
# spec fields only v1beta1 declares
V1BETA1_SPEC_ONLY = (
    "volumeClaimUpdateStrategy",
    "reserveOrdinals",
    "lifecycle",
    "scaleStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
)
# status fields only v1beta1 declares
V1BETA1_STATUS_ONLY = ("updatedReadyReplicas", "updatedAvailableReplicas", "volumeClaims")


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Every v1alpha1 field has the same place in v1beta1."""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    for section, only in (("spec", V1BETA1_SPEC_ONLY), ("status", V1BETA1_STATUS_ONLY)):
        part = child(obj, section, "")
        if part is not None:
            for key in only:
                part.pop(key, None)
