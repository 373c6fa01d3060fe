"""Label and field selectors, parsed once per request and matched per object.

Grammar follows k8s.io/apimachinery/pkg/labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
`a notin (x)`, `a`, `!a`; terms are ANDed. Field selectors support `=`, `==`, `!=` on the
fields the apiserver indexes for each resource.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.sandbox.apiserver.errors import StatusError, bad_request

_SET_TERM = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!":
            return self.key not in labels
        if self.op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values  # "!=", "notin"


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms, depth, current = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return [t for t in (t.strip() for t in terms) if t]


def parse_label_selector(text: str | None) -> list[Requirement]:
    if not text:
        return []
    reqs = []
    for term in _split_terms(text):
        if m := _SET_TERM.match(term):
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), m.group(2), values))
        elif "!=" in term:
            key, value = term.split("!=", 1)
            reqs.append(Requirement(key.strip(), "!=", frozenset([value.strip()])))
        elif "=" in term:
            key, value = term.split("==", 1) if "==" in term else term.split("=", 1)
            reqs.append(Requirement(key.strip(), "=", frozenset([value.strip()])))
        elif term.startswith("!"):
            reqs.append(Requirement(term[1:].strip(), "!", frozenset()))
        elif re.fullmatch(r"[A-Za-z0-9._/-]+", term):
            reqs.append(Requirement(term, "exists", frozenset()))
        else:
            raise bad_request(f"unable to parse requirement: found '{term}', expected: identifier")
    return reqs


def labels_match(reqs: list[Requirement], labels: Mapping[str, str] | None) -> bool:
    labels = labels or {}
    return all(r.matches(labels) for r in reqs)


def selector_from_label_selector(sel: Mapping[str, Any] | None) -> list[Requirement] | None:
    """metav1.LabelSelector (matchLabels + matchExpressions) -> requirements; None selects nothing."""
    if sel is None:
        return None
    reqs = [Requirement(k, "=", frozenset([v])) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in sel.get("matchExpressions") or []:
        reqs.append(Requirement(expr["key"], ops[expr["operator"]], frozenset(expr.get("values") or [])))
    return reqs


def format_label_selector(sel: Mapping[str, Any] | None) -> str:
    """metav1.FormatLabelSelector: the string shown in Scale.status.selector and kubectl."""
    if not sel:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        op, key, vals = expr["operator"], expr["key"], ",".join(sorted(expr.get("values") or []))
        parts.append(
            {"In": f"{key} in ({vals})", "NotIn": f"{key} notin ({vals})", "Exists": key}.get(op, f"!{key}")
        )
    return ",".join(parts)


# Fields each resource lets you select on (beyond metadata.name / metadata.namespace).
EXTRA_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
        "spec.hostNetwork",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "nodes": ("spec.unschedulable",),
    "secrets": ("type",),
    "namespaces": ("status.phase",),
    "replicasets": ("status.replicas",),
    "jobs": ("status.successful",),
}


# events.k8s.io/v1 Events: each selectable label and the field of the v1 object it reads
# (kube-apiserver maps them onto core Event's selectable fields; `involvedObject.*` is refused).
EVENTS_V1_FIELDS: dict[str, str] = {
    "reason": "reason",
    "type": "type",
    "reportingController": "reportingController",
    "source": "deprecatedSource.component",
    **{
        f"regarding.{part}": f"regarding.{part}"
        for part in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
}

# core/v1 Events: labels whose value lives under another field name.
_CORE_EVENT_PATHS = {"source": "source.component", "reportingComponent": "reportingComponent"}


def _selectable(plural: str, api_version: str) -> dict[str, str]:
    """label -> dotted path into the object, for the resource at this group version."""
    base = {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}
    if plural == "events" and api_version.startswith("events.k8s.io/"):
        return {**base, **EVENTS_V1_FIELDS}
    extra = {label: label for label in EXTRA_FIELDS.get(plural, ())}
    if plural == "events":
        extra.update(_CORE_EVENT_PATHS)
    return {**base, **extra}


def _lookup(obj: Mapping[str, Any], dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def parse_field_selector(
    text: str | None, plural: str, kind: str, api_version: str
) -> Callable[[Mapping], bool]:
    """Return a predicate; unknown fields are a 400 exactly like the apiserver's message."""
    if not text:
        return lambda obj: True
    allowed = _selectable(plural, api_version)
    terms: list[tuple[str, bool, str]] = []
    for term in _split_terms(text):
        if "!=" in term:
            key, value = term.split("!=", 1)
            negate = True
        elif "=" in term:
            key, value = term.split("==", 1) if "==" in term else term.split("=", 1)
            negate = False
        else:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        key = key.strip()
        if key not in allowed:
            raise StatusError(400, "BadRequest", f"field label not supported: {key}")
        terms.append((allowed[key], negate, value.strip()))

    def predicate(obj: Mapping[str, Any]) -> bool:
        return all((_lookup(obj, key) == value) != negate for key, negate, value in terms)

    return predicate
