"""Defaulting and validation of every Kruise kind, driven by `kruise.api.registry`.

Each kind's module in `kruise.api` exposes `set_defaults(obj)` and `validate(obj[, old])`; this file
only adapts them to admission: parse with the version's model, apply, and report. Adding a kind to
the registry is therefore enough to get its webhooks: every kind gets a generic mutating and
validating registration here, which a concern module replaces by registering the same kind and verb
through `kind_registration` (SidecarSet, Advanced StatefulSet, WorkloadSpread, PersistentPodState,
ContainerRecreateRequest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kruise.api import features, shapes
from kruise.api.crdgen import CRDInfo
from kruise.api.features import FeatureGates
from kruise.api.objects import spec_of
from kruise.api.registry import KINDS, by_kind
from kruise.api.validation import FieldError, aggregate_message, pydantic_errors
from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny, mutable, patched
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers import kindhooks
from kruise.webhook.handlers.deletion import validate_workload_deletion
from kruise.webhook.handlers.versions import at_version
from kruise.webhook.registry import Registration, WebhookSpec
from kruise.webhook.shapecheck import shape_checked

M = TypeVar("M", bound=BaseModel)

# Metadata a defaulter may legitimately add (ImagePullJob adds its protection finalizer).
_DEFAULTED_METADATA = ("labels", "annotations", "finalizers")


@dataclass(frozen=True)
class KindHooks:
    """A kind's CRD beside its declared hooks (`kindhooks.DECLARED`)."""

    info: CRDInfo
    set_defaults: Callable[..., None] | None
    validate: Callable[..., list[FieldError]] | None
    validate_takes_old: bool = False
    default_options: frozenset[str] = frozenset()
    version: str | None = None
    """The version the kind's hooks are written for; None when they take every served version."""

    @property
    def defaults_take_protection(self) -> bool:
        return self.defaults_take(kindhooks.ADD_PROTECTION)

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
    hooks = kindhooks.declared(info)
    return KindHooks(
        info,
        hooks.set_defaults,
        hooks.validate,
        hooks.validate_takes_old,
        hooks.default_options,
        hooks.version,
    )


def parse_request_object(hooks: KindHooks, req: AdmissionRequest, obj: dict[str, Any]) -> Any:
    """Parse a private copy: models keep schemaless dicts (pod templates) by reference, and defaulters
    mutate those in place — which would silently change the patch baseline."""
    return hooks.model_for(req.kind.version).model_validate(mutable(obj))


def parse_new_and_old(hooks: KindHooks, req: AdmissionRequest) -> tuple[Any, Any | None]:
    """The request's object and, on UPDATE, its old object as models (ValidationError when either
    does not parse)."""
    obj = parse_request_object(hooks, req, req.object or {})
    old = None
    if req.operation == "UPDATE" and req.old_object:
        old = parse_request_object(hooks, req, req.old_object)
    return obj, old


def valid_models(model: type[M], objects: list[dict[str, Any]]) -> list[M]:
    """The objects the model accepts (a namespace's siblings for a conflict check: one the model
    refuses cannot conflict)."""
    parsed = []
    for obj in objects:
        try:
            parsed.append(model.model_validate(obj))
        except ValidationError:
            continue
    return parsed


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
            options[kindhooks.ADD_PROTECTION] = req.operation == "CREATE"
        if hooks.defaults_take(kindhooks.INJECT_TEMPLATE_DEFAULTS):
            options[kindhooks.INJECT_TEMPLATE_DEFAULTS] = inject_template_defaults(
                hooks, req, template_no_defaults
            )
        if hooks.defaults_take(kindhooks.HOST_NETWORK_HOST_PORTS):
            options[kindhooks.HOST_NETWORK_HOST_PORTS] = host_network_host_ports
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


