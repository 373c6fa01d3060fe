"""The seam between the emulator's request pipeline and admission control.

The request pipeline (storage, patches, schema) and the admission plugin (webhook calls) are
built separately; this module is the contract between them, mirroring kube-apiserver's
``admission.Attributes`` and its mutating/validating interfaces.

Order inside a write, as kube-apiserver does it: decode -> defaulting -> mutating admission ->
schema validation -> validating admission -> persist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class EquivalentResource:
    """Another group/version/resource serving the same objects as the request's, and the kind an
    object has there (for a subresource, the subresource's kind: ``scale`` is autoscaling/v1 Scale)."""

    group: str
    version: str
    resource: str
    kind: dict[str, str]


class ObjectVersions(Protocol):
    """What kube-apiserver's ``admission.ObjectInterfaces`` give webhook admission for
    ``matchPolicy: Equivalent``: the equivalent resources of the request's resource (itself
    included, in registration order) and a converter between their versions."""

    def equivalents(self, subresource: str) -> list[EquivalentResource]:
        """The resources holding the same objects that have ``subresource`` ("" for the main one)."""

    async def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        """``obj`` at ``api_version``; raises StatusError (500) when conversion fails."""


@dataclass
class AdmissionAttributes:
    """Everything an admission plugin may look at for one request."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    group: str
    version: str
    resource: str  # plural, e.g. "pods"
    subresource: str  # "" or e.g. "status", "eviction", "binding", "scale"
    kind: dict[str, str]  # {"group": ..., "version": ..., "kind": ...} of `object`
    namespace: str  # "" for cluster-scoped
    name: str
    object: dict[str, Any] | None  # the incoming object; mutating plugins may replace it
    old_object: dict[str, Any] | None  # stored object for UPDATE/DELETE
    dry_run: bool = False
    options: dict[str, Any] | None = None  # CreateOptions/UpdateOptions/DeleteOptions as JSON
    user_info: dict[str, Any] = field(default_factory=lambda: {"username": "system:admin", "groups": []})
    # The apiserver's ObjectDefaulter for `object`: kube-apiserver runs it again, in place, on the
    # object a mutating webhook's patch produced, so injected fields get the same defaults as sent ones.
    defaulter: Callable[[dict[str, Any]], None] | None = None
    # The resource's other versions (None: served in one version only, so nothing is equivalent).
    versions: ObjectVersions | None = None


class AdmissionDenied(Exception):
    """Raised by a plugin to refuse a request; ``status`` is the metav1.Status body to return."""

    def __init__(self, status: dict[str, Any]):
        super().__init__(status.get("message", "admission denied"))
        self.status = status


class AdmissionPlugin(Protocol):
    """What the request pipeline calls; both methods raise AdmissionDenied to refuse."""

    async def mutate(self, attrs: AdmissionAttributes) -> list[str]:
        """Mutate ``attrs.object`` in place (may replace it); return warnings."""

    async def validate(self, attrs: AdmissionAttributes) -> list[str]:
        """Check the final object; return warnings."""
