"""`/validate-apps-kruise-io-<version>-persistentpodstate`: the kind's validation with what it needs
from outside the object — kruise-configuration's `PPS_Watch_Custom_Workload_WhiteList` (a targetRef
that is not a StatefulSet must be whitelisted) and the namespace's other PersistentPodStates (two
may not target the same workload) — as upstream's validatingPersistentPodStateFn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from kruise.api import features
from kruise.api import persistentpodstate as ppsapi
from kruise.api.validation import ErrorType, FieldError, aggregate_message, pydantic_errors
from kruise.control.common.customworkloads import WhitelistError, parse_pps_whitelist
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers import kindvalidation
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindparse import parse_new_and_old, valid_models
from kruise.webhook.handlers.kindregistration import kind_registration


def validating_handler(
    hooks: KindHooks,
    configuration: Callable[[], Mapping[str, str]],
    in_namespace: Callable[[str], list[dict[str, Any]]],
    deletion_protection: bool = False,
) -> Callable[[AdmissionRequest], Awaitable[Decision]]:
    """A whitelist that does not parse refuses every CREATE/UPDATE with only an internal error, as
    upstream (it reads the whitelist before anything else)."""
    fallback = kindvalidation.validating_handler(hooks, deletion_protection=deletion_protection)

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation not in ("CREATE", "UPDATE") or req.object is None:
            return await fallback(req)
        try:
            obj, old = parse_new_and_old(hooks, req)
        except ValidationError as exc:
            return deny(422, aggregate_message(pydantic_errors(exc)))
        try:
            whitelist = parse_pps_whitelist(configuration())
        except WhitelistError as exc:
            detail = f"failed to get persistent pod state config white list, error: {exc}"
            return deny(422, aggregate_message([FieldError(ErrorType.Internal, "", detail=detail)]))
        namespace = obj.metadata.namespace or req.namespace or ""
        errors = ppsapi.validate(
            obj,
            old,
            whitelist.kinds(),
            valid_models(ppsapi.PersistentPodState, in_namespace(namespace)),
        )
        if errors:
            return deny(422, aggregate_message(errors))
        return allow()

    return handle


def _validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return validating_handler(
        hooks,
        ctx.configuration,
        ctx.persistent_pod_states_in(),
        deletion_protection=ctx.enabled(features.RESOURCES_DELETION_PROTECTION),
    )


REGISTRATIONS = (
    kind_registration(
        ppsapi.GROUP, "PersistentPodState", "validate", _validating, webhook="vpersistentpodstate.kb.io"
    ),
)
