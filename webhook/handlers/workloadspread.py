"""WorkloadSpread in the pod webhooks: on CREATE pick the pod's subset, book it in the WorkloadSpread
status and inject it (`/mutate-pod`); on DELETE and `pods/eviction` CREATE book the pod out of its
subset (`/validate-pod`).

The WorkloadSpread governing a pod is found from the webhook's caches (its controller, or the
controller's controller for a Deployment's ReplicaSet). The subset is chosen from the freshest
copy at hand — the one this replica last wrote if newer than the cache — and booked with an
optimistic status update; on a conflict the WorkloadSpread is read afresh from the apiserver and
the choice is made again, so replicas racing for the last slot of a subset cannot both get it. A
per-WorkloadSpread lock keeps this replica's own requests from conflicting with each other.

A pod being deleted or evicted goes into its subset's `deletingPods` with one more missing
replica, through the same optimistic write, so concurrent deletions each free exactly one slot and
none is lost. The controller drops the entry once the pod is gone (or after 15s when it is not).

A dryRun request is left alone (upstream admits it untouched). Errors (an owner missing from the
caches, a status write that keeps conflicting, a bad subset patch) fail the admission so the
workload controller retries the pod.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import structlog
from pydantic import ValidationError

from kruise.api import features
from kruise.api import workloadspread as wsapi
from kruise.api.objects import MutableObj, meta_of, spec_of, status_of
from kruise.api.validation import ErrorType, FieldError, aggregate_message, pydantic_errors
from kruise.control.workloadspread import subsets as wsrules
from kruise.control.workloadspread.injection import inject
from kruise.control.workloadspread.targets import is_builtin_target, matching_spread, workload_replicas
from kruise.control.workloadspread.whitelist import Whitelist, WhitelistError, parse_whitelist
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.resources import WORKLOADSPREADS
from kruise.kube.retry import DEFAULT_BACKOFF, Backoff, optimistic_update
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny
from kruise.webhook.caches import CacheNotCurrent
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindparse import parse_new_and_old, valid_models
from kruise.webhook.handlers.kindregistration import kind_registration
from kruise.webhook.handlers.kindvalidation import validating_handler

log = structlog.get_logger("kruise.webhook.workloadspread")


T = TypeVar("T")

LATE_CACHE_WAIT_SECONDS = 10.0
"""How long a read waits for a cache that is not current before the request is refused (the app's
wait for its other caches is as long; a shorter caller deadline ends it sooner)."""


class SpreadSource(Protocol):
    """Read-only cache answers (informer stores). `owner` and `workload` may raise CacheNotCurrent
    for a cache that must not be read yet."""

    def in_namespace(self, namespace: str) -> list[MutableObj]: ...

    def spread(self, namespace: str, name: str) -> MutableObj | None: ...

    def owner(self, ref: Mapping[str, Any], namespace: str) -> MutableObj | None: ...

    def workload(self, ref: Mapping[str, Any], namespace: str) -> MutableObj | None: ...


def _rv(obj: Mapping[str, Any] | None) -> int:
    try:
        return int(meta_of(obj or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class SpreadKeeper:
    """Books pods into WorkloadSpread subsets for one webhook replica."""

    def __init__(
        self,
        client: Client,
        source: SpreadSource,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_uid: Callable[[], str] = lambda: str(uuid.uuid4()),
        backoff: Backoff = DEFAULT_BACKOFF,
        configuration: Callable[[], Mapping[str, str]] = dict,
    ) -> None:
        """`configuration`: `data` of ConfigMap kruise-configuration (its custom-workload whitelist)."""
        self.client = client
        self.configuration = configuration
        self.source = source
        self.clock = clock
        self.new_uid = new_uid
        self.backoff = backoff
        self._locks: dict[str, asyncio.Lock] = {}
        self._written: dict[str, MutableObj] = {}

    def _freshest(self, cached: MutableObj) -> MutableObj:
        mine = self._written.get(meta_of(cached).get("uid", ""))
        return mine if mine is not None and _rv(mine) > _rv(cached) else cached

    def whitelist(self) -> Whitelist:
        """The custom-workload whitelist; a bad one reads as empty (upstream's webhook ignores the
        error and handles only the built-in workloads)."""
        try:
            return parse_whitelist(self.configuration())
        except WhitelistError as exc:
            log.warning("ignoring the WorkloadSpread custom workload whitelist", error=str(exc))
            return Whitelist()

    @staticmethod
    async def _settled(read: Callable[[], T]) -> T:
        """`read()` once every cache it reaches is current: a custom workload's cache started after
        this process became ready is waited for here, as upstream's lazily started informer is, and
        only by the pods whose owner chain or target reaches it. Raises CacheNotCurrent when it is
        still not current after LATE_CACHE_WAIT_SECONDS (a cache that cannot list, e.g. no RBAC)."""
        while True:
            try:
                return read()
            except CacheNotCurrent as gap:
                try:
                    async with asyncio.timeout(LATE_CACHE_WAIT_SECONDS):
                        await gap.wait()
                except TimeoutError:
                    raise gap from None

    def _replicas(self, ws: Mapping[str, Any], namespace: str) -> int:
        if not wsrules.has_percent_subset(ws):
            return 0
        target = spec_of(ws).get("targetRef") or {}
        return workload_replicas(ws, self.source.workload(target, namespace), self.whitelist())

    async def _book(
        self, matched: MutableObj, change: Callable[[MutableObj, int], MutableObj | None]
    ) -> MutableObj | None:
        """`change` (WorkloadSpread as last read, workload replicas) → the WorkloadSpread to write or
        None, applied with an optimistic status write under this replica's per-WorkloadSpread lock;
        returns the copy `change` last decided on (None when the WorkloadSpread is gone)."""
        meta = matched["metadata"]
        namespace = meta.get("namespace") or ""
        lock = self._locks.setdefault(meta.get("uid") or meta["name"], asyncio.Lock())
        async with lock:
            start = self._freshest(matched)
            replicas = await self._settled(lambda: self._replicas(start, namespace))
            used: list[MutableObj] = []

            def decide(current: MutableObj) -> MutableObj | None:
                used[:] = [current]
                return change(current, replicas)

            def read() -> Awaitable[MutableObj]:
                return self.client.get(WORKLOADSPREADS, meta["name"], namespace)

            async def update(first: MutableObj) -> MutableObj | None:
                return await optimistic_update(
                    first,
                    decide,
                    read=read,
                    write=lambda updated: self.client.update_status(WORKLOADSPREADS, updated),
                    backoff=self.backoff,
                )

            try:
                written = await update(start)
                if written is None and used and used[0] is start:
                    # "Nothing to write" was decided from a cached copy, which may not show a slot
                    # freed (or a pod booked) a moment ago; with nothing written no Conflict would
                    # ever correct it, so confirm the decision once against the apiserver.
                    written = await update(await read())
            except NotFound:
                return None
            if written is not None:
                self._written[meta.get("uid", "")] = written
        return used[0]

    async def on_create(self, pod: MutableObj) -> MutableObj | None:
        """The pod with its subset injected, or None when no WorkloadSpread governs it or no subset
        has room. Raises OwnerNotFound, PatchError, MaxReplicasError, CacheNotCurrent (see
        `_settled`), or the API error of a write that could not be made."""
        namespace = meta_of(pod).get("namespace") or ""
        spreads = self.source.in_namespace(namespace)
        owner_kinds = self.whitelist().owner_kinds()
        matched = await self._settled(lambda: matching_spread(pod, spreads, self.source.owner, owner_kinds))
        if matched is None:
            return None
        chosen: list[wsrules.Assignment] = []

        def choose(current: MutableObj, replicas: int) -> MutableObj | None:
            assignment = wsrules.assign_for_creation(current, pod, self.clock(), replicas, self.new_uid)
            chosen[:] = [assignment]
            return assignment.updated

        used = await self._book(matched, choose)
        if used is None:
            return None
        assignment = chosen[0]
        if assignment.subset is None:
            log.info(
                "no subset has room",
                workloadspread=f"{namespace}/{matched['metadata']['name']}",
                resource_version=meta_of(used).get("resourceVersion"),
                books=status_of(used).get("versionedSubsetStatuses"),
            )
            return None
        return inject(pod, used, assignment.subset, assignment.uid)

    async def on_delete(self, pod: MutableObj) -> bool:
        """Book a pod being deleted or evicted out of its subset (`deletingPods`, one more missing
        replica). False when no books change: the pod is not an active, controlled pod annotated
        with a WorkloadSpread, the WorkloadSpread is not in the cache or is gone, or the books do not
        count this pod (see `record_deletion`). Raises MaxReplicasError, CacheNotCurrent (see
        `_settled`), or the API error of a write that could not be made."""
        booking = wsrules.deletion_booking(pod)
        if booking is None:
            return False
        namespace = meta_of(pod).get("namespace") or ""
        matched = self.source.spread(namespace, booking.name)
        if matched is None:
            return False
        changed: list[bool] = [False]

        def book_out(current: MutableObj, replicas: int) -> MutableObj | None:
            updated = wsrules.record_deletion(current, pod, booking.subset, self.clock(), replicas)
            changed[0] = updated is not None
            return updated

        used = await self._book(matched, book_out)
        return used is not None and changed[0]


PodLookup = Callable[[str, str], MutableObj | None]
"""(namespace, name) → the pod from the webhook's cache, or None."""


