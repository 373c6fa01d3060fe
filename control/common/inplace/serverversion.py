"""Whether the apiserver takes in-place cpu/memory changes through `pods/resize` (upstream
`ShouldUpdateResourceByResize`).

Kubernetes 1.32 added the `pods/resize` subresource and from then on refuses resource changes in a plain
pod update; older servers (InPlacePodVerticalScaling alpha, 1.27-1.31) have no such subresource and take
the new resources in the pod object itself. kruise-manager reads the server's `gitVersion` once at start
and asks this module which of the two writes an in-place resize is.

Upstream's reading of `gitVersion`, kept exactly because managed clusters report odd strings: drop one
leading "v", split into at most three dotted parts (a fourth and further parts stay in the third), keep
the leading ASCII digits of each part ("32+gke" -> "32", "0-rc.1" -> "0"), and compare the result as
major.minor.patch with 1.32.0. Anything that does not then read as three numbers — "", "garbage",
"1.32" (no patch), a part with no leading digit — is "not 1.32+": the pre-1.32 write, which is also the
answer for a version that could not be read at all.
"""

from __future__ import annotations

RESIZE_SUBRESOURCE_SINCE = (1, 32, 0)
"""The first Kubernetes release serving `pods/resize` (kubernetes/kubernetes#128266)."""

_INT64_MAX = 2**63 - 1
"""Upstream parses each part as a signed 64-bit integer; a larger number is a parse failure."""


def _leading_digits(part: str) -> str:
    """The leading ASCII digits of one dotted part ("" when it starts with anything else)."""
    end = 0
    while end < len(part) and "0" <= part[end] <= "9":
        end += 1
    return part[:end]


def parse_git_version(git_version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) read upstream's way, or None where upstream's parse fails."""
    if not git_version:
        return None
    parts = [_leading_digits(p) for p in git_version.removeprefix("v").split(".", 2)]
    if len(parts) != 3 or not all(parts):
        return None
    numbers = tuple(int(p) for p in parts)
    if any(n > _INT64_MAX for n in numbers):
        return None
    major, minor, patch = numbers
    return major, minor, patch


def should_resize_through_subresource(git_version: str | None) -> bool:
    """True when a server reporting `git_version` is 1.32.0 or newer, so in-place resource changes go
    through `pods/resize`; False below, and for anything unparsable or unknown (None)."""
    parsed = parse_git_version(git_version)
    return parsed is not None and parsed >= RESIZE_SUBRESOURCE_SINCE
