"""One pass over a ResourceDistribution: distribute, clean up, write the status.

Reads come from the caches (namespaces, Secrets, ConfigMaps); each target namespace is handled on
its own, so one failure is recorded in its condition and the others still proceed. Failures other
than a conflict or a missing namespace make the pass end in a rate-limited retry, as upstream
returns an error.
"""

from __future__ import annotations

from collections.abc import Mapping

from kruise.api.objects import Obj
from kruise.control.common.lifecycle import rfc3339
from kruise.control.resourcedistribution import distribution
from kruise.kube.client import Client
from kruise.kube.clock import Clock
from kruise.kube.controller import Result
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONFIGMAPS, RESOURCEDISTRIBUTIONS, SECRETS, ResourceRef
from kruise.manager.writers.status import StatusWriter

REFS = {"Secret": SECRETS, "ConfigMap": CONFIGMAPS}


class ResourceDistributionReconciler:
    def __init__(
        self,
        client: Client,
        *,
        distributions: SharedInformer,
        namespaces: SharedInformer,
        copies: Mapping[str, SharedInformer],
        clock: Clock,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, RESOURCEDISTRIBUTIONS)
        self.distributions = distributions
        self.namespaces = namespaces
        self.copies = copies
        self.clock = clock

    async def reconcile(self, key: str) -> Result | None:
        rd = self.distributions.get(key)
        if rd is None or rd["metadata"].get("deletionTimestamp"):
            return None  # the copies go with it: they are controlled by it
        kind = distribution.resource_kind(rd)
        if kind not in REFS or not distribution.resource_name(rd):
            return None  # the webhook refuses these; nothing to retry
        ref, cache = REFS[kind], self.copies[kind]
        matched, unmatched = distribution.target_namespaces(rd, self.namespaces.list())
        failures: list[distribution.Failure] = []
        for namespace in matched:
            failure = await self._distribute(rd, ref, cache, namespace)
            if failure is not None:
                failures.append(failure)
        succeeded = len(matched) - len(failures)
        for namespace in unmatched:
            failure = await self._clean(rd, ref, cache, namespace)
            if failure is not None:
                failures.append(failure)
        await self.status_writer.write(
            rd, distribution.status(rd, failures, len(matched), succeeded, self._now())
        )
        if any(f.condition in distribution.RETRIED for f in failures):
            return Result(requeue=True)
        return None

    def _now(self) -> str:
        return rfc3339(self.clock.wall())

    async def _distribute(
        self, rd: Obj, ref: ResourceRef, cache: SharedInformer, namespace: str
    ) -> distribution.Failure | None:
        ns = self.namespaces.get(namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return distribution.Failure(
                distribution.NAMESPACE_NOT_EXISTS, namespace, distribution.NAMESPACE_GONE_MESSAGE
            )
        existing = cache.get(f"{namespace}/{distribution.resource_name(rd)}")
        if existing is None:
            try:
                await self.client.create(ref, distribution.desired_copy(rd, namespace), namespace)
            except ApiError as err:
                return distribution.Failure(distribution.CREATE_FAILED, namespace, str(err))
            return None
        if not distribution.is_controlled_by(existing, rd):
            return distribution.Failure(distribution.CONFLICT, namespace, distribution.CONFLICT_MESSAGE)
        if distribution.needs_update(existing, rd):
            try:
                await self.client.update(ref, distribution.desired_copy(rd, namespace, existing))
            except ApiError as err:
                return distribution.Failure(distribution.UPDATE_FAILED, namespace, str(err))
        return None

    async def _clean(
        self, rd: Obj, ref: ResourceRef, cache: SharedInformer, namespace: str
    ) -> distribution.Failure | None:
        ns = self.namespaces.get(namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return None
        existing = cache.get(f"{namespace}/{distribution.resource_name(rd)}")
        if existing is None or not distribution.is_controlled_by(existing, rd):
            return None
        try:
            await self.client.delete(ref, distribution.resource_name(rd), namespace)
        except NotFound:
            return None
        except ApiError as err:
            return distribution.Failure(distribution.DELETE_FAILED, namespace, str(err))
        return None
