"""One NodeImage reconcile: make the node's NodeImage exist, mirror its labels, or delete it.

A node's NodeImage is created `--nodeimage-creation-delay` (30 s) after the node turned Ready, so a
flapping node does not churn objects; it is deleted with the node (unless labelled
`apps.kruise.io/fake-nodeimage`, which tests use to keep a NodeImage without a node). kruise-daemon
on that node pulls what the spec lists and writes the status.

The spec is kept tidy too (`kruise.control.nodeimage.cleanup`): tags whose ImagePullJobs are all gone, tags
without `createdAt` and finished tags past `ttlSecondsAfterFinished` are removed, with images left
without tags, and pull secret references whose Secret is gone unless their v1beta1 `mode` is
`batch` (read from, and written back to, the conversion-data annotation: see
`kruise.control.nodeimage.modes`). When the spec is already tidy, the status is checked for
timeouts: a tag the node has not answered for 10 minutes, or one still unfinished 10 minutes past
its activeDeadlineSeconds, is marked Failed by the manager, with a PullImageFailed event on each of
its owners and on the NodeImage. The reconcile comes back at the nearest TTL or timeout (3-5 s when
that is under 3 s), never polling.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import structlog

from kruise.api.conditions import condition_of, is_true
from kruise.api.objects import section
from kruise.control.common import podstatus
from kruise.control.nodeimage import cleanup, modes
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import WARNING, EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODEIMAGES, object_key
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.nodeimage")

FAKE_LABEL = "apps.kruise.io/fake-nodeimage"


def ready_since(node: Mapping[str, Any]) -> datetime | None:
    """When the node's Ready condition last turned True, or None while it is not Ready."""
    condition = condition_of(node, "Ready")
    if not is_true(condition):
        return None
    return podstatus.parse_time(condition.get("lastTransitionTime"))


