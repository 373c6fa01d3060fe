"""The image puller: keeps this node's NodeImage pulled, one worker per image tag.

A worker is restarted when its tag's `version` changes (that is how an ImagePullJob asks for a
re-pull) and cancelled when the tag leaves the spec. `imagePullPolicy: IfNotPresent` (the default)
succeeds at once when the runtime already has the image. A pull gets `timeoutSeconds` per attempt and
`backoffLimit` retries (1 s doubling to 30 s), all within `activeDeadlineSeconds`. States are
written to the NodeImage status by one writer task, coalescing bursts into one patch. A finished
pull is also told as an event (see `events.py`); a cancelled one (tag removed, version bumped) is not.
A daemon that (re)starts adopts the tags its NodeImage status shows finished for the current version
(see `status.finished_state`) and pulls only the rest, so a restart neither repeats a pull nor its event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import grpc
import structlog

from kruise.api.objects import meta_of, section
from kruise.api.timestamps import rfc3339
from kruise.daemon.cri import api_pb2 as cri
from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.imagepuller import events
from kruise.daemon.imagepuller.status import (
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_TIMEOUT_SECONDS,
    PHASE_FAILED,
    PHASE_PULLING,
    PHASE_SUCCEEDED,
    TagState,
    backoff_delays,
    credentials_for,
    finished_state,
    node_image_status,
)
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.events import NORMAL, WARNING, EventRecorder
from kruise.kube.resources import NODEIMAGES, SECRETS

log = structlog.get_logger("kruise.daemon.imagepuller")

PULLING_BY_ANNOTATION = "apps.kruise.io/pulling-image-by"
Clock = Callable[[], datetime]


class ImagePuller:
    def __init__(
        self,
        client: Client,
        runtime: RuntimeClient,
        node_name: str,
        *,
        clock: Clock = lambda: datetime.now(UTC),
        sleep: Callable[[float], Any] = asyncio.sleep,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.client = client
        # A recorder made here is this puller's to stop; a given one belongs to the caller.
        self._owns_recorder = recorder is None
        self.recorder = recorder or EventRecorder(client, events.SOURCE_COMPONENT, node_name)
        self._node_image: dict[str, Any] | None = None
        self.runtime = runtime
        self.node_name = node_name
        self.clock = clock
        self.sleep = sleep
        self.states: dict[tuple[str, str], TagState] = {}
        self._workers: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._dirty = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._written_images: set[str] = set()
        self._adopted: set[tuple[str, str]] = set()  # tags finished before this daemon started
        self._synced_once = False

    # ---- spec -> workers ---------------------------------------------------------------------

    def sync(self, node_image: Mapping[str, Any] | None) -> None:
        """Bring the workers in line with the NodeImage spec (called on every informer event).

        The status is written when the workers change — and once at start, so an empty NodeImage
        shows its zero counts (never on every event: our own status write comes back as one)."""
        if node_image is not None and not self._synced_once:
            self._synced_once = True
            self._dirty.set()
        if node_image is not None and meta_of(node_image).get("uid"):
            self._node_image = events.node_image_target(node_image)
        wanted: dict[tuple[str, str], tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        for name, image in section((node_image or {}), "spec", "images").items():
            for tag in image.get("tags") or []:
                wanted[(name, tag["tag"])] = (image, tag)
        for key in {*self._workers, *self.states}:
            if key not in wanted:
                worker = self._workers.pop(key, None)
                if worker is not None:
                    worker.cancel()
                self.states.pop(key, None)
                self._adopted.discard(key)
                self._dirty.set()
        for key, (image, tag) in wanted.items():
            version = int(tag.get("version") or 0)
            state = self.states.get(key)
            if (
                state is not None
                and state.version == version
                and (key in self._workers or key in self._adopted)
            ):
                continue
            if key in self._workers:
                self._workers.pop(key).cancel()
            self._adopted.discard(key)
            if state is None:
                # first sight since start: a pull the status shows finished (before a restart) stays so
                adopted = finished_state((node_image or {}).get("status"), key[0], key[1], version)
                if adopted is not None:
                    self.states[key] = adopted
                    self._adopted.add(key)
                    self._dirty.set()
                    continue
            self.states[key] = TagState(image=key[0], tag=key[1], version=version)
            self._workers[key] = asyncio.get_running_loop().create_task(
                self._work(self.states[key], image, tag), name=f"pull-{key[0]}:{key[1]}"
            )
            self._dirty.set()
        self._ensure_writer()

    # ---- one tag ---------------------------------------------------------------------------

    async def _work(self, state: TagState, image: Mapping[str, Any], tag: Mapping[str, Any]) -> None:
        reference = f"{state.image}:{state.tag}"
        policy = tag.get("pullPolicy") or {}
        started = self.clock()
        state.phase, state.start_time = PHASE_PULLING, rfc3339(started)
        self._dirty.set()
        try:
            await self._pull(state, reference, image, tag, policy)
        except TimeoutError:
            self._finish(state, PHASE_FAILED, message="pulling exceeds the activeDeadlineSeconds")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken runtime connection fails the tag, not the daemon
            self._finish(state, PHASE_FAILED, message=str(exc))
        self._record(state, tag, (self.clock() - started).total_seconds())

    async def _pull(
        self,
        state: TagState,
        reference: str,
        image: Mapping[str, Any],
        tag: Mapping[str, Any],
        policy: Mapping[str, Any],
    ) -> None:
        """Succeed at once for a present image under IfNotPresent, else pull within the deadline."""
        if (tag.get("imagePullPolicy") or "IfNotPresent") == "IfNotPresent":
            present = await self.runtime.image_status(reference)
            if present is not None:
                self._finish(state, PHASE_SUCCEEDED, image_id=present.id)
                return
        deadline = policy.get("activeDeadlineSeconds")
        work = self._pull_with_retries(state, reference, image, policy)
        if deadline:
            async with asyncio.timeout(float(deadline)):
                await work
        else:
            await work

    def _record(self, state: TagState, tag: Mapping[str, Any], elapsed: float) -> None:
        """Tell how the pull ended: success on the NodeImage, failure on every owner of the tag and
        on the NodeImage (as upstream, the owners hear of a failure even before the NodeImage is known)."""
        if state.phase == PHASE_SUCCEEDED:
            if self._node_image is not None:
                message = events.succeeded_message(state.image, state.tag, elapsed)
                self.recorder.event(self._node_image, NORMAL, events.PULL_IMAGE_SUCCEED, message)
            return
        if state.phase != PHASE_FAILED:
            return
        message = events.failed_message(state.image, state.tag, state.message or "")
        for owner in tag.get("ownerReferences") or []:
            self.recorder.event(events.owner_target(owner), WARNING, events.PULL_IMAGE_FAILED, message)
        if self._node_image is not None:
            self.recorder.event(self._node_image, WARNING, events.PULL_IMAGE_FAILED, message)

    async def _pull_with_retries(
        self, state: TagState, reference: str, image: Mapping[str, Any], policy: Mapping[str, Any]
    ) -> None:
        limit = policy.get("backoffLimit")
        attempts = (DEFAULT_BACKOFF_LIMIT if limit is None else int(limit)) + 1
        timeout = float(policy.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS)
        auth = await self._auth(reference, image.get("pullSecrets") or [])
        annotations = dict((section(image, "sandboxConfig").get("annotations")) or {})
        annotations[PULLING_BY_ANNOTATION] = "kruise-daemon"
        delays = backoff_delays(attempts)
        message = ""
        for attempt in range(attempts):
            try:
                image_ref = await self.runtime.pull_image(
                    reference, auth=auth, sandbox_annotations=annotations, timeout=timeout
                )
            except grpc.aio.AioRpcError as exc:
                message = f"Failed to pull image {reference}: {exc.details() or exc.code().name}"
                log.info("pull failed", image=reference, attempt=attempt + 1, error=message)
                if attempt < len(delays):
                    await self.sleep(delays[attempt])
                continue
            self._finish(state, PHASE_SUCCEEDED, image_id=image_ref)
            return
        self._finish(state, PHASE_FAILED, message=message)

    async def _auth(self, reference: str, secrets: list[Mapping[str, Any]]) -> cri.AuthConfig | None:
        found = []
        for ref in secrets:
            try:
                found.append(await self.client.get(SECRETS, ref.get("name", ""), ref.get("namespace")))
            except NotFound:
                log.warning("pull secret not found", secret=f"{ref.get('namespace')}/{ref.get('name')}")
        creds = credentials_for(reference, found)
        return cri.AuthConfig(**creds) if creds else None

    def _finish(
        self, state: TagState, phase: str, *, image_id: str | None = None, message: str | None = None
    ) -> None:
        state.phase = phase
        state.progress = 100 if phase == PHASE_SUCCEEDED else state.progress
        state.completion_time = rfc3339(self.clock())
        state.image_id = image_id
        state.message = message
        self._dirty.set()

    # ---- status ----------------------------------------------------------------------------

    def _ensure_writer(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="nodeimage-status")

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            status = node_image_status(self.states.values())
            images = set(status["imageStatuses"])
            # a merge patch keeps map keys it does not mention: images no longer wanted are nulled
            status["imageStatuses"].update(dict.fromkeys(self._written_images - images))
            try:
                await self.client.patch(NODEIMAGES, self.node_name, {"status": status}, subresource="status")
            except NotFound:
                continue
            except ApiError as exc:
                self._dirty.set()
                log.warning("writing NodeImage status failed; retrying", error=str(exc))
                await self.sleep(1.0)
                continue
            self._written_images = images

    async def stop(self) -> None:
        tasks = [*self._workers.values(), *([self._writer] if self._writer else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()
        if self._owns_recorder:
            await self.recorder.stop()
