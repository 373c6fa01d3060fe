"""A Kruise kind's mutating webhook: its `kruise.api` defaulter applied to the request, as a JSONPatch.

Only `spec` and the metadata a defaulter may add come back, so the patch never rewrites what the
defaulter does not own; the pod-template gates decide whether template defaults are injected at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kruise.api import features
from kruise.api.hooks import ADD_PROTECTION, HOST_NETWORK_HOST_PORTS, INJECT_TEMPLATE_DEFAULTS
from kruise.api.objects import spec_of
from kruise.api.validation import aggregate_message, pydantic_errors
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny, mutable, patched
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindparse import parse_request_object

# Metadata a defaulter may legitimately add (ImagePullJob adds its protection finalizer).
_DEFAULTED_METADATA = ("labels", "annotations", "finalizers")


def _template(hooks: KindHooks, req: AdmissionRequest, obj: dict[str, Any]) -> Any:
    return spec_of(parse_request_object(hooks, req, obj).to_dict()).get("template")


def inject_template_defaults(hooks: KindHooks, req: AdmissionRequest, template_no_defaults: bool) -> bool:
    """Whether the pod template (and claim templates) get the pod defaults, as upstream decides:
    never with gate TemplateNoDefaults; otherwise on CREATE, and on UPDATE only when
    ``spec.template`` changed — an untouched template keeps exactly what is stored, so objects
    created while the gate was on (or by an older defaulter) do not get a new revision just by
    having another field edited."""
    if template_no_defaults:
        return False
    if req.operation != "UPDATE" or not req.old_object:
        return True
    try:
        return _template(hooks, req, req.object) != _template(hooks, req, req.old_object)
    except ValidationError:
        return True  # an old object the model refuses cannot be compared: treat as changed


def mutating_handler(
    hooks: KindHooks, template_no_defaults: bool = False, host_network_host_ports: bool = False
) -> Callable[[AdmissionRequest], Any]:
    """``template_no_defaults``: gate TemplateNoDefaults. ``host_network_host_ports``: gate
    DefaultHostNetworkHostPortsInPodTemplates. Both only matter to kinds with a pod template."""

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation not in ("CREATE", "UPDATE") or req.object is None or hooks.set_defaults is None:
            return allow()
        try:
            model = parse_request_object(hooks, req, req.object)
        except ValidationError as exc:
            return deny(400, aggregate_message(pydantic_errors(exc)))
        options: dict[str, bool] = {}
        if hooks.defaults_take_protection:
            # Upstream adds the protection finalizer on CREATE only: on UPDATE the controller is
            # removing it to let the object go, and re-adding it would wedge the deletion.
            options[ADD_PROTECTION] = req.operation == "CREATE"
        if hooks.defaults_take(INJECT_TEMPLATE_DEFAULTS):
            options[INJECT_TEMPLATE_DEFAULTS] = inject_template_defaults(hooks, req, template_no_defaults)
        if hooks.defaults_take(HOST_NETWORK_HOST_PORTS):
            options[HOST_NETWORK_HOST_PORTS] = host_network_host_ports
        hooks.set_defaults(model, **options)
        dumped = model.to_dict()
        mutated = mutable(req.object)
        if "spec" in dumped:
            mutated["spec"] = dumped["spec"]
        meta = mutated.setdefault("metadata", {})
        for key in _DEFAULTED_METADATA:
            if dumped.get("metadata", {}).get(key):
                meta[key] = dumped["metadata"][key]
        return patched(mutated)

    return handle


def default_mutating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return mutating_handler(
        hooks,
        ctx.enabled(features.TEMPLATE_NO_DEFAULTS),
        ctx.enabled(features.DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES),
    )