class NodeImageReconciler:
    """Reads nodes and NodeImages from the caches; writes NodeImages through the client."""

    def __init__(
        self,
        client: Client,
        *,
        nodes: SharedInformer,
        node_images: SharedInformer,
        jobs: SharedInformer,
        secrets: SharedInformer,
        recorder: EventRecorder,
        creation_delay: float,
        wall: Callable[[], datetime],
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, NODEIMAGES)
        self.nodes = nodes
        self.node_images = node_images
        self.jobs = jobs
        self.secrets = secrets
        self.recorder = recorder
        self.rng = rng or random.Random()
        self.creation_delay = creation_delay
        self.wall = wall

    async def reconcile(self, name: str) -> Result | None:
        node = self.nodes.get(name)
        node_image = self.node_images.get(name)
        if node is None or node["metadata"].get("deletionTimestamp"):
            return await self._delete_orphan(name, node_image)
        labels = dict(section(node["metadata"], "labels"))
        if node_image is None:
            return await self._create(name, node, labels)
        await self._mirror_labels(name, node_image, labels)
        return await self._tidy(node_image)

    async def _delete_orphan(self, name: str, node_image: Mapping[str, Any] | None) -> Result | None:
        """The node is gone or going: its NodeImage goes too, unless it is a labelled fake."""
        if node_image is None or node_image["metadata"].get("deletionTimestamp"):
            return None
        if FAKE_LABEL in section(node_image["metadata"], "labels"):
            return await self._tidy(node_image)
        with contextlib.suppress(NotFound):
            await self.client.delete(NODEIMAGES, name)
        return None

    async def _create(self, name: str, node: Mapping[str, Any], labels: dict[str, str]) -> Result | None:
        """Create once the node has been Ready for the creation delay; until then come back."""
        since = ready_since(node)
        if since is None:
            return None
        wait = self.creation_delay - (self.wall() - since).total_seconds()
        if wait > 0:
            return Result(requeue_after=wait)
        body = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "NodeImage",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
        }
        with contextlib.suppress(AlreadyExists):
            await self.client.create(NODEIMAGES, body)
        return None

    async def _mirror_labels(self, name: str, node_image: Mapping[str, Any], labels: dict[str, str]) -> None:
        """Make the NodeImage's labels equal the node's: set what differs, null what the node lacks."""
        current = dict(section(node_image["metadata"], "labels"))
        if FAKE_LABEL in current or current == labels:
            return
        patch = {"metadata": {"labels": {**dict.fromkeys(set(current) - set(labels)), **labels}}}
        with contextlib.suppress(NotFound):
            await self.client.patch(NODEIMAGES, name, patch, patch_type=PatchType.MERGE)

    def _job_uid(self, namespace: str, name: str) -> str | None:
        job = self.jobs.get(object_key({"metadata": {"namespace": namespace, "name": name}}))
        return None if job is None else job["metadata"].get("uid")

    def _secret_exists(self, namespace: str, name: str) -> bool:
        return self.secrets.get(object_key({"metadata": {"namespace": namespace, "name": name}})) is not None

    async def _tidy(self, node_image: Mapping[str, Any]) -> Result | None:
        """Drop the spec tags that are done with; only when there are none, time out the status.
        Either way come back at the nearest deadline (see `kruise.control.nodeimage.cleanup`).

        The spec is a PUT with the cached resourceVersion: if an ImagePullJob added a tag meanwhile
        it conflicts and the reconcile is retried on the fresh object, losing nothing. A rewritten
        spec comes back as an event and that reconcile looks at the status and the next deadlines."""
        if node_image["metadata"].get("deletionTimestamp"):
            return None
        name = node_image["metadata"]["name"]
        now = self.wall()
        plan = modes.plan_spec(node_image, now, self._job_uid, self._secret_exists)
        if plan.spec is not None:
            log.info("cleaning NodeImage spec", nodeimage=name, reasons=plan.reasons)
            with contextlib.suppress(NotFound):
                body = _with_annotations({**node_image, "spec": plan.spec}, plan)
                await self.client.update(NODEIMAGES, body)
            return None
        status = cleanup.plan_status(node_image, now)
        for failure in status.failures:
            message = f"Failed to pull image {failure.image} on node {name} for {failure.message}"
            for owner in failure.owners:
                self.recorder.event(_as_object(owner), WARNING, "PullImageFailed", message)
            self.recorder.event(dict(node_image), WARNING, "PullImageFailed", message)
        if status.status is not None:
            log.info("timing out NodeImage tags", nodeimage=name, failed=[f.image for f in status.failures])
            # Conditional on the cached resourceVersion, as upstream's Status().Update: a daemon
            # report in between conflicts, and the retry judges the fresh status.
            await self.status_writer.write(node_image, status.status, conditional=True)
        waits = [w for w in (plan.requeue_after, status.requeue_after) if w is not None]
        delay = cleanup.requeue_delay(min(waits) if waits else None, self.rng)
        return None if delay is None else Result(requeue_after=delay)


def _with_annotations(node_image: dict[str, Any], plan: cleanup.SpecPlan) -> dict[str, Any]:
    """The NodeImage to PUT: the planned annotations (the re-stashed pull secret modes) in place of
    the read ones when the plan changes them; an empty set leaves the field out."""
    if plan.annotations is None:
        return node_image
    meta = {key: value for key, value in node_image["metadata"].items() if key != "annotations"}
    if plan.annotations:
        meta["annotations"] = plan.annotations
    return {**node_image, "metadata": meta}


def _as_object(ref: Mapping[str, Any]) -> dict[str, Any]:
    """An owner's ObjectReference in the shape the event recorder reads (metadata.namespace...)."""
    meta = {key: ref[key] for key in ("namespace", "name", "uid", "resourceVersion") if ref.get(key)}
    return {"apiVersion": ref.get("apiVersion", ""), "kind": ref.get("kind", ""), "metadata": meta}