# Kinds whose validating webhook refuses everything while a gate is off (upstream: 403
# "feature-gate X is not enabled"), checked in this order.
KIND_GATES: dict[str, tuple[str, ...]] = {
    "ImagePullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "ImageListPullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "NodeImage": (features.KRUISE_DAEMON,),
    "PodProbeMarker": (features.POD_PROBE_MARKER_GATE, features.KRUISE_DAEMON),
    "ResourceDistribution": (features.RESOURCE_DISTRIBUTION_GATE,),
    "WorkloadSpread": (features.WORKLOAD_SPREAD,),
}


def gated(handler: Handler, gates: FeatureGates, names: tuple[str, ...]) -> Handler:
    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation in ("CREATE", "UPDATE"):
            for name in names:
                if not gates.enabled(name):
                    return deny(403, f"feature-gate {name} is not enabled")
        return await handler(req)

    return handle


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


def default_mutating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return mutating_handler(
        hooks,
        ctx.enabled(features.TEMPLATE_NO_DEFAULTS),
        ctx.enabled(features.DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES),
    )


def default_validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return validating_handler(hooks, deletion_protection=ctx.enabled(features.RESOURCES_DELETION_PROTECTION))


# Upstream's configuration entries of the kinds no concern module handles, keyed (verb, kind): the
# entry's name, the version in its path (as upstream's handler registers it) and its operations.
_WEBHOOKS: dict[tuple[str, str], tuple[str, str | None, tuple[str, ...]]] = {
    ("mutate", "AdvancedCronJob"): ("madvancedcronjob.kb.io", None, CREATE_UPDATE),
    ("mutate", "BroadcastJob"): ("mbroadcastjob.kb.io", None, CREATE_UPDATE),
    ("mutate", "CloneSet"): ("mcloneset.kb.io", "v1alpha1", CREATE_UPDATE),
    ("mutate", "DaemonSet"): ("mdaemonset.kb.io", None, CREATE_UPDATE),
    ("mutate", "ImageListPullJob"): ("mimagelistpulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("mutate", "ImagePullJob"): ("mimagepulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("mutate", "NodeImage"): ("mnodeimage.kb.io", None, CREATE_UPDATE),
    ("mutate", "UnitedDeployment"): ("muniteddeployment.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "ResourceDistribution"): ("vresourcedistribution.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "AdvancedCronJob"): ("vadvancedcronjob.kb.io", None, CREATE_UPDATE),
    ("validate", "BroadcastJob"): ("vbroadcastjob.kb.io", None, CREATE_UPDATE),
    ("validate", "CloneSet"): ("vcloneset.kb.io", "v1alpha1", CREATE_UPDATE_DELETE),
    ("validate", "DaemonSet"): ("vdaemonset.kb.io", None, CREATE_UPDATE),
    ("validate", "ImageListPullJob"): ("vimagelistpulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("validate", "ImagePullJob"): ("vimagepulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("validate", "NodeImage"): ("vnodeimage.kb.io", None, CREATE_UPDATE),
    ("validate", "PodProbeMarker"): ("vpodprobemarker.kb.io", None, CREATE_UPDATE),
    ("validate", "PodUnavailableBudget"): ("vpodunavailablebudget.kb.io", None, CREATE_UPDATE),
    ("validate", "EphemeralJob"): ("vephemeraljobs.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "UnitedDeployment"): ("vuniteddeployment.kb.io", "v1alpha1", CREATE_UPDATE_DELETE),
}


def _generic(info: CRDInfo, verb: str, build: KindBuilder) -> Registration:
    name, path_version, operations = _WEBHOOKS.get((verb, info.kind), (None, None, CREATE_UPDATE))
    return kind_registration(
        info.group, info.kind, verb, build,
        webhook=name, path_version=path_version, operations=operations, fallback=True,
    )  # fmt: skip


REGISTRATIONS = tuple(
    _generic(info, verb, build)
    for info in KINDS
    for verb, build in (("mutate", default_mutating), ("validate", default_validating))
)
