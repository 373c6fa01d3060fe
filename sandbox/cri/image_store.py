"""A node's images: simulated pulls (delay, configured failures) and lookups by any image name.

Kept apart from sandboxes and containers because images have their own life: kruise-daemon
pulls and removes them through the CRI while the kubelet only reads them (to create
containers and to publish ``node.status.images``).
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Callable, Iterable, Mapping

from kruise.sandbox.cri.errors import ImagePullError, InvalidArgumentError, NotFoundError
from kruise.sandbox.cri.images import (
    REGISTRY_ALIASES,
    ImageReference,
    InvalidReferenceError,
    image_id_for,
    image_size_for,
    manifest_digest_for,
    parse_reference,
)
from kruise.sandbox.cri.model import Image

PullDelay = float | Callable[[str], float]


class ImageStore:
    """Images by id, plus the pull simulation.

    ``pull_delay`` (seconds at speed 1, or a function of the normalized reference) is divided by
    ``speed``. A reference matching a glob in ``fail_images`` (raw or normalized) or accepted by
    ``fail_image_if`` fails to pull at once, as an unresolvable reference does in containerd.
    All three may be changed at any time. ``aliases`` (normalized tag -> the tag whose image it
    names, default ``REGISTRY_ALIASES``) makes two tags one image: pulling the second adds its tag
    to the image the first brought, as containerd does for a tag resolving to a present manifest.
    """

    def __init__(
        self,
        *,
        speed: float = 1.0,
        pull_delay: PullDelay = 0.0,
        fail_images: Iterable[str] = (),
        fail_image_if: Callable[[str], bool] | None = None,
        aliases: Mapping[str, str] = REGISTRY_ALIASES,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed: must be > 0, got {speed}")
        self.speed = speed
        self.pull_delay = pull_delay
        self.fail_images: set[str] = set(fail_images)
        self.fail_image_if = fail_image_if
        self.aliases = aliases
        self.generation = 0
        self._images: dict[str, Image] = {}
        self._pulls: dict[str, asyncio.Future[Image]] = {}
        self._changed: asyncio.Event | None = None

    async def pull(self, image: str) -> Image:
        """Pull ``image``; concurrent pulls of one reference share a single simulated download."""
        ref = parse(image)
        if self._failing(image, ref):
            raise ImagePullError(
                f'failed to pull and unpack image "{ref}": '
                f'failed to resolve reference "{ref}": {ref}: not found'
            )
        existing = self._find(ref)
        if existing is not None:
            return existing
        key = str(ref)
        pending = self._pulls.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._download(ref))
            self._pulls[key] = pending
            pending.add_done_callback(lambda _: self._pulls.pop(key, None))
        return await asyncio.shield(pending)

    async def _download(self, ref: ImageReference) -> Image:
        delay = self.pull_delay(str(ref)) if callable(self.pull_delay) else self.pull_delay
        if delay > 0:
            await asyncio.sleep(delay / self.speed)
        return self.add(ref)

    def add(self, ref: ImageReference) -> Image:
        """Store the image a reference resolves to (no delay); an existing image is returned as is.

        A reference resolving to an image present under other names adds its names to that image.
        Names are kept sorted, as containerd's image store keeps them, so ``repo_tags[0]`` (what a
        container's status reports as its image) does not depend on the order of pulls.
        """
        existing = self._find(ref)
        if existing is not None:
            return existing
        image_id = image_id_for(ref, self.aliases)
        tags = (ref.tagged,) if ref.tagged else ()
        digests = (f"{ref.repository}@{manifest_digest_for(ref, self.aliases)}",)
        present = self._images.get(image_id)
        if present is not None:
            tags = tuple(sorted({*present.repo_tags, *tags}))
            digests = tuple(sorted({*present.repo_digests, *digests}))
        record = Image(
            id=image_id,
            repo_tags=tags,
            repo_digests=digests,
            size=image_size_for(ref, self.aliases),
            pinned=present.pinned if present is not None else False,
        )
        self._images[record.id] = record
        self._bump()
        return record

    def get(self, image: str) -> Image | None:
        """Look an image up by id (``sha256:<hex>`` or bare hex), tag or repo digest."""
        if image in self._images:
            return self._images[image]
        if image.startswith("sha256:") or len(image) == 64:
            by_id = self._images.get(image if image.startswith("sha256:") else "sha256:" + image)
            if by_id is not None:
                return by_id
        try:
            ref = parse_reference(image)
        except InvalidReferenceError:
            return None
        return self._find(ref)

    def require(self, image: str) -> Image:
        record = self.get(image)
        if record is None:
            raise NotFoundError(f'failed to get image "{image}": not found')
        return record

    def list(self) -> list[Image]:
        """Every image, ordered by id for stable output."""
        return sorted(self._images.values(), key=lambda record: record.id)

    def remove(self, image: str) -> None:
        """Remove the image with all its names; an absent image is not an error."""
        record = self.get(image)
        if record is not None:
            del self._images[record.id]
            self._bump()

    async def wait_changed(self, since: int) -> int:
        """Wait until ``generation`` differs from ``since`` (an image was added or removed); return it."""
        while self.generation == since:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()
        return self.generation

    def _bump(self) -> None:
        self.generation += 1
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    def _failing(self, raw: str, ref: ImageReference) -> bool:
        names = {raw, str(ref), ref.tagged, ref.digested} - {""}
        if any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in self.fail_images):
            return True
        return self.fail_image_if is not None and bool(self.fail_image_if(str(ref)))

    def _find(self, ref: ImageReference) -> Image | None:
        for record in self._images.values():
            if (ref.tagged and ref.tagged in record.repo_tags) or (
                ref.digested and ref.digested in record.repo_digests
            ):
                return record
        return None


def parse(image: str) -> ImageReference:
    """Parse a reference, reporting a malformed one as the INVALID_ARGUMENT containerd gives."""
    try:
        return parse_reference(image)
    except InvalidReferenceError as err:
        raise InvalidArgumentError(f'failed to parse image reference "{image}": {err}') from None