def _dry_run(req: AdmissionRequest, options: Mapping[str, Any] | None) -> bool:
    return bool(req.dry_run or (options or {}).get("dryRun"))


def pod_deletion_check(
    keeper: SpreadKeeper, pod_of: PodLookup
) -> Callable[[AdmissionRequest], Awaitable[Decision | None]]:
    """The WorkloadSpread part of `/validate-pod` (upstream runs it before the PodUnavailableBudget
    checks): a pod DELETE (not of a subresource) books the old object out of its subset, a
    `pods/eviction` CREATE the cached pod. Returns a refusal (400, as upstream's admission.Errored)
    when the booking cannot be made, else None: the request goes on to the next check. Dry runs and
    every other operation book nothing."""

    async def check(req: AdmissionRequest) -> Decision | None:
        if req.resource.resource != "pods":
            return None
        if req.operation == "DELETE" and not req.sub_resource:
            pod = req.old_object or {}
            if not pod.get("metadata") or _dry_run(req, req.options):
                return None
        elif req.operation == "CREATE" and req.sub_resource == "eviction":
            if _dry_run(req, (req.object or {}).get("deleteOptions")):
                return None
            found = pod_of(req.namespace or "", req.name or "")
            if found is None:
                # upstream reads the pod with its cached client and fails on any error
                return deny(400, f'pods "{req.name}" not found')
            pod = found
        else:
            return None
        try:
            await keeper.on_delete(pod)
        except (wsrules.MaxReplicasError, ApiError, CacheNotCurrent) as exc:
            return deny(400, str(exc))
        return None

    return check


