"""What happens around writes: deletion (grace, finalizers, propagation), the garbage collector,
namespace termination, CRD establishment and the built-in validation clients depend on.

The garbage collector and the namespace controller are kube-controller-manager's, API clients on a
real cluster: their deletes and updates pass admission (`controllerwrites`) under their service
accounts, and a refused one is retried with a growing delay, as their work queues do. The CRD
finalizer is apiextensions-apiserver's own and deletes custom resources in storage, without admission,
like the real one. Work items are keyed and coalesced: one run per key at a time, rerun once when
asked again meanwhile.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from kruise.sandbox.apiserver import crdstorage, crdversions, errors, serviceaccounts
from kruise.sandbox.apiserver.admission import AdmissionDenied
from kruise.sandbox.apiserver.controllerwrites import (
    GARBAGE_COLLECTOR,
    NAMESPACE_CONTROLLER,
    ControllerWrites,
)
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.features import features_for
from kruise.sandbox.apiserver.handlers.writes import stamp_new
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.selectors import labels_match, selector_from_label_selector
from kruise.sandbox.apiserver.store import ResKey
from kruise.sandbox.apiserver.validation import validate_builtin

if TYPE_CHECKING:
    from kruise.sandbox.apiserver.server import ApiServer

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
NS_KEY = ("", "namespaces")
POD_KEY = ("", "pods")
# what the serviceaccount and root-ca-cert-publisher controllers keep in every namespace
_NAMESPACE_DEFAULTS = {
    (("", "serviceaccounts"), serviceaccounts.DEFAULT_NAME),
    (("", "configmaps"), serviceaccounts.ROOT_CA_CONFIGMAP),
}
CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
# a refused controller write is retried after 5 ms, doubling up to this (kube-controller-manager's
# queues back off to 60 s or 1000 s; kept short so a cluster recovers quickly once a webhook relents)
_RETRY_FIRST, _RETRY_MAX = 0.005, 1.0
_log = logging.getLogger(__name__)


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


Change = Callable[[dict[str, Any]], dict[str, Any]]


def _without_owner(uid: str) -> Change:
    """The GC's patch of a dependent: the ownerReference to `uid` removed."""

    def change(obj: dict[str, Any]) -> dict[str, Any]:
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        if refs:
            obj["metadata"]["ownerReferences"] = refs
        else:
            obj["metadata"].pop("ownerReferences", None)
        return obj

    return change


def _without_finalizer(finalizer: str) -> Change:
    def change(obj: dict[str, Any]) -> dict[str, Any]:
        rest = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        if rest:
            obj["metadata"]["finalizers"] = rest
        else:
            obj["metadata"].pop("finalizers", None)
        return obj

    return change


def _without_spec_finalizer(finalizer: str) -> Change:
    """The namespace controller's finalize: `finalizer` removed from a Namespace's spec.finalizers."""

    def change(obj: dict[str, Any]) -> dict[str, Any]:
        spec = obj.setdefault("spec", {})
        rest = [f for f in spec.get("finalizers") or [] if f != finalizer]
        if rest:
            spec["finalizers"] = rest
        else:
            spec.pop("finalizers", None)
        return obj

    return change


