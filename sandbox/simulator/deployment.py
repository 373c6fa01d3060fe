"""A minimal apps/v1 Deployment controller: ReplicaSets per template, RollingUpdate and Recreate.

It follows the real controller's arithmetic (maxSurge rounds up, maxUnavailable rounds down,
never both zero; scale the new ReplicaSet up to ``replicas + maxSurge`` total, scale old ones
down while ``replicas - maxUnavailable`` stay available) and status, so ``kubectl rollout
status`` and Kruise's SidecarSet tutorial behave as on a real cluster. The pod-template-hash
is an FNV-32a of the template encoded like Kubernetes' SafeEncodeString (not byte-identical
to the real hash, which hashes Go's printed struct).
"""

from __future__ import annotations

import copy
import math

import orjson

from kruise.sandbox.simulator.client import ApiError, Obj, resource_path
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.events import now_rfc3339
from kruise.sandbox.simulator.owners import controller_of, owned_by, owner_reference, remember

APPS = "apps/v1"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Obj, collision_count: int = 0) -> str:
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count:
        data += str(collision_count).encode()
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in str(value))


def resolve_fenceposts(strategy: Obj, replicas: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as absolute numbers; percentages round up / down; never both 0."""
    rolling = strategy.get("rollingUpdate") or {}

    def value(raw: int | str | None, default: str, round_up: bool) -> int:
        raw = default if raw is None else raw
        if isinstance(raw, int):
            return raw
        if not str(raw).endswith("%"):
            return int(raw)
        exact = int(str(raw)[:-1]) * replicas / 100
        return math.ceil(exact) if round_up else math.floor(exact)

    surge = value(rolling.get("maxSurge"), "25%", True)
    unavailable = value(rolling.get("maxUnavailable"), "25%", False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _template_without_hash(template: Obj) -> Obj:
    template = copy.deepcopy(template)
    labels = (template.get("metadata") or {}).get("labels") or {}
    labels.pop(HASH_LABEL, None)
    return template


def _replicas(rs: Obj) -> int:
    return (rs.get("spec") or {}).get("replicas", 0)


def _available(rs: Obj) -> int:
    return (rs.get("status") or {}).get("availableReplicas", 0)


def _revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def plan_rolling(
    replicas: int, surge: int, unavailable: int, new: Obj, olds: list[Obj]
) -> tuple[int, dict[str, int]]:
    """One RollingUpdate step: the new ReplicaSet's replicas and the old ones' new sizes (by name)."""
    total = _replicas(new) + sum(_replicas(rs) for rs in olds)
    new_size = _replicas(new)
    if new_size < replicas and total < replicas + surge:
        new_size = min(replicas, new_size + (replicas + surge - total))
    elif new_size > replicas:
        new_size = replicas
    sizes = {rs["metadata"]["name"]: _replicas(rs) for rs in olds}
    all_pods = _replicas(new) + sum(sizes.values())
    min_available = replicas - unavailable
    new_unavailable = _replicas(new) - _available(new)
    budget = all_pods - min_available - new_unavailable
    # Old pods that are not available can go first without hurting availability.
    for rs in sorted(olds, key=_revision):
        name = rs["metadata"]["name"]
        unhealthy = sizes[name] - _available(rs)
        if budget <= 0 or unhealthy <= 0:
            continue
        cut = min(unhealthy, budget)
        sizes[name] -= cut
        budget -= cut
    available_total = _available(new) + sum(min(_available(rs), sizes[rs["metadata"]["name"]]) for rs in olds)
    budget = max(0, min(budget, available_total - min_available))
    for rs in sorted(olds, key=_revision):
        name = rs["metadata"]["name"]
        if budget <= 0:
            break
        cut = min(sizes[name], budget)
        sizes[name] -= cut
        budget -= cut
    return new_size, sizes


class DeploymentController(OwnerController):
    api_version = APPS
    kind = "Deployment"
    name = "deployment-controller"

    async def sync(self, deployment: Obj) -> float | None:
        spec = deployment.get("spec") or {}
        replicas = spec.get("replicas", 1)
        owned = [rs for rs in owned_by(self.owned, deployment) if not rs["metadata"].get("deletionTimestamp")]
        template = spec.get("template") or {}
        new = next(
            (
                rs
                for rs in owned
                if _template_without_hash((rs.get("spec") or {}).get("template") or {}) == template
            ),
            None,
        )
        olds = [rs for rs in owned if rs is not new]
        max_revision = max((_revision(rs) for rs in owned), default=0)
        if spec.get("paused"):
            await self._write_status(deployment, new, olds)
            return None
        if new is None:
            new = await self._create_rs(deployment, max_revision + 1, olds)
        elif _revision(new) < max_revision:
            new = await self._update_rs(new, annotations={REVISION: str(max_revision + 1)})
        strategy = spec.get("strategy") or {}
        if strategy.get("type") == "Recreate":
            for rs in olds:
                if _replicas(rs):
                    await self._scale(deployment, rs, 0)
            drained = all((rs.get("status") or {}).get("replicas", 0) == 0 for rs in olds)
            if drained and _replicas(new) != replicas:
                new = await self._scale(deployment, new, replicas)
        else:
            surge, unavailable = resolve_fenceposts(strategy, replicas)
            new_size, old_sizes = plan_rolling(replicas, surge, unavailable, new, olds)
            if new_size != _replicas(new):
                new = await self._scale(deployment, new, new_size, surge)
            for rs in olds:
                size = old_sizes[rs["metadata"]["name"]]
                if size != _replicas(rs):
                    await self._scale(deployment, rs, size, surge)
        await self._cleanup(deployment, olds)
        await self._write_status(deployment, new, olds)
        return None

    async def _create_rs(self, deployment: Obj, revision: int, olds: list[Obj]) -> Obj:
        meta = deployment["metadata"]
        spec = deployment.get("spec") or {}
        collisions = (deployment.get("status") or {}).get("collisionCount", 0)
        pod_hash = template_hash(spec.get("template") or {}, collisions)
        template = copy.deepcopy(spec.get("template") or {})
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        labels = {**(template["metadata"].get("labels") or {})}
        replicas = spec.get("replicas", 1)
        surge, _ = resolve_fenceposts(spec.get("strategy") or {}, replicas)
        rs = {
            "apiVersion": APPS,
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta["namespace"],
                "labels": labels,
                "annotations": {
                    REVISION: str(revision),
                    DESIRED: str(replicas),
                    MAX_REPLICAS: str(replicas + surge),
                },
                "ownerReferences": [owner_reference(deployment)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": spec.get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            created = await self.client.create(resource_path(APPS, "replicasets", meta["namespace"]), rs)
        except ApiError as error:
            if error.status != 409:
                raise
            existing = await self.client.get(
                resource_path(APPS, "replicasets", meta["namespace"], rs["metadata"]["name"])
            )
            if (controller_of(existing) or {}).get("uid") != meta["uid"]:
                raise
            created = existing
        else:
            self.recorder.event(
                deployment,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {rs['metadata']['name']} from 0 to 0",
            )
        remember(self.owned, created)
        return created

    async def _update_rs(
        self, rs: Obj, *, annotations: dict[str, str] | None = None, replicas: int | None = None
    ) -> Obj:
        patch: Obj = {"metadata": {"resourceVersion": rs["metadata"]["resourceVersion"]}}
        if annotations:
            patch["metadata"]["annotations"] = annotations
        if replicas is not None:
            patch["spec"] = {"replicas": replicas}
        meta = rs["metadata"]
        written = await self.client.patch(
            resource_path(APPS, "replicasets", meta["namespace"], meta["name"]), patch
        )
        remember(self.owned, written)
        return written

    async def _scale(self, deployment: Obj, rs: Obj, size: int, surge: int | None = None) -> Obj:
        old = _replicas(rs)
        replicas = (deployment.get("spec") or {}).get("replicas", 1)
        annotations = {DESIRED: str(replicas)}
        if surge is not None:
            annotations[MAX_REPLICAS] = str(replicas + surge)
        written = await self._update_rs(rs, annotations=annotations, replicas=size)
        verb = "up" if size > old else "down"
        self.recorder.event(
            deployment,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled {verb} replica set {rs['metadata']['name']} from {old} to {size}",
        )
        return written

    async def _cleanup(self, deployment: Obj, olds: list[Obj]) -> None:
        limit = (deployment.get("spec") or {}).get("revisionHistoryLimit", 10)
        idle = sorted(
            (rs for rs in olds if _replicas(rs) == 0 and (rs.get("status") or {}).get("replicas", 0) == 0),
            key=_revision,
        )
        for rs in idle[: max(0, len(idle) - limit)]:
            meta = rs["metadata"]
            try:
                await self.client.delete(resource_path(APPS, "replicasets", meta["namespace"], meta["name"]))
            except ApiError as error:
                if not error.not_found:
                    raise

    async def _write_status(self, deployment: Obj, new: Obj | None, olds: list[Obj]) -> None:
        spec = deployment.get("spec") or {}
        meta = deployment["metadata"]
        replicas = spec.get("replicas", 1)
        every = [*([new] if new else []), *olds]

        def total(field: str) -> int:
            return sum((rs.get("status") or {}).get(field, 0) for rs in every)

        available = total("availableReplicas")
        status: Obj = {
            "observedGeneration": meta.get("generation", 1),
            "replicas": total("replicas"),
            "updatedReplicas": (new.get("status") or {}).get("replicas", 0) if new else 0,
            "readyReplicas": total("readyReplicas"),
            "availableReplicas": available,
            "unavailableReplicas": max(0, total("replicas") - available),
        }
        if spec.get("replicas", 1) == 0:
            status["unavailableReplicas"] = 0
        for name in (
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ):
            if status[name] == 0:
                del status[name]
        old_status = deployment.get("status") or {}
        if "collisionCount" in old_status:
            status["collisionCount"] = old_status["collisionCount"]
        _, unavailable = resolve_fenceposts(spec.get("strategy") or {}, replicas)
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            unavailable = replicas
        is_available = available >= replicas - unavailable
        complete = (
            new is not None
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == replicas
            and available >= replicas
        )
        now = now_rfc3339()
        rs_name = new["metadata"]["name"] if new else ""
        wanted = [
            (
                "Available",
                "True" if is_available else "False",
                "MinimumReplicasAvailable" if is_available else "MinimumReplicasUnavailable",
                "Deployment has minimum availability."
                if is_available
                else "Deployment does not have minimum availability.",
            ),
            (
                "Progressing",
                "True",
                "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                f'ReplicaSet "{rs_name}" has successfully progressed.'
                if complete
                else f'ReplicaSet "{rs_name}" is progressing.',
            ),
        ]
        previous = {c.get("type"): c for c in old_status.get("conditions") or []}
        conditions = []
        for kind, state, reason, message in wanted:
            old = previous.get(kind) or {}
            same = (
                old.get("status") == state and old.get("reason") == reason and old.get("message") == message
            )
            conditions.append(
                {
                    "type": kind,
                    "status": state,
                    "lastUpdateTime": old.get("lastUpdateTime", now) if same else now,
                    "lastTransitionTime": old.get("lastTransitionTime", now)
                    if old.get("status") == state
                    else now,
                    "reason": reason,
                    "message": message,
                }
            )
        status["conditions"] = conditions
        if status == old_status:
            return
        annotations = {**(meta.get("annotations") or {})}
        if new is not None and annotations.get(REVISION) != (new["metadata"].get("annotations") or {}).get(
            REVISION
        ):
            revision = (new["metadata"].get("annotations") or {}).get(REVISION)
            written = await self.client.patch(
                resource_path(APPS, "deployments", meta["namespace"], meta["name"]),
                {"metadata": {"annotations": {REVISION: revision}}},
            )
            deployment = {**written, "apiVersion": APPS, "kind": "Deployment"}
            remember(self.owners, written)
        body = {**deployment, "status": status}
        written = await self.client.replace(
            resource_path(APPS, "deployments", meta["namespace"], meta["name"], "status"), body
        )
        remember(self.owners, written)
