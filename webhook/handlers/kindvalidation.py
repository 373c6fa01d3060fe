"""A Kruise kind's validating webhook: its `kruise.api` validator, and deletion protection of workloads.

A DELETE of a kind with replicas is refused as an apps/v1 workload's is (gate
ResourcesDeletionProtection); CREATE and UPDATE get the kind's own field errors, 422 as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kruise.api import features
from kruise.api.objects import spec_of
from kruise.api.validation import aggregate_message, pydantic_errors
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.deletion import validate_workload_deletion
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindparse import parse_new_and_old


def validating_handler(
    hooks: KindHooks, deletion_protection: bool = False
) -> Callable[[AdmissionRequest], Any]:
    """``deletion_protection``: the ResourcesDeletionProtection gate; off, every DELETE is allowed."""

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation == "DELETE":
            return _validate_delete(hooks, req) if deletion_protection else allow()
        if req.operation not in ("CREATE", "UPDATE") or req.object is None or hooks.validate is None:
            return allow()
        try:
            obj, old = parse_new_and_old(hooks, req)
        except ValidationError as exc:
            return deny(422, aggregate_message(pydantic_errors(exc)))
        errors = hooks.validate(obj, old=old) if hooks.validate_takes_old else hooks.validate(obj)
        if errors:
            return deny(422, aggregate_message(errors))
        return allow()

    return handle


def _validate_delete(hooks: KindHooks, req: AdmissionRequest) -> Decision:
    old = req.old_object
    if not old or not hooks.has_replicas:
        return allow()
    replicas = spec_of(old).get("replicas")
    message = validate_workload_deletion(old, replicas if isinstance(replicas, int) else None)
    return deny(403, message) if message else allow()


def default_validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return validating_handler(hooks, deletion_protection=ctx.enabled(features.RESOURCES_DELETION_PROTECTION))
