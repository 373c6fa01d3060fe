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
