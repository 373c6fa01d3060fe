"""CloneSet v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 is master's storage version).

- `scaleStrategy.disablePVCReuse` (v1alpha1, default false = reuse) is
  `scaleStrategy.enablePVCReuse` (v1beta1, default false = no reuse): the logical NOT, with the
  default of each version left implicit.
- Label `apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true"` (v1alpha1) sets
  `scaleStrategy.excludePreparingDelete` (v1beta1); the label stays, since label selectors must
  see the same labels in both versions.
- v1alpha1 `updateStrategy.type` ReCreate | InPlaceIfPossible | InPlaceOnly is v1beta1
  `type: RollingUpdate` + `rollingUpdate.podUpdatePolicy`; OnDelete is OnDelete in both. The
  other v1alpha1 updateStrategy fields live under v1beta1 `updateStrategy.rollingUpdate`.
- Annotations `apps.kruise.io/image-predownload-{parallelism,timeout-seconds,min-updated-ready-pods}`
  (v1alpha1) are `rollingUpdate.inPlaceUpdateStrategy.imagePreDownload{Parallelism,TimeoutSeconds,
  MinUpdatedReadyPods}` (v1beta1). An annotation whose value does not parse stays an annotation.
"""

from __future__ import annotations

import re
from typing import Any

from kruise.api.conversion.errors import ConversionError
from kruise.api.conversion.fields import (
    boolean,
    child,
    drop_if_empty,
    ensure_child,
    pop_meta,
    set_meta,
    string,
    string_map,
)

GROUP = "apps.kruise.io"
KIND = "CloneSet"
EXCLUDE_PREPARING_DELETE_LABEL = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"
PARALLELISM_ANNOTATION = "apps.kruise.io/image-predownload-parallelism"
TIMEOUT_ANNOTATION = "apps.kruise.io/image-predownload-timeout-seconds"
MIN_READY_ANNOTATION = "apps.kruise.io/image-predownload-min-updated-ready-pods"
ON_DELETE = "OnDelete"
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "ReCreate"
# v1alpha1 updateStrategy fields that sit under v1beta1 updateStrategy.rollingUpdate
ROLLING_FIELDS = (
    "partition",
    "maxUnavailable",
    "maxSurge",
    "paused",
    "priorityStrategy",
    "scatterStrategy",
    "inPlaceUpdateStrategy",
)
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _int32(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 32), None when it fails."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if _INT32_MIN <= value <= _INT32_MAX else None


def _int_or_string(text: str) -> int | str:
    """intstr.Parse: a decimal int32 becomes a number, anything else stays a string."""
    number = _int32(text)
    return text if number is None else number


# annotation -> (v1beta1 inPlaceUpdateStrategy field, parser or None when the text is unusable)
_PREDOWNLOAD = (
    (PARALLELISM_ANNOTATION, "imagePreDownloadParallelism", _int_or_string),
    (TIMEOUT_ANNOTATION, "imagePreDownloadTimeoutSeconds", _int32),
    (MIN_READY_ANNOTATION, "imagePreDownloadMinUpdatedReadyPods", _int32),
)


def to_v1beta1(obj: dict[str, Any]) -> None:
    spec = ensure_child(obj, "spec", "")
    labels = string_map(obj, "labels") or {}
    scale = child(spec, "scaleStrategy", "spec")
    disable = boolean(scale, "disablePVCReuse", "spec.scaleStrategy") if scale is not None else None
    if scale is not None:
        scale.pop("disablePVCReuse", None)
    if not disable:
        ensure_child(spec, "scaleStrategy", "spec")["enablePVCReuse"] = True
    if labels.get(EXCLUDE_PREPARING_DELETE_LABEL) == "true":
        ensure_child(spec, "scaleStrategy", "spec")["excludePreparingDelete"] = True

    strategy = child(spec, "updateStrategy", "spec")
    rolling: dict[str, Any] = {}
    if strategy is not None:
        kind = string(strategy, "type", "spec.updateStrategy")
        strategy.pop("type", None)
        for key in ROLLING_FIELDS:
            if key in strategy:
                rolling[key] = strategy.pop(key)
        if kind == ON_DELETE:
            strategy["type"] = ON_DELETE
        elif kind is not None:
            strategy["type"] = ROLLING_UPDATE
            rolling["podUpdatePolicy"] = kind
    annotations = string_map(obj, "annotations") or {}
    for annotation, field, parse in _PREDOWNLOAD:
        text = annotations.get(annotation)
        value = parse(text) if text is not None else None
        if value is None:
            continue
        pop_meta(obj, "annotations", annotation)
        in_place = rolling.get("inPlaceUpdateStrategy")
        if in_place is None:
            in_place = rolling["inPlaceUpdateStrategy"] = {}
        elif not isinstance(in_place, dict):
            raise ConversionError(
                "spec.updateStrategy.inPlaceUpdateStrategy", f"must be an object, got {in_place!r}"
            )
        in_place[field] = value
    if rolling:
        ensure_child(spec, "updateStrategy", "spec")["rollingUpdate"] = rolling


def _annotation_text(value: object, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConversionError(field, f"must be an integer or a string, got {value!r}")
    return str(value)


def to_v1alpha1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    if spec is None:
        return
    scale = child(spec, "scaleStrategy", "spec")
    enable = boolean(scale, "enablePVCReuse", "spec.scaleStrategy") if scale is not None else None
    if scale is not None:
        boolean(scale, "excludePreparingDelete", "spec.scaleStrategy")
        scale.pop("enablePVCReuse", None)
        scale.pop("excludePreparingDelete", None)
    if not enable:
        ensure_child(spec, "scaleStrategy", "spec")["disablePVCReuse"] = True
    drop_if_empty(spec, "scaleStrategy")

    strategy = child(spec, "updateStrategy", "spec")
    if strategy is None:
        return
    kind = string(strategy, "type", "spec.updateStrategy")
    strategy.pop("type", None)
    rolling = child(strategy, "rollingUpdate", "spec.updateStrategy")
    strategy.pop("rollingUpdate", None)
    path = "spec.updateStrategy.rollingUpdate"
    policy = string(rolling, "podUpdatePolicy", path) if rolling is not None else None
    if kind == ON_DELETE:
        strategy["type"] = ON_DELETE
    elif policy is not None:
        strategy["type"] = policy
    elif kind is not None:
        strategy["type"] = RECREATE
    if rolling is None:
        return
    rolling.pop("podUpdatePolicy", None)
    in_place = child(rolling, "inPlaceUpdateStrategy", path)
    if in_place is not None:
        for annotation, field, _ in _PREDOWNLOAD:
            if in_place.get(field) is not None:
                text = _annotation_text(in_place.pop(field), f"{path}.inPlaceUpdateStrategy.{field}")
                set_meta(obj, "annotations", annotation, text)
        drop_if_empty(rolling, "inPlaceUpdateStrategy")
    strategy.update(rolling)
