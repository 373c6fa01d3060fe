"""AdvancedCronJob v1alpha1 <-> v1beta1 (apps.kruise.io).

v1beta1 adds `spec.template.imageListPullJobTemplate` (1.9), which v1alpha1 has no place for; it
is dropped from the v1alpha1 form (and kept by the conversion-data annotation for the way back).
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child

GROUP = "apps.kruise.io"
KIND = "AdvancedCronJob"


def to_v1beta1(obj: dict[str, Any]) -> None:
    """Every v1alpha1 field has the same place in v1beta1."""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    template = child(spec, "template", "spec") if spec is not None else None
    if template is not None:
        template.pop("imageListPullJobTemplate", None)
