"""NodeImage status from the puller's per-tag states (pure), and pull-secret credential lookup."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import section

PHASE_WAITING = "Waiting"
PHASE_PULLING = "Pulling"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"

DEFAULT_TIMEOUT_SECONDS = 600
DEFAULT_BACKOFF_LIMIT = 3
BACKOFF_START = 1.0
BACKOFF_CAP = 30.0


@dataclass
class TagState:
    image: str
    tag: str
    version: int = 0
    phase: str = PHASE_WAITING
    progress: int = 0
    start_time: str | None = None
    completion_time: str | None = None
    image_id: str | None = None
    message: str | None = None

    def to_status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "tag": self.tag,
            "phase": self.phase,
            "progress": self.progress,
            "version": self.version,
        }
        for key, value in (
            ("startTime", self.start_time),
            ("completionTime", self.completion_time),
            ("imageID", self.image_id),
            ("message", self.message),
        ):
            if value is not None:
                body[key] = value
        return body


def finished_state(
    node_image_status: Mapping[str, Any] | None, image: str, tag: str, version: int
) -> TagState | None:
    """The tag's finished state as the NodeImage status records it, for this spec `version`.

    A daemon that starts (or restarts) adopts such a state instead of pulling again, as upstream's
    worker pool does: a tag whose status for the same version has a completionTime is done, whether
    it succeeded or failed (a retry is asked for by bumping the version). Only a tag that was still
    Waiting or Pulling, or has no status, is pulled."""
    tags = section((node_image_status or {}), "imageStatuses", image).get("tags") or []
    for entry in tags:
        if entry.get("tag") != tag or int(entry.get("version") or 0) != version:
            continue
        if not entry.get("completionTime") or entry.get("phase") not in (PHASE_SUCCEEDED, PHASE_FAILED):
            return None
        return TagState(
            image=image,
            tag=tag,
            version=version,
            phase=entry["phase"],
            progress=int(entry.get("progress") or 0),
            start_time=entry.get("startTime"),
            completion_time=entry["completionTime"],
            image_id=entry.get("imageID"),
            message=entry.get("message"),
        )
    return None


def node_image_status(states: Iterable[TagState]) -> dict[str, Any]:
    """`status` of the NodeImage: counts and imageStatuses (tags sorted for stable writes)."""
    images: dict[str, list[dict[str, Any]]] = {}
    counts = {PHASE_SUCCEEDED: 0, PHASE_FAILED: 0, PHASE_PULLING: 0, PHASE_WAITING: 0}
    desired = 0
    for state in sorted(states, key=lambda s: (s.image, s.tag)):
        desired += 1
        counts[state.phase] = counts.get(state.phase, 0) + 1
        images.setdefault(state.image, []).append(state.to_status())
    return {
        "desired": desired,
        "succeeded": counts[PHASE_SUCCEEDED],
        "failed": counts[PHASE_FAILED],
        "pulling": counts[PHASE_PULLING],
        "waiting": counts[PHASE_WAITING],
        "imageStatuses": {name: {"tags": tags} for name, tags in images.items()},
    }


def backoff_delays(attempts: int) -> list[float]:
    """Waits between pull attempts: 1 s doubling, capped at 30 s."""
    delays, delay = [], BACKOFF_START
    for _ in range(max(attempts - 1, 0)):
        delays.append(delay)
        delay = min(delay * 2, BACKOFF_CAP)
    return delays


def registry_of(image: str) -> str:
    """The registry host of an image reference (Docker Hub when the first part is not a host)."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


_DOCKER_HUB = {"docker.io", "index.docker.io", "registry-1.docker.io", "https://index.docker.io/v1/"}


def _host(key: str) -> str:
    host = key.removeprefix("https://").removeprefix("http://").split("/", 1)[0]
    return "docker.io" if key in _DOCKER_HUB or host in _DOCKER_HUB else host


def credentials_for(image: str, secrets: Iterable[Mapping[str, Any]]) -> dict[str, str] | None:
    """username/password (or auth) for the image's registry from dockerconfigjson/dockercfg Secrets."""
    want = registry_of(image)
    for secret in secrets:
        data = secret.get("data") or {}
        raw = data.get(".dockerconfigjson") or data.get(".dockercfg")
        if not raw:
            continue
        try:
            config = json.loads(base64.b64decode(raw))
        except (ValueError, TypeError):
            continue
        auths = config.get("auths", config) if isinstance(config, dict) else {}
        for key, entry in auths.items():
            if _host(key) != want or not isinstance(entry, dict):
                continue
            creds = {k: entry[k] for k in ("username", "password", "auth") if entry.get(k)}
            if "auth" in creds and "username" not in creds:
                user, _, password = base64.b64decode(creds["auth"]).decode(errors="replace").partition(":")
                creds.update(username=user, password=password)
            return creds
    return None