class Lifecycle:
    def __init__(self, server: ApiServer):
        self.server = server
        self.store = server.store
        # owner uid -> {(res, ns, name)} of objects listing it in ownerReferences
        self._dependents: dict[str, set[tuple[ResKey, str, str]]] = {}
        self._uids: dict[str, tuple[ResKey, str, str]] = {}
        self._next_ip = 9
        self.gc = ControllerWrites(server, GARBAGE_COLLECTOR)
        self.namespace_controller = ControllerWrites(server, NAMESPACE_CONTROLLER)
        self._busy: set[tuple[Any, ...]] = set()
        self._again: set[tuple[Any, ...]] = set()

    # ------------------------------------------------------------ indexes
    def _index(self, res: ResKey, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        meta = obj["metadata"]
        ident = (res, meta.get("namespace", ""), meta["name"])
        self._uids[meta["uid"]] = ident
        before = {r["uid"] for r in (old or {}).get("metadata", {}).get("ownerReferences") or []}
        after = {r["uid"] for r in meta.get("ownerReferences") or [] if "uid" in r}
        for uid in before - after:
            self._dependents.get(uid, set()).discard(ident)
        for uid in after:
            self._dependents.setdefault(uid, set()).add(ident)
        for ref in meta.get("ownerReferences") or []:
            uid = ref.get("uid")
            if uid is None or uid in before or uid in self._uids:
                continue
            # kube's GC checks a newly named owner ("virtual node"): one already gone leaves the
            # dependent to collect, e.g. a claim re-owned to a pod that finished terminating meanwhile.
            # An owner of a kind the server does not serve cannot be looked up: the GC leaves the
            # dependent alone (it retries the REST mapping) rather than deleting it.
            if self.server.type_by_kind(ref.get("apiVersion", ""), ref.get("kind", "")) is None:
                continue
            self._enqueue(("collect", uid), lambda uid=uid: self._collect_dependents(uid))

    def _unindex(self, res: ResKey, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ident = (res, meta.get("namespace", ""), meta["name"])
        self._uids.pop(meta["uid"], None)
        for ref in meta.get("ownerReferences") or []:
            self._dependents.get(ref.get("uid", ""), set()).discard(ident)

    def dependents_of(self, uid: str) -> list[tuple[ResKey, dict[str, Any]]]:
        out = []
        for res, ns, name in list(self._dependents.get(uid, ())):
            obj = self.store.get(res, ns, name)
            if obj is not None:
                out.append((res, obj))
        return out

    def _type_of(self, res: ResKey) -> ResourceType | None:
        return self.server.storage_type(*res)

    def _later(self, fn: Any, *args: Any, delay: float = 0.0) -> None:
        loop = asyncio.get_running_loop()
        if delay:
            loop.call_later(delay, fn, *args)
        else:
            loop.call_soon(fn, *args)

    def _enqueue(self, key: tuple[Any, ...], work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` as a controller's work item: never twice at once for one key, once more when
        asked again while running, retried with backoff while it fails (a webhook refusing)."""
        if key in self._busy:
            self._again.add(key)
            return
        self._busy.add(key)
        self.server.spawn(self._work(key, work))

    async def _work(self, key: tuple[Any, ...], work: Callable[[], Awaitable[None]]) -> None:
        delay = _RETRY_FIRST
        try:
            while True:
                self._again.discard(key)
                try:
                    await work()
                except Exception as exc:  # the controller logs and requeues whatever failed
                    _log.info("%s: %s; retrying in %.3fs", key, exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, _RETRY_MAX)
                    self._again.add(key)
                if key not in self._again:
                    return
        finally:
            self._busy.discard(key)

    # ------------------------------------------------------------ write hooks
    def prepare_create(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        if rt.key == ("", "services"):
            self._allocate_cluster_ip(obj)
        if rt.key == CRD_KEY:
            finalizers = obj["metadata"].setdefault("finalizers", [])
            if CRD_CLEANUP not in finalizers:
                finalizers.append(CRD_CLEANUP)
            obj["status"] = {
                "conditions": [],
                "acceptedNames": {"kind": "", "plural": ""},
                "storedVersions": crdversions.on_create(obj),
            }

    def prepare_update(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any]) -> None:
        """The kind's PrepareForUpdate for an update of the object itself (not a subresource)."""
        if rt.key == CRD_KEY:
            crdversions.prepare_update(obj, old)

    def _allocate_cluster_ip(self, svc: dict[str, Any]) -> None:
        """The service-cluster-ip-range allocator, sequential from 10.96.0.10 (10.96.0.1 is `kubernetes`)."""
        spec = svc.setdefault("spec", {})
        if spec.get("type") == "ExternalName":
            return
        if spec.get("clusterIP") in (None, ""):
            self._next_ip += 1
            n = self._next_ip
            spec["clusterIP"] = f"10.96.{n // 256}.{n % 256}"
        spec.setdefault("clusterIPs", [spec["clusterIP"]])

    def after_write(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        self._index(rt.key, obj, old)
        meta = obj["metadata"]
        changed_crd = old is None or old.get("spec") != obj.get("spec")
        if rt.key == CRD_KEY and old is not None and crdstorage.redefined(old, obj):
            self.store.restart_watches(crdstorage.resource_of(old))
        if rt.key == CRD_KEY and not meta.get("deletionTimestamp") and changed_crd:
            self.server.register_crd(obj)
            self._later(self._establish, meta["name"], delay=self.server.crd_establish_delay)
        if meta.get("deletionTimestamp"):
            self._queue_finalize(rt.key, meta.get("namespace", ""), meta["name"])
        elif rt.key == NS_KEY and old is None:
            self.ensure_namespace_objects(meta["name"])

    def can_finish(self, rt: ResourceType, obj: dict[str, Any]) -> bool:
        """Finalizers are gone: is the object deleted now? Bound pods also wait for the kubelet's grace 0."""
        if rt.key == POD_KEY:
            return obj["metadata"].get("deletionGracePeriodSeconds", 0) == 0
        if rt.key == NS_KEY:
            return not (obj.get("spec") or {}).get("finalizers")
        return True

    def remove(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        gone = self.store.remove(rt.key, obj)
        self._unindex(rt.key, obj)
        meta = obj["metadata"]
        uid = meta["uid"]
        self._enqueue(("collect", uid), lambda: self._collect_dependents(uid))
        for ref in meta.get("ownerReferences") or []:
            self._owner_check(ref.get("uid", ""))
        ns = meta.get("namespace")
        if ns:
            self._queue_namespace(ns)
            if (rt.key, meta["name"]) in _NAMESPACE_DEFAULTS:
                self._later(self.ensure_namespace_objects, ns)
        if rt.key == CRD_KEY:
            self.server.unregister_crd(meta["name"])
        return gone

    # ------------------------------------------------------------ deletion
    def delete(
        self, rt: ResourceType, obj: dict[str, Any], options: dict[str, Any], dry_run: bool
    ) -> dict[str, Any] | None:
        meta = obj["metadata"]
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise errors.invalid(
                rt.group,
                "DeleteOptions",
                meta["name"],
                [
                    errors.field_error(
                        "FieldValueNotSupported",
                        "propagationPolicy",
                        policy,
                        'supported values: "Foreground", "Background", "Orphan", "nil"',
                    )
                ],
            )
        grace = self._grace(rt, obj, options.get("gracePeriodSeconds"))
        new = copy.deepcopy(obj)
        nmeta = new["metadata"]
        finalizers = list(nmeta.get("finalizers") or [])
        if policy == "Foreground" and FOREGROUND not in finalizers:
            finalizers.append(FOREGROUND)
        if policy == "Orphan" and ORPHAN not in finalizers:
            finalizers.append(ORPHAN)
        if rt.key == NS_KEY:
            if nmeta.get("deletionTimestamp"):
                return obj
            nmeta["deletionTimestamp"] = _iso(datetime.now(UTC))
            nmeta["deletionGracePeriodSeconds"] = 0
            nmeta["finalizers"] = finalizers
            if not nmeta["finalizers"]:
                del nmeta["finalizers"]
            new.setdefault("status", {})["phase"] = "Terminating"
            if dry_run:
                return new
            self.store.put(rt.key, new, "MODIFIED", obj)
            self._queue_namespace(meta["name"])
            return new
        if nmeta.get("deletionTimestamp"):
            current = nmeta.get("deletionGracePeriodSeconds", 0)
            if grace < current:
                nmeta["deletionGracePeriodSeconds"] = grace
                nmeta["deletionTimestamp"] = _iso(datetime.now(UTC) + timedelta(seconds=grace))
            if finalizers != list(nmeta.get("finalizers") or []):
                nmeta["finalizers"] = finalizers
            if dry_run:
                return new
            if not finalizers and grace == 0:
                return self.remove(rt, self.store.get(rt.key, meta.get("namespace", ""), meta["name"]) or new)
            if new != obj:
                self.store.put(rt.key, new, "MODIFIED", obj)
            return new
        if finalizers or grace > 0:
            nmeta["deletionTimestamp"] = _iso(datetime.now(UTC) + timedelta(seconds=grace))
            nmeta["deletionGracePeriodSeconds"] = grace
            if finalizers:
                nmeta["finalizers"] = finalizers
            if dry_run:
                return new
            if "generation" in nmeta:
                nmeta["generation"] += 1
            stored = self.store.put(rt.key, new, "MODIFIED", obj)
            self.after_write(rt, stored, obj)
            return stored
        if dry_run:
            return obj
        return self.remove(rt, obj)

    def _grace(self, rt: ResourceType, obj: dict[str, Any], requested: int | None) -> int:
        if rt.key != POD_KEY:
            return 0
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds", 30)
        return max(0, int(grace))

    # ------------------------------------------------------------ finalizer-driven controllers
    def _queue_finalize(self, res: ResKey, ns: str, name: str) -> None:
        self._enqueue(("finalize", res, ns, name), lambda: self._finalize_step(res, ns, name))

    async def _finalize_step(self, res: ResKey, ns: str, name: str) -> None:
        """Work the system finalizers of a deleting object: orphan and foregroundDeletion (the
        garbage collector's, through admission) and the CRD cleanup (apiextensions-apiserver's)."""
        obj = self.store.get(res, ns, name)
        if obj is None or not obj["metadata"].get("deletionTimestamp"):
            return
        finalizers = list(obj["metadata"].get("finalizers") or [])
        uid = obj["metadata"]["uid"]
        owner_rt = self._type_of(res)
        if owner_rt is None:
            return
        if ORPHAN in finalizers:
            for dep_res, dep in self.dependents_of(uid):
                dep_rt = self._type_of(dep_res)
                if dep_rt is not None:
                    dmeta = dep["metadata"]
                    await self.gc.update(
                        dep_rt, dmeta.get("namespace", ""), dmeta["name"], _without_owner(uid)
                    )
            await self.gc.update(owner_rt, ns, name, _without_finalizer(ORPHAN))
            return
        if FOREGROUND in finalizers:
            for dep_res, dep in self.dependents_of(uid):
                rt = self._type_of(dep_res)
                if rt is not None and not dep["metadata"].get("deletionTimestamp"):
                    await self.gc.delete(rt, dep, "Foreground")
            blocking = [
                d
                for _, d in self.dependents_of(uid)
                if any(
                    r.get("uid") == uid and r.get("blockOwnerDeletion")
                    for r in d["metadata"].get("ownerReferences") or []
                )
            ]
            if not blocking:
                await self.gc.update(owner_rt, ns, name, _without_finalizer(FOREGROUND))
            return
        if res == CRD_KEY and CRD_CLEANUP in finalizers:
            spec = obj.get("spec") or {}
            cr_key = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
            remaining = list(self.store.list(cr_key))
            rt = self._type_of(cr_key)
            for cr in remaining:
                if rt is not None and not cr["metadata"].get("deletionTimestamp"):
                    self.delete(rt, cr, {}, False)
            if not list(self.store.list(cr_key)):
                self.commit_update(res, _without_finalizer(CRD_CLEANUP)(copy.deepcopy(obj)), obj)
            else:
                self._later(self._queue_finalize, res, ns, name, delay=0.05)

    def commit_update(self, res: ResKey, new: dict[str, Any], old: dict[str, Any]) -> None:
        """Store a controller's admitted update, or finish the deletion when nothing holds the object."""
        rt = self._type_of(res)
        meta = new["metadata"]
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and rt is not None
            and self.can_finish(rt, new)
        ):
            self.store.put(res, new, "MODIFIED", old)
            self.remove(rt, new)
            return
        stored = self.store.put(res, new, "MODIFIED", old)
        if rt is not None:
            self.after_write(rt, stored, old)

    async def _collect_dependents(self, uid: str) -> None:
        """Background GC: dependents of a gone owner are deleted once no owner of theirs remains;
        a dependent with other live owners only loses the reference to the gone one."""
        for res, dep in self.dependents_of(uid):
            refs = dep["metadata"].get("ownerReferences") or []
            alive = [r for r in refs if r.get("uid") != uid and r.get("uid") in self._uids]
            rt = self._type_of(res)
            if rt is None:
                continue
            if alive:
                dmeta = dep["metadata"]
                await self.gc.update(rt, dmeta.get("namespace", ""), dmeta["name"], _without_owner(uid))
            elif not dep["metadata"].get("deletionTimestamp"):
                await self.gc.delete(rt, dep, "Background")
        if not self.dependents_of(uid):
            self._dependents.pop(uid, None)

    def _owner_check(self, uid: str) -> None:
        ident = self._uids.get(uid)
        if ident is not None:
            self._queue_finalize(*ident)

    # ------------------------------------------------------------ namespaces
    def ensure_namespace_objects(self, namespace: str) -> None:
        """kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers: an active
        namespace has a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap, recreated when
        deleted. Done at once on namespace creation, so a pod created right after finds them (the real
        ServiceAccount admission retries the `default` lookup for the same effect)."""
        ns = self.store.get(NS_KEY, "", namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        for res, obj in serviceaccounts.namespace_objects(namespace, self.server.ca_pem):
            rt = self._type_of(res)
            if rt is None or self.store.get(res, namespace, obj["metadata"]["name"]) is not None:
                continue
            stamp_new(obj, rt)
            self.after_write(rt, self.store.put(res, obj, "ADDED"), None)

    def _queue_namespace(self, name: str) -> None:
        self._enqueue(("namespace", name), lambda: self._namespace_step(name))

    async def _namespace_step(self, name: str) -> None:
        """The namespace controller: delete everything in a terminating namespace, then drop the
        `kubernetes` finalizer through namespaces/<name>/finalize. A refused delete does not stop
        the others; it fails the step (retried) and the namespace stays Terminating."""
        ns = self.store.get(NS_KEY, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        failure: Exception | None = None
        for res in self.store.resources():
            rt = self._type_of(res)
            if rt is None or not rt.namespaced:
                continue
            for obj in list(self.store.list(res, name)):
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    await self.namespace_controller.delete(rt, obj, "Background")
                except (AdmissionDenied, StatusError) as exc:
                    failure = failure or exc
        if failure is not None:
            raise failure
        if any(self.store.count(res, name) for res in self.store.resources()):
            return  # what is left is terminating; its removal queues this step again
        ns_rt = self._type_of(NS_KEY)
        assert ns_rt is not None
        await self.namespace_controller.update(
            ns_rt, "", name, _without_spec_finalizer("kubernetes"), sub="finalize"
        )

    # ------------------------------------------------------------ CRDs
    def _establish(self, name: str) -> None:
        crd = self.store.get(CRD_KEY, "", name)
        if crd is None or crd["metadata"].get("deletionTimestamp"):
            return
        new = copy.deepcopy(crd)
        now = _iso(datetime.now(UTC))
        names = dict(new["spec"].get("names") or {})
        status = new.setdefault("status", {})
        status["acceptedNames"] = names
        conditions = [
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ]
        old_conds = {c["type"]: c for c in status.get("conditions") or []}
        status["conditions"] = [
            old_conds.get(c["type"], c) if old_conds.get(c["type"], {}).get("status") == "True" else c
            for c in conditions
        ]
        if new != crd:
            self.store.put(CRD_KEY, new, "MODIFIED", crd)
            if crdstorage.redefined(crd, new):
                self.store.restart_watches(crdstorage.resource_of(crd))

    # ------------------------------------------------------------ eviction
    def check_disruption_budgets(self, pod: dict[str, Any], dry_run: bool) -> None:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending"):
            return
        ns = pod["metadata"].get("namespace", "")
        labels = pod["metadata"].get("labels") or {}
        pdb_key = ("policy", "poddisruptionbudgets")
        for pdb in list(self.store.list(pdb_key, ns)):
            reqs = selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
            if reqs is None or not reqs or not labels_match(reqs, labels):
                continue
            status = pdb.get("status") or {}
            message = "Cannot evict pod as it would violate the pod's disruption budget."
            if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
                raise StatusError(
                    429,
                    "TooManyRequests",
                    message,
                    {
                        "causes": [
                            {
                                "reason": "DisruptionBudget",
                                "message": "observedGeneration must be >= generation",
                            }
                        ]
                    },
                )
            if status.get("disruptionsAllowed", 0) <= 0:
                raise StatusError(
                    429,
                    "TooManyRequests",
                    message,
                    {
                        "causes": [
                            {
                                "reason": "DisruptionBudget",
                                "message": f"The disruption budget {pdb['metadata']['name']} needs "
                                f"{status.get('desiredHealthy', 0)} healthy pods and has "
                                f"{status.get('currentHealthy', 0)} currently",
                            }
                        ]
                    },
                )
            if not dry_run:
                new = copy.deepcopy(pdb)
                new["status"]["disruptionsAllowed"] -= 1
                new["status"].setdefault("disruptedPods", {})[pod["metadata"]["name"]] = _iso(
                    datetime.now(UTC)
                )
                self.store.put(pdb_key, new, "MODIFIED", pdb)

    # ------------------------------------------------------------ built-in validation
    def validate_builtin(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> list[dict]:
        return validate_builtin(rt, obj, old, features_for(self.server.git_version))
