"""Events the image puller records when a tag's pull finishes, as upstream's kruise-daemon does.

A success is one Normal `PullImageSucceed` on the node's NodeImage, saying how long the pull took
(Go's duration notation, e.g. `1.5s`). A failure is one Warning `PullImageFailed` on every owner
the tag lists (the ImagePullJobs that asked for it) and one on the NodeImage, carrying the tag's
failure message. The text keeps upstream's wording, typo included ("ecalpsedTime"), so tools that
match on it see the same strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.objects import meta_of
from kruise.kube.resources import NODEIMAGES

SOURCE_COMPONENT = "kruise-daemon-imagepuller"
PULL_IMAGE_SUCCEED = "PullImageSucceed"
PULL_IMAGE_FAILED = "PullImageFailed"

_UNITS = ((3600.0, "h"), (60.0, "m"))


def _trim(number: str) -> str:
    return number.rstrip("0").rstrip(".") if "." in number else number


def go_duration(seconds: float) -> str:
    """`seconds` written as Go's time.Duration.String writes it: 0s, 850ms, 1.5s, 2m3.25s, 1h0m0s.

    Durations are rounded to whole nanoseconds first, as a Duration holds them."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign, nanos = ("-", -nanos) if nanos < 0 else ("", nanos)
    if nanos < 1_000:
        return f"{sign}{nanos}ns"
    if nanos < 1_000_000:
        return f"{sign}{_trim(f'{nanos / 1e3:.3f}')}µs"
    if nanos < 1_000_000_000:
        return f"{sign}{_trim(f'{nanos / 1e6:.6f}')}ms"
    whole, frac = divmod(nanos, 1_000_000_000)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = _trim(f"{secs}.{frac:09d}") + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def succeeded_message(image: str, tag: str, elapsed_seconds: float) -> str:
    return f"Image {image}:{tag}, ecalpsedTime {go_duration(elapsed_seconds)}"


def failed_message(image: str, tag: str, error: str) -> str:
    return f"Image {image}:{tag} {error}"


def node_image_target(node_image: Mapping[str, Any]) -> dict[str, Any]:
    """The NodeImage as the recorder's object: kind and apiVersion filled in when the cache left
    them out, so the event's involvedObject always names a NodeImage."""
    return {
        "apiVersion": node_image.get("apiVersion") or NODEIMAGES.api_version,
        "kind": node_image.get("kind") or NODEIMAGES.kind,
        "metadata": dict(meta_of(node_image)),
    }


def owner_target(reference: Mapping[str, Any]) -> dict[str, Any]:
    """A tag's `ownerReferences` entry (an ObjectReference) as the recorder's object."""
    meta = {key: reference[key] for key in ("name", "namespace", "uid") if reference.get(key)}
    kind = {key: reference.get(key, "") for key in ("apiVersion", "kind")}
    return {**kind, "metadata": meta}
