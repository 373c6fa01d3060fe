"""Pull durations per image (``kruise sandbox up --slow-image GLOB=SECONDS``).

A fault scenario needs a pull that is still running when something breaks (kruise-daemon killed
mid-pull), while every other image - kruise-py's own, the pods' - should pull at the sandbox's usual
pace. So the delay is chosen per reference: the first pattern that matches wins, nothing matching
pulls with the default delay. SECONDS is sandbox time, divided by ``--speed`` like every simulated
duration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

SHORT_PREFIXES = ("docker.io/library/", "docker.io/")
FLAG = "--slow-image"


def parse_slow_image(value: str) -> tuple[str, float]:
    """``GLOB=SECONDS`` as the flag takes it; a ValueError names the flag and the rule."""
    pattern, sep, seconds = value.rpartition("=")
    if not sep or not pattern:
        raise ValueError(f"{FLAG}: must be GLOB=SECONDS, got {value!r}")
    try:
        delay = float(seconds)
    except ValueError:
        raise ValueError(f"{FLAG}: SECONDS must be a number, got {seconds!r} in {value!r}") from None
    if not delay >= 0 or delay == float("inf"):
        raise ValueError(f"{FLAG}: SECONDS must be a finite number >= 0, got {seconds!r} in {value!r}")
    return pattern, delay


@dataclass(frozen=True)
class SlowImages:
    """A pull delay as a function of the normalized reference (``ImageStore.pull_delay``).

    A pattern matches the normalized reference (``docker.io/library/nginx:alpine``) or its familiar
    form (``nginx:alpine``), so users write images the way pod specs name them."""

    rules: Sequence[tuple[str, float]]
    default: float = 0.0

    def __call__(self, reference: str) -> float:
        names = [reference] + [reference[len(p) :] for p in SHORT_PREFIXES if reference.startswith(p)]
        for pattern, delay in self.rules:
            if any(fnmatchcase(name, pattern) for name in names):
                return delay
        return self.default
