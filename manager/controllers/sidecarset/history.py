"""Writes a SidecarSet's ControllerRevisions (upstream `registerLatestRevision`).

Each pass makes sure the current sidecar part of the SidecarSet is stored as the newest revision
(reusing an equal one, or rolling an equal older one forward), tags it with the custom version,
and prunes history beyond `revisionHistoryLimit`. The decisions are
`kruise.control.sidecarset.revision`; the writes go through the shared `RevisionWriter`. Revisions
live in kruise's own namespace because a SidecarSet is cluster-scoped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from kruise.api.keys import LABEL_SIDECARSET_CUSTOM_VERSION
from kruise.api.objects import labels_of, status_of
from kruise.control.sidecarset import revision as rev
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.manager.writers.revisions import RevisionWriter

log = structlog.get_logger("kruise.manager.sidecarset.history")

MAX_COLLISION_RETRIES = 10


@dataclass(frozen=True)
class Latest:
    name: str
    collision_count: int


class SidecarSetHistory:
    def __init__(self, client: Client, revisions: SharedInformer, namespace: str) -> None:
        self.writer = RevisionWriter(client)
        self.revisions = revisions
        self.namespace = namespace

    async def register_latest(
        self, sidecarset: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
    ) -> Latest:
        """The latest revision (stored by now) and the collisionCount that named it."""
        ordered = rev.owned_revisions(sidecarset, self.revisions.list(), self.namespace)
        collision_count = int(status_of(sidecarset).get("collisionCount") or 0)
        latest: Mapping[str, Any] | None = None
        for _ in range(MAX_COLLISION_RETRIES):
            choice = rev.choose_latest(sidecarset, ordered, self.namespace, collision_count)
            if choice.action == "reuse":
                latest = choice.revision
            elif choice.action == "rollback":
                latest = await self.writer.renumber(choice.revision, choice.number)
                ordered = [r for r in ordered if r is not choice.revision] + [latest]
            else:
                latest = await self.writer.store(choice.revision)
                if latest is None:
                    collision_count += 1
                    continue
                ordered = [*ordered, latest]
            break
        if latest is None:
            raise RuntimeError(
                f"revision hash collided {MAX_COLLISION_RETRIES} times for SidecarSet "
                f"{sidecarset['metadata']['name']}"
            )
        await self._tag_custom_version(latest, rev.custom_version(sidecarset))
        await self._truncate(sidecarset, ordered, pods)
        return Latest(latest["metadata"]["name"], collision_count)

    async def _tag_custom_version(self, revision: Mapping[str, Any], version: str) -> None:
        """`updateCustomVersionLabel`: the latest revision carries the SidecarSet's custom version."""
        labels = labels_of(revision)
        if not version or labels.get(LABEL_SIDECARSET_CUSTOM_VERSION) == version:
            return
        await self.writer.label(revision, {LABEL_SIDECARSET_CUSTOM_VERSION: version})

    async def _truncate(
        self,
        sidecarset: Mapping[str, Any],
        ordered: list[Mapping[str, Any]],
        pods: Iterable[Mapping[str, Any]],
    ) -> None:
        names = rev.revisions_to_delete(sidecarset, ordered, pods)
        await self.writer.delete(self.namespace, names)
        if names:
            log.info(
                "sidecarset revisions pruned", sidecarset=sidecarset["metadata"]["name"], revisions=names
            )
