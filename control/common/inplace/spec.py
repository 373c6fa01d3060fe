"""Deciding whether old -> new revision can be applied in place, and what to change.

Upstream rule (``defaultCalculateInPlaceUpdateSpec``): diff the two revisions' data; every change
under ``spec`` must be a ``replace`` of ``/spec/containers/<i>/image``; changes under
``metadata`` are allowed (labels/annotations are patched onto the pod), and — with
InPlaceUpdateEnvFromMetadata — a changed label/annotation that a container reads through a
downward-API env ``fieldRef`` is recorded per container so that container restarts. With
InPlaceWorkloadVerticalScaling, a ``replace`` of an existing cpu/memory request or limit is also
allowed (``containerResources``) as long as the pod's QoS class stays the same (see ``vertical``).
Anything else (other spec fields, added/removed containers or resource keys) means "recreate".
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.api.objects import containers_of, meta_of, section
from kruise.control.common.inplace.envhash import meta_env_refs
from kruise.control.common.inplace.jsondiff import create_patch, merge_patch, unescape
from kruise.control.common.inplace.vertical import NotResizable, qos_changed, record_resource_change
from kruise.control.common.revision import go_json

_IMAGE_PATH = re.compile(r"^/spec/containers/([0-9]+)/image$")
_RESOURCES_PATH = re.compile(r"^/spec/containers/([0-9]+)/resources/.*$")


@dataclass
class UpdateSpec:
    """What an in-place update changes. ``to_json`` matches upstream's grace annotation format."""

    revision: str
    container_images: dict[str, str] = field(default_factory=dict)
    container_ref_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    container_resources: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    metadata_patch: dict[str, Any] | None = None
    update_env_from_metadata: bool = False
    grace_seconds: int = 0

    def to_json(self) -> str:
        body: dict[str, Any] = {"revision": self.revision}
        if self.container_images:
            body["containerImages"] = self.container_images
        if self.container_ref_metadata:
            body["containerRefMetadata"] = self.container_ref_metadata
        if self.container_resources:
            body["containerResources"] = self.container_resources
        if self.metadata_patch is not None:
            body["metaDataPatch"] = base64.b64encode(go_json(self.metadata_patch)).decode()
        if self.update_env_from_metadata:
            body["updateEnvFromMetadata"] = True
        if self.grace_seconds:
            body["graceSeconds"] = self.grace_seconds
        return go_json(body).decode()

    @classmethod
    def from_json(cls, text: str) -> UpdateSpec:
        body = json.loads(text)
        raw_patch = body.get("metaDataPatch")
        return cls(
            revision=body.get("revision", ""),
            container_images=dict(section(body, "containerImages")),
            container_ref_metadata=dict(section(body, "containerRefMetadata")),
            container_resources=dict(section(body, "containerResources")),
            metadata_patch=json.loads(base64.b64decode(raw_patch)) if raw_patch else None,
            update_env_from_metadata=bool(body.get("updateEnvFromMetadata")),
            grace_seconds=int(body.get("graceSeconds") or 0),
        )

    def vertical_update_only(self) -> bool:
        """Only resources change: no image, no env-from-metadata restart (``VerticalUpdateOnly``)."""
        return (
            bool(self.container_resources) and not self.container_images and not self.update_env_from_metadata
        )


def template_of(revision: Mapping[str, Any]) -> dict[str, Any]:
    template = copy.deepcopy(dict(revision["data"]["spec"]["template"]))
    template.pop("$patch", None)
    return template


def container_refers_to_meta(container: Mapping[str, Any], path: str, key: str) -> bool:
    """Does an env var of ``container`` read ``<path>['<key>']`` via the downward API?"""
    return any(ref_path == path and ref_key == key for _, ref_path, ref_key in meta_env_refs(container))


def calculate_update_spec(
    old_revision: Mapping[str, Any] | None,
    new_revision: Mapping[str, Any] | None,
    *,
    grace_seconds: int = 0,
    env_from_metadata: bool = True,
    vertical_scaling: bool = False,
    revision_name: str | None = None,
) -> UpdateSpec | None:
    """The in-place update from ``old_revision`` to ``new_revision``, or None if it must recreate.

    ``env_from_metadata`` / ``vertical_scaling`` are the InPlaceUpdateEnvFromMetadata /
    InPlaceWorkloadVerticalScaling gates.
    """
    if old_revision is None or new_revision is None:
        return None
    old_t, new_t = template_of(old_revision), template_of(new_revision)
    spec = UpdateSpec(
        revision=revision_name or new_revision["metadata"]["name"],
        grace_seconds=grace_seconds,
    )
    metadata_ops: list[dict[str, Any]] = []
    for op in create_patch(old_revision["data"], new_revision["data"]):
        path = op["path"].replace("/spec/template", "", 1)
        if not path.startswith("/spec/"):
            if path.startswith("/metadata/"):
                metadata_ops.append({**op, "path": path})
                continue
            return None
        if op["op"] != "replace":
            return None
        old_containers = containers_of(old_t)
        match = _IMAGE_PATH.match(path)
        if match:
            index = int(match.group(1))
            if index >= len(old_containers) or not isinstance(op["value"], str):
                return None
            spec.container_images[old_containers[index]["name"]] = op["value"]
            continue
        if vertical_scaling and _RESOURCES_PATH.match(path):
            try:
                record_resource_change({**op, "path": path}, old_containers, spec.container_resources)
            except NotResizable:
                return None
            continue
        return None
    if vertical_scaling and spec.container_resources and qos_changed(old_t, new_t):
        return None
    if metadata_ops:
        old_meta = copy.deepcopy(meta_of(old_t))
        new_meta = copy.deepcopy(meta_of(new_t))
        if env_from_metadata:
            _extract_env_metadata(spec, metadata_ops, new_t, old_meta, new_meta)
        old_meta.pop("creationTimestamp", None)
        new_meta.pop("creationTimestamp", None)
        spec.metadata_patch = {"metadata": merge_patch(old_meta, new_meta)} if old_meta != new_meta else {}
    return spec


def _extract_env_metadata(
    spec: UpdateSpec,
    ops: list[dict[str, Any]],
    new_template: Mapping[str, Any],
    old_meta: dict[str, Any],
    new_meta: dict[str, Any],
) -> None:
    """Move label/annotation changes read by container env into per-container metadata."""
    for op in ops:
        if op["op"] not in ("replace", "add"):
            continue
        words = op["path"].split("/", 3)
        if len(words) != 4 or words[2] not in ("labels", "annotations") or not isinstance(op["value"], str):
            continue
        kind, key = words[2], unescape(words[3])
        for container in containers_of(new_template):
            if not container_refers_to_meta(container, f"metadata.{kind}", key):
                continue
            ref = spec.container_ref_metadata.setdefault(container["name"], {})
            ref.setdefault(kind, {})[key] = op["value"]
            section(old_meta, kind).pop(key, None)
            section(new_meta, kind).pop(key, None)
            spec.update_env_from_metadata = True
