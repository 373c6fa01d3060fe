"""Writes a SidecarSet's ControllerRevisions (upstream `registerLatestRevision`).

Each pass makes sure the current sidecar part of the SidecarSet is stored as the newest revision
(reusing an equal one, or rolling an equal older one forward), tags it with the custom version,
and prunes history beyond `revisionHistoryLimit`. The decisions are
`kruise.control.sidecarset.revision`; this module only talks to the API. Revisions live in kruise's
own namespace because a SidecarSet is cluster-scoped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from kruise.api.keys import LABEL_SIDECARSET_CUSTOM_VERSION
from kruise.api.objects import labels_of, status_of
from kruise.control.revision import revision_for_write, revisions_equal
from kruise.control.sidecarset import revision as rev
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTROLLER_REVISIONS

log = structlog.get_logger("kruise.manager.sidecarset.history")

MAX_COLLISION_RETRIES = 10


@dataclass(frozen=True)
class Latest:
    name: str
    collision_count: int


class SidecarSetHistory:
    def __init__(self, client: Client, revisions: SharedInformer, namespace: str) -> None:
        self.client = client
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
                latest = await self._renumber(choice.revision, choice.number)
                ordered = [r for r in ordered if r is not choice.revision] + [latest]
            else:
                latest = await self._create(choice.revision)
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

    async def _renumber(self, revision: Mapping[str, Any], number: int) -> dict[str, Any]:
        meta = revision["metadata"]
        return await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            {"revision": number},
            meta["namespace"],
            patch_type=PatchType.MERGE,
        )

    async def _create(self, revision: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored revision, or None when its name is taken by different data (a collision)."""
        meta = revision["metadata"]
        try:
            return await self.client.create(
                CONTROLLER_REVISIONS, revision_for_write(revision), meta["namespace"]
            )
        except AlreadyExists:
            existing = await self.client.get(CONTROLLER_REVISIONS, meta["name"], meta["namespace"])
            if revisions_equal(existing, revision):
                return existing
            log.info("sidecarset revision hash collision", revision=meta["name"])
            return None

    async def _tag_custom_version(self, revision: Mapping[str, Any], version: str) -> None:
        """`updateCustomVersionLabel`: the latest revision carries the SidecarSet's custom version."""
        labels = labels_of(revision)
        if not version or labels.get(LABEL_SIDECARSET_CUSTOM_VERSION) == version:
            return
        meta = revision["metadata"]
        await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            {"metadata": {"labels": {LABEL_SIDECARSET_CUSTOM_VERSION: version}}},
            meta["namespace"],
            patch_type=PatchType.STRATEGIC,
        )

    async def _truncate(
        self,
        sidecarset: Mapping[str, Any],
        ordered: list[Mapping[str, Any]],
        pods: Iterable[Mapping[str, Any]],
    ) -> None:
        for name in rev.revisions_to_delete(sidecarset, ordered, pods):
            with contextlib.suppress(NotFound):
                await self.client.delete(CONTROLLER_REVISIONS, name, self.namespace)
                log.info(
                    "sidecarset revision pruned", sidecarset=sidecarset["metadata"]["name"], revision=name
                )
