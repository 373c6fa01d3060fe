"""Counting the ConversionReviews the sandbox emulator sends, to prove a component's traffic needs none.

On API set 1.9 seven Kruise kinds are stored at v1beta1; a component that talks their storage version on
the wire (`kruise.kube.wire`) makes kube-apiserver call no conversion webhook for its own requests. The
emulator's conversion caller is wrapped to record (kind, desiredAPIVersion) per object it asks to convert.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CountingCaller:
    """Wraps the emulator's webhook caller; records (kind, desiredAPIVersion) per ConversionReview object."""

    inner: Any
    reviews: list[tuple[str, str]] = field(default_factory=list)

    async def post(self, client_config: dict[str, Any], body: Any, timeout: float) -> bytes:
        if isinstance(body, dict) and body.get("kind") == "ConversionReview":
            request = body.get("request") or {}
            for obj in request.get("objects") or []:
                self.reviews.append((obj.get("kind", ""), request.get("desiredAPIVersion", "")))
        return await self.inner.post(client_config, body, timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def of(self, kind: str) -> list[tuple[str, str]]:
        return [review for review in self.reviews if review[0] == kind]


@contextmanager
def counting_conversions(emulator: Any) -> Iterator[CountingCaller]:
    """The emulator's conversions counted while inside; its own caller restored on exit."""
    converter = emulator.server.conversion
    counting = CountingCaller(converter.caller)
    converter.caller = counting
    try:
        yield counting
    finally:
        converter.caller = counting.inner