def spread_validating_handler(
    hooks: KindHooks,
    configuration: Callable[[], Mapping[str, str]],
    deletion_protection: bool = False,
    others: Callable[[str], list[MutableObj]] | None = None,
) -> Callable[[AdmissionRequest], Awaitable[Decision]]:
    """`/validate-apps-kruise-io-v1alpha1-workloadspread`: the kind's validation with kruise-configuration's
    custom-workload whitelist (a targetRef outside the built-in kinds must be whitelisted), and on
    UPDATE the rule that the target may not change. A whitelist that does not parse refuses only a
    WorkloadSpread that needs it (upstream reads it only for non-built-in targets), as an internal
    error on `spec.targetRef` naming the ConfigMap key. `others` (namespace → its WorkloadSpreads):
    refuse a second WorkloadSpread on the same workload (group, kind, name) with upstream's
    "ws.spec.targetRef is in conflict with other WorkloadSpread <name>"; None skips that check."""
    fallback = validating_handler(hooks, deletion_protection=deletion_protection)

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation not in ("CREATE", "UPDATE") or req.object is None:
            return await fallback(req)
        try:
            obj, old = parse_new_and_old(hooks, req)
        except ValidationError as exc:
            return deny(422, aggregate_message(pydantic_errors(exc)))
        target = spec_of(req.object).get("targetRef") or {}
        errors: list[FieldError] = []
        whitelist: frozenset[tuple[str, str]] = frozenset()
        if target and not is_builtin_target(target):
            try:
                whitelist = parse_whitelist(configuration()).target_kinds()
            except WhitelistError as exc:
                errors.append(FieldError(ErrorType.Internal, "spec.targetRef", detail=str(exc)))
        namespace = obj.metadata.namespace or req.namespace or ""
        siblings = valid_models(wsapi.WorkloadSpread, others(namespace)) if others is not None else []
        errors.extend(wsapi.validate(obj, whitelist, siblings))
        if old is not None:
            errors.extend(wsapi.validate_update(obj, old))
        if errors:
            return deny(422, aggregate_message(errors))
        return allow()

    return handle


def _validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    """A conflict with another WorkloadSpread is checked against the keeper's cache, so only with it."""
    return spread_validating_handler(
        hooks,
        ctx.configuration,
        deletion_protection=ctx.enabled(features.RESOURCES_DELETION_PROTECTION),
        others=ctx.spreads.source.in_namespace if ctx.spreads is not None else None,
    )


REGISTRATIONS = (
    kind_registration(
        wsapi.GROUP, "WorkloadSpread", "validate", _validating,
        webhook="vworkloadspread.kb.io", path_version="v1alpha1",
    ),
)  # fmt: skip
