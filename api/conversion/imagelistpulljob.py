"""ImageListPullJob v1alpha1 <-> v1beta1 (apps.kruise.io): same shape in both versions, like
ImagePullJob whose template it embeds."""

from __future__ import annotations

from kruise.api.conversion.imagepulljob import to_v1alpha1, to_v1beta1

GROUP = "apps.kruise.io"
KIND = "ImageListPullJob"

__all__ = ["GROUP", "KIND", "to_v1alpha1", "to_v1beta1"]
