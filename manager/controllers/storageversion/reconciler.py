"""Migrates one Kruise CRD whose status.storedVersions lists more than its storage version.

Level-triggered on the CRD: an API set switch (`helm upgrade --set apiSet=...`, `kubectl apply -f
crds/`) changes storage versions or appends to storedVersions, the CRD informer sees it, and this
rewrites the kind's objects. The rewrite reads at the storage version, so objects stored at the other
version go through kruise-webhook's `/convert`; while it is not reachable the reconcile fails and is
retried with backoff, leaving every object readable as it was.
"""

from __future__ import annotations

import structlog

from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.informer import SharedInformer
from kruise.kube.storageversion import StorageVersionChanged, established, migrate, needs_migration

log = structlog.get_logger("kruise.manager.storageversion")


class StorageVersionReconciler:
    def __init__(self, client: Client, crds: SharedInformer) -> None:
        self.client = client
        self.crds = crds

    async def reconcile(self, key: str) -> Result | None:
        crd = self.crds.get(key)
        if crd is None or not needs_migration(crd) or not established(crd):
            return None  # an Established condition arriving later is an update event of its own
        try:
            done = await migrate(self.client, key)
        except StorageVersionChanged:
            return Result(requeue=True)
        if done is not None:
            log.info(
                "migrated stored objects to the storage version",
                crd=done.crd,
                storage_version=done.storage_version,
                rewritten=done.rewritten,
                dropped_stored_versions=list(done.dropped),
            )
        return None
