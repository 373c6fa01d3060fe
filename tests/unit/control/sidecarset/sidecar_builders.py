"""Builders for SidecarSet injection tests: SidecarSets as the webhook stores them, and pods."""

from __future__ import annotations

import copy
from typing import Any

from kruise.api import sidecarset as api
from kruise.control.sidecarset.hashing import set_hash_annotations
from tests.kit.pods import pod


def sidecarset(name: str, containers: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    """A SidecarSet defaulted and hashed exactly as the mutating webhook would store it."""
    body: dict[str, Any] = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": name, **spec.pop("metadata", {})},
        "spec": {"selector": {"matchLabels": {"app": "nginx"}}, **spec},
    }
    if containers is not None:
        body["spec"]["containers"] = copy.deepcopy(containers)
    model = api.SidecarSet.model_validate(body)
    api.set_defaults(model)
    stored = model.to_dict()
    set_hash_annotations(stored)
    return stored


def app_pod(name: str = "test-pod", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    """A stored nginx pod labelled app=nginx (unless `labels` says otherwise); `metadata`: more metadata,
    the rest: spec fields over its one app container."""
    labels = spec.pop("labels", {"app": "nginx"})
    meta = spec.pop("metadata", {})
    spec = {"containers": [{"name": "app", "image": "nginx:1.7.9"}], **spec}
    return pod(name, namespace=namespace, labels=labels, meta=meta, typed=True, **spec)


SIDECAR1 = {
    "name": "sidecar1",
    "image": "busybox",
    "command": ["sleep", "999d"],
    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}],
}
LOG_VOLUME = {"name": "log-volume", "emptyDir": {}}
