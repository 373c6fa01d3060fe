"""The ``apps.kruise.io/inplace-update-state`` and ``-grace`` annotations (legacy keys still read)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.keys import (
    ANNOTATION_INPLACE_UPDATE_GRACE,
    ANNOTATION_INPLACE_UPDATE_GRACE_OLD,
    ANNOTATION_INPLACE_UPDATE_STATE,
    ANNOTATION_INPLACE_UPDATE_STATE_OLD,
)
from kruise.api.objects import annotations_of, section
from kruise.control.common.lifecycle import rfc3339
from kruise.control.common.podstatus import parse_time
from kruise.control.common.revision import go_json


@dataclass
class InPlaceUpdateState:
    """Mirror of upstream ``InPlaceUpdateState``; JSON field names and omission rules match."""

    revision: str
    update_timestamp: datetime
    last_container_statuses: dict[str, dict[str, str]] | None = None
    update_env_from_metadata: bool = False
    update_resources: bool = False
    update_images: bool = False
    next_container_images: dict[str, str] = field(default_factory=dict)
    next_container_ref_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_container_resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    pre_check_before_next: list[str] | None = None
    container_batches_record: list[dict[str, Any]] = field(default_factory=list)

    def has_next_batch(self) -> bool:
        return bool(
            self.next_container_images or self.next_container_ref_metadata or self.next_container_resources
        )

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "revision": self.revision,
            "updateTimestamp": rfc3339(self.update_timestamp),
            "lastContainerStatuses": self.last_container_statuses,
        }
        optional = {
            "updateEnvFromMetadata": self.update_env_from_metadata,
            "updateResources": self.update_resources,
            "updateImages": self.update_images,
            "nextContainerImages": self.next_container_images,
            "nextContainerRefMetadata": self.next_container_ref_metadata,
            "nextContainerResources": self.next_container_resources,
            "containerBatchesRecord": self.container_batches_record,
        }
        body.update({k: v for k, v in optional.items() if v})
        if self.pre_check_before_next is not None:
            body["preCheckBeforeNext"] = (
                {"containersRequiredReady": self.pre_check_before_next} if self.pre_check_before_next else {}
            )
        return go_json(body).decode()

    @classmethod
    def from_json(cls, text: str) -> InPlaceUpdateState:
        body = json.loads(text)
        pre_check = body.get("preCheckBeforeNext")
        stamp = parse_time(body.get("updateTimestamp"))
        if stamp is None:
            raise ValueError("inplace-update-state: updateTimestamp is required")
        return cls(
            revision=body.get("revision", ""),
            update_timestamp=stamp,
            last_container_statuses=body.get("lastContainerStatuses"),
            update_env_from_metadata=bool(body.get("updateEnvFromMetadata")),
            update_resources=bool(body.get("updateResources")),
            update_images=bool(body.get("updateImages")),
            next_container_images=dict(section(body, "nextContainerImages")),
            next_container_ref_metadata=dict(section(body, "nextContainerRefMetadata")),
            next_container_resources=dict(section(body, "nextContainerResources")),
            pre_check_before_next=None
            if pre_check is None
            else list(pre_check.get("containersRequiredReady") or []),
            container_batches_record=list(body.get("containerBatchesRecord") or []),
        )


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return annotations_of(pod)


def get_state_json(pod: Mapping[str, Any]) -> str | None:
    notes = _annotations(pod)
    if ANNOTATION_INPLACE_UPDATE_STATE in notes:
        return notes[ANNOTATION_INPLACE_UPDATE_STATE]
    return notes.get(ANNOTATION_INPLACE_UPDATE_STATE_OLD)


def get_state(pod: Mapping[str, Any]) -> InPlaceUpdateState | None:
    text = get_state_json(pod)
    return None if text is None else InPlaceUpdateState.from_json(text)


def get_grace_json(pod: Mapping[str, Any]) -> str | None:
    notes = _annotations(pod)
    if ANNOTATION_INPLACE_UPDATE_GRACE in notes:
        return notes[ANNOTATION_INPLACE_UPDATE_GRACE]
    return notes.get(ANNOTATION_INPLACE_UPDATE_GRACE_OLD)


def remove_grace(annotations: dict[str, str]) -> None:
    annotations.pop(ANNOTATION_INPLACE_UPDATE_GRACE, None)
    annotations.pop(ANNOTATION_INPLACE_UPDATE_GRACE_OLD, None)
