"""Sorting kruise-webhook's answers to the bad-input corpus (`tests/kit/admission_corpus.py`).

An answer is one of: allowed; denied naming the field the case broke (the message holds its path);
denied otherwise (a message, but not that path — for a body that is not JSON the message must still
say what is wrong); an internal error (HTTP 5xx, or a review denied with code >= 500: a handler that
raised); a transport error (no answer at all — the process crashed or dropped the connection).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson

from tests.kit.admission_corpus import Case

OUTCOMES = ("allowed", "denied_naming_field", "denied_other", "internal_errors", "crashes")


def outcome(case: Case, status: int | None, body: bytes) -> tuple[str, str]:
    """(outcome, message) for one answer; `status` None is a transport error."""
    if status is None:
        return "crashes", body.decode(errors="replace")
    if status >= 500:
        return "internal_errors", body.decode(errors="replace")[:300]
    try:
        answer: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return "denied_other", body.decode(errors="replace")[:300]
    if status == 200:
        response = answer.get("response") or {}
        if response.get("allowed") is True:
            return "allowed", ""
        status_of = response.get("status") or {}
        message = str(status_of.get("message", ""))
        if int(status_of.get("code") or 0) >= 500:
            return "internal_errors", message
    else:
        message = str(answer.get("message", ""))
    if names_field(case, message):
        return "denied_naming_field", message
    return "denied_other", message


def names_field(case: Case, message: str) -> bool:
    """The message holds the broken field's path; for a field removed or nulled, its enclosing object's
    path also counts (apimachinery reports "one of these is required" rules at the parent)."""
    if case.field is None:
        return False
    if case.field in message:
        return True
    if case.what.endswith((" missing field", " null")):
        parent = re.sub(r"(\.[^.\[]+|\[[^\]]*\])$", "", case.field)
        return bool(parent) and parent != case.field and f"{parent}:" in message
    return False


@dataclass
class Tally:
    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[str, list[tuple[Case, str]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, case: Case, result: str, message: str) -> None:
        self.counts[case.kind][result] += 1
        self.examples[result].append((case, message))

    def total(self, result: str) -> int:
        return sum(c[result] for c in self.counts.values())

    @property
    def cases(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())

    def table(self) -> str:
        head = ["kind", "cases", *OUTCOMES]
        rows = [head]
        for kind in sorted(self.counts):
            c = self.counts[kind]
            rows.append([kind, str(sum(c.values())), *(str(c[o]) for o in OUTCOMES)])
        rows.append(["total", str(self.cases), *(str(self.total(o)) for o in OUTCOMES)])
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows)

    def summary(self) -> str:
        return (
            f"bad_input_cases={self.cases} denied_naming_field={self.total('denied_naming_field')}"
            f" denied_other={self.total('denied_other')} internal_errors={self.total('internal_errors')}"
            f" crashes={self.total('crashes')}"
        )
