"""ContainerRecreateRequest admission (`mcontainerrecreaterequest.kb.io`): upstream checks and fills
the request in its *mutating* webhook — labels node-name/pod-uid/active, strategy defaults, and per
container the preStop hook, ports and the statusContext (containerID, restartCount) kruise-daemon
compares against. The rules are `kruise.api.crr`; this handler supplies the pod and node from the
informer caches. With gate KruiseDaemon off there is no daemon to act, so requests are refused (403).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kruise.api import crr as crr_api
from kruise.api import features
from kruise.api.objects import spec_of
from kruise.api.validation import aggregate_message, pydantic_errors
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny, mutable, patched
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.kinddefaulting import default_mutating
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindregistration import kind_registration

PodLookup = Callable[[str, str], dict[str, Any] | None]
NodeLookup = Callable[[str], dict[str, Any] | None]


def mutating_handler(
    pods: PodLookup, nodes: NodeLookup, *, daemon_gate: bool
) -> Callable[[AdmissionRequest], Any]:
    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation not in ("CREATE", "UPDATE") or req.object is None:
            return allow()
        if not daemon_gate:
            return deny(403, "feature-gate KruiseDaemon is not enabled")
        try:
            obj = crr_api.ContainerRecreateRequest.model_validate(mutable(req.object))
            old = (
                crr_api.ContainerRecreateRequest.model_validate(mutable(req.old_object))
                if req.operation == "UPDATE" and req.old_object
                else None
            )
        except ValidationError as exc:
            return deny(400, aggregate_message(pydantic_errors(exc)))
        if old is not None:
            rejection = crr_api.admit_update(obj, old)
            return deny(rejection.code, rejection.message) if rejection else allow()
        namespace = req.namespace or obj.metadata.namespace or ""
        pod = pods(namespace, obj.spec.pod_name) if obj.spec.pod_name else None
        node_name = spec_of(pod or {}).get("nodeName")
        node = nodes(node_name) if node_name else None
        rejection = crr_api.admit_create(obj, pod, node)
        if rejection:
            return deny(rejection.code, rejection.message)
        dumped = obj.to_dict()
        mutated = mutable(req.object)
        mutated["spec"] = dumped["spec"]
        mutated.setdefault("metadata", {})["labels"] = dumped["metadata"].get("labels") or {}
        return patched(mutated)

    return handle


def _mutating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    """Without the pod and node caches a request is only defaulted, as any kind."""
    if ctx.objects is None:
        return default_mutating(ctx, hooks)
    daemon = ctx.enabled(features.KRUISE_DAEMON)
    return mutating_handler(ctx.objects.pod, ctx.objects.node, daemon_gate=daemon)


REGISTRATIONS = (
    kind_registration(
        crr_api.GROUP, "ContainerRecreateRequest", "mutate", _mutating,
        webhook="mcontainerrecreaterequest.kb.io", path_version="v1alpha1",
    ),
)  # fmt: skip
