"""The `Registration` of a Kruise kind's webhook, wrapped the same way whichever module answers it.

The generic handlers (`kinds`) and a concern that replaces one (SidecarSet, Advanced StatefulSet,
WorkloadSpread, PersistentPodState, ContainerRecreateRequest) both register through here, so both
path spellings, the version conversion, the kind's gates and the DELETE shape check cannot differ.
"""

from __future__ import annotations

from collections.abc import Callable

from kruise.api import shapes
from kruise.api.registry import by_kind
from kruise.webhook import paths
from kruise.webhook.admission import Handler
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.kindgates import KIND_GATES, gated
from kruise.webhook.handlers.kindhooks import KindHooks, hooks_for
from kruise.webhook.handlers.versions import at_version
from kruise.webhook.registry import Registration, WebhookSpec
from kruise.webhook.shapecheck import shape_checked

KindBuilder = Callable[[WebhookContext, KindHooks], Handler]


CREATE_UPDATE = ("CREATE", "UPDATE")
CREATE_UPDATE_DELETE = ("CREATE", "UPDATE", "DELETE")


def kind_registration(
    group: str,
    kind: str,
    verb: str,
    build: KindBuilder,
    *,
    webhook: str | None = None,
    path_version: str | None = None,
    operations: tuple[str, ...] = CREATE_UPDATE,
    fallback: bool = False,
) -> Registration:
    """The registration of a Kruise kind's `verb` ("mutate" or "validate") webhook on both path
    spellings; the handler `build` makes is wrapped as every kind's is: served at the hooks' version,
    and on validation the kind's gates (`KIND_GATES`) and the old object's shape on DELETE.
    `webhook` names its configuration entry (None: upstream has none), on the path spelled with
    `path_version` as upstream's handler registers it, for `operations`."""
    if verb not in ("mutate", "validate"):
        raise ValueError(f"verb: must be mutate or validate, not {verb!r}")
    info = by_kind(group, kind)
    hooks = hooks_for(info)
    versions = tuple(v.name for v in info.versions)
    specs: tuple[WebhookSpec, ...] = ()
    if webhook is not None:
        spelled = (path_version,) if path_version else ()
        path = paths.kind_paths(verb, group, kind, spelled)[-1]
        specs = (WebhookSpec(webhook, path, (info.plural,), operations, group),)

    def built(ctx: WebhookContext) -> Handler:
        handler = build(ctx, hooks)
        if verb == "mutate":
            return at_version(handler, group, kind, hooks.version)
        if kind in KIND_GATES:
            handler = gated(handler, ctx.gates, KIND_GATES[kind])
        handler = at_version(handler, group, kind, hooks.version, validating=True)
        return shape_checked(handler, old=shapes.WORKLOAD)  # a DELETE reads the old object's dict

    name = f"{verb} {kind}.{group}" + (" (generic)" if fallback else "")
    route = tuple(paths.kind_paths(verb, group, kind, versions))
    return Registration(name, route, built, fallback=fallback, webhooks=specs)
