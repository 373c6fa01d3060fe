"""ControllerRevisions of a workload (CloneSet, Advanced StatefulSet): make the update revision exist,
find the current one, prune the history.

The decisions (reuse, rollback, create; which revisions are dead) are `kruise.control.common.revision`;
this module only writes them, handling the one race the API can answer: a revision name already
taken by different data, which bumps `collisionCount` and hashes again, as upstream does.
Every ControllerRevision write goes through `RevisionWriter` (issue 29): CloneSet and Advanced
StatefulSet use `active_revisions`; kinds with their own history model (Advanced DaemonSet's
`kruise.control.daemonset.history`, UnitedDeployment's, SidecarSet's) decide in `control/` and use the
primitives `store` (create, reuse an equal one, report a collision), `renumber`, `label` and `delete`, so the
canonical `data` encoding (`revision_for_write`) and the collision check exist once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import structlog

from kruise.api.objects import meta_of, spec_of, status_of
from kruise.control.common.revision import (
    choose_revisions,
    revision_for_write,
    revisions_equal,
    revisions_to_truncate,
)
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import CONTROLLER_REVISIONS

log = structlog.get_logger("kruise.manager.revisions")

MAX_COLLISION_RETRIES = 10
DEFAULT_HISTORY_LIMIT = 10


class RevisionWriter:
    """Writes one owner's ControllerRevisions; the owner is any workload whose revisions
    `kruise.control.common.revision` describes (spec.template, status.collisionCount,
    revisionHistoryLimit)."""

    def __init__(self, client: Client, rv_expectations: ResourceVersionExpectations | None = None) -> None:
        """`rv_expectations`: where written revisions are recorded, for owners that wait for them."""
        self.client = client
        self.rv_expectations = rv_expectations

    def _expect(self, revision: dict[str, Any]) -> None:
        if self.rv_expectations is not None:
            self.rv_expectations.expect(revision)

    async def active_revisions(
        self,
        owner: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        vct_hash: str | None = None,
    ) -> tuple[Mapping[str, Any], Mapping[str, Any], int]:
        """(current revision, update revision, collisionCount) with the update revision stored.

        ``vct_hash``: CloneSet's volumeClaimTemplates hash, written on the revisions it creates or
        rolls back to (see `choose_revisions`); None for owners without the annotation."""
        collision_count = int(status_of(owner).get("collisionCount") or 0)
        for _ in range(MAX_COLLISION_RETRIES):
            view = {
                **owner,
                "status": {**status_of(owner), "collisionCount": collision_count},
            }
            choice = choose_revisions(view, revisions, vct_hash)
            if choice.action == "reuse":
                return choice.current, choice.update, collision_count
            if choice.action == "rollback":
                update = await self.renumber(choice.update, choice.new_number, choice.annotations)
                current = update if choice.current is choice.update else choice.current
                return current, update, collision_count
            created = await self.store(choice.update)
            if created is not None:
                current = created if choice.current is choice.update else choice.current
                return current, created, collision_count
            collision_count += 1
        raise RuntimeError(f"revision hash collided {MAX_COLLISION_RETRIES} times for {_name(owner)}")

    async def renumber(
        self, revision: Mapping[str, Any], number: int, annotations: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Give a stored revision a new number (a rollback makes an old revision the newest)."""
        meta = revision["metadata"]
        body: dict[str, Any] = {"revision": number}
        if annotations is not None:
            body["metadata"] = {"annotations": dict(annotations)}
        updated = await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            body,
            meta.get("namespace"),
            patch_type=PatchType.MERGE,
        )
        self._expect(updated)
        return updated

    async def store(self, revision: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored revision, or None when the name is taken by different data (a hash collision)."""
        meta = revision["metadata"]
        try:
            created = await self.client.create(
                CONTROLLER_REVISIONS, revision_for_write(revision), meta.get("namespace")
            )
        except AlreadyExists:
            existing = await self.client.get(CONTROLLER_REVISIONS, meta["name"], meta.get("namespace"))
            if revisions_equal(existing, revision):
                return existing
            log.info("revision hash collision", revision=meta["name"])
            return None
        self._expect(created)
        return created

    async def label(self, revision: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
        """Set labels on a stored revision (SidecarSet's custom version tag)."""
        meta = revision["metadata"]
        updated = await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            {"metadata": {"labels": dict(labels)}},
            meta.get("namespace"),
            patch_type=PatchType.STRATEGIC,
        )
        self._expect(updated)
        return updated

    async def delete(self, namespace: str | None, names: Iterable[str]) -> None:
        """Delete the named revisions; one already gone is not an error."""
        for name in names:
            with contextlib.suppress(NotFound):
                await self.client.delete(CONTROLLER_REVISIONS, name, namespace)

    async def truncate_history(
        self,
        owner: Mapping[str, Any],
        revisions: Iterable[Mapping[str, Any]],
        pod_revisions: Iterable[str],
        current: str,
        update: str,
    ) -> list[str]:
        """Delete non-live revisions beyond revisionHistoryLimit; returns the deleted names."""
        limit = spec_of(owner).get("revisionHistoryLimit")
        limit = DEFAULT_HISTORY_LIMIT if limit is None else int(limit)
        names = revisions_to_truncate(revisions, [current, update, *pod_revisions], limit)
        await self.delete(meta_of(owner).get("namespace"), names)
        return names


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"
