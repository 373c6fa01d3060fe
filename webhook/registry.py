"""Which handler answers which path, collected from the handler modules themselves.

Each module under `kruise.webhook.handlers` declares `REGISTRATIONS`: the paths it answers, the
feature gates that must be on for it to be served, and how to build its handler from a
`WebhookContext`, and the Mutating/ValidatingWebhookConfiguration entries that send the apiserver to
those paths. The process, the app and the webhook configurations all read the table built here, so
adding a concern is one module and nothing in a central if-chain — the way `kruise.manager.controllers`
discovers controllers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kruise.webhook.admission import Handler
from kruise.webhook.context import WebhookContext


@dataclass(frozen=True)
class WebhookSpec:
    """One webhook of the Mutating (path `/mutate-…`) or Validating (`/validate-…`) configuration."""

    name: str
    path: str
    """One of its registration's paths (the spelling upstream's configuration uses)."""
    resources: tuple[str, ...]
    operations: tuple[str, ...]
    group: str = ""
    versions: tuple[str, ...] | None = None
    """None: the versions the API set in force serves of the (Kruise) group and resource."""
    failure_policy: str = "Fail"
    namespace_selector: dict[str, Any] | None = None
    object_selector: dict[str, Any] | None = None

    @property
    def mutating(self) -> bool:
        return self.path.startswith("/mutate-")


@dataclass(frozen=True)
class Registration:
    name: str
    """Unique across the registry (what a duplicate or a test names)."""
    paths: tuple[str, ...]
    build: Callable[[WebhookContext], Handler | None]
    """The handler for this context; None when the context lacks what the concern needs (not served)."""
    gates: tuple[str, ...] = ()
    """Feature gates that must all be on for the paths to be served."""
    fallback: bool = False
    """Answers its paths only when no other registration claims them (a Kruise kind's generic
    defaulting/validation, which a concern module may replace with its own)."""
    webhooks: tuple[WebhookSpec, ...] = ()
    """Its entries in the webhook configurations (none: upstream has no webhook for it)."""

    def __post_init__(self) -> None:
        for spec in self.webhooks:
            if spec.path not in self.paths:
                raise ValueError(f"{self.name}: webhook {spec.name} path {spec.path} is not one it registers")
            if not spec.path.startswith(("/mutate-", "/validate-")):
                raise ValueError(f"{self.name}: webhook {spec.name} path must start /mutate- or /validate-")

    def served_by(self, ctx: WebhookContext) -> Handler | None:
        if not all(ctx.enabled(gate) for gate in self.gates):
            return None
        return self.build(ctx)


def resolve(registrations: Iterable[Registration]) -> list[Registration]:
    """The registrations in force: a fallback is dropped where another claims one of its paths; names
    and the remaining paths must be unique (ValueError naming the repeats)."""
    regs = list(registrations)
    names = [r.name for r in regs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"webhook registration names must be unique, repeated: {repeated}")
    claimed = {path for r in regs if not r.fallback for path in r.paths}
    chosen_names = [
        w.name for r in regs if not (r.fallback and claimed.intersection(r.paths)) for w in r.webhooks
    ]
    repeated = sorted({n for n in chosen_names if chosen_names.count(n) > 1})
    if repeated:
        raise ValueError(f"webhook configuration entry names must be unique, repeated: {repeated}")
    chosen = [r for r in regs if not (r.fallback and claimed.intersection(r.paths))]
    owners: dict[str, str] = {}
    for reg in chosen:
        for path in reg.paths:
            if path in owners:
                raise ValueError(f"webhook path {path} is registered by both {owners[path]} and {reg.name}")
            owners[path] = reg.name
    return chosen


def discover() -> list[Registration]:
    """Every module's REGISTRATIONS under `kruise.webhook.handlers`, resolved, in module-name order."""
    from kruise.webhook import handlers

    found: list[Registration] = []
    for module in sorted(pkgutil.iter_modules(handlers.__path__), key=lambda m: m.name):
        loaded = importlib.import_module(f"{handlers.__name__}.{module.name}")
        regs = getattr(loaded, "REGISTRATIONS", ())
        for reg in regs:
            if not isinstance(reg, Registration):
                raise TypeError(f"{loaded.__name__}: REGISTRATIONS must hold Registration objects")
        found.extend(regs)
    return resolve(found)


def webhooks(registrations: Iterable[Registration] | None = None) -> list[WebhookSpec]:
    """Every configuration entry of the registrations in force (whatever the gates: the configurations
    are filtered by the paths a process serves)."""
    regs = discover() if registrations is None else resolve(registrations)
    return [spec for reg in regs for spec in reg.webhooks]


def routes(ctx: WebhookContext, registrations: Iterable[Registration] | None = None) -> dict[str, Handler]:
    """Path -> handler for every registration served in `ctx` (gates on, its sources present)."""
    table: dict[str, Handler] = {}
    for reg in discover() if registrations is None else resolve(registrations):
        handler = reg.served_by(ctx)
        if handler is not None:
            for path in reg.paths:
                table[path] = handler
    return table
