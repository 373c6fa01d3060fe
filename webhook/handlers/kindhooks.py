"""A Kruise kind as its admission steps see it: its CRD and the hooks `kruise.api.registry` declares.

The declarations live beside the kinds in `kruise.api.registry`, so adding a kind there is the one
step that gives it webhooks; this only pairs them with the CRD's versions (the model a request parses
with) and answers what the generic handlers ask of a kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from kruise.api.crdgen import CRDInfo
from kruise.api.hooks import ADD_PROTECTION
from kruise.api.registry import hooks_of
from kruise.api.validation import FieldError


@dataclass(frozen=True)
class KindHooks:
    """A kind's CRD beside its declared hooks (`kruise.api.hooks.Hooks`); a concern module may swap a
    hook for one bound to its gates (Advanced StatefulSet's defaulter)."""

    info: CRDInfo
    set_defaults: Callable[..., None] | None
    validate: Callable[..., list[FieldError]] | None
    validate_takes_old: bool = False
    default_options: frozenset[str] = frozenset()
    version: str | None = None
    """The version the kind's hooks are written for; None when they take every served version."""

    @property
    def defaults_take_protection(self) -> bool:
        return self.defaults_take(ADD_PROTECTION)

    def defaults_take(self, option: str) -> bool:
        """The kind's defaulter accepts keyword ``option`` (only workloads with a pod template take
        ``inject_template_defaults`` and ``host_network_host_ports``)."""
        return self.set_defaults is not None and option in self.default_options

    def model_for(self, version: str) -> type[BaseModel]:
        for v in self.info.versions:
            if v.name == version:
                return v.model
        return self.info.storage_version.model

    @property
    def has_replicas(self) -> bool:
        return self.info.kind in ("CloneSet", "StatefulSet", "UnitedDeployment")


def hooks_for(info: CRDInfo) -> KindHooks:
    hooks = hooks_of(info)
    return KindHooks(
        info,
        hooks.set_defaults,
        hooks.validate,
        hooks.validate_takes_old,
        hooks.default_options,
        hooks.version,
    )
