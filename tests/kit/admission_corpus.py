"""A generated corpus of malformed admission requests for every path kruise-webhook is configured for.

Why generated: a hand list of bad objects covers the fields someone thought of. Here each valid sample
object (the YAML examples of docs/*.md for Kruise kinds, one small object per built-in kind) is walked
field by field and every field gets the wrong values its own type invites (a string where an int is, a
list where a map is, null, a number past 64 bits, a negative count, a bad percentage, an unknown enum
value, the field removed), so a new field or kind is fuzzed without anyone listing it. Which paths,
operations and versions are sent comes from the webhook configurations themselves
(`kruise.webhook.configurations`), so every entry kube-apiserver would call is covered. On top of the
object mutations, the AdmissionReview envelope itself is broken (truncated and invalid JSON, wrong
content type, wrong apiVersion, request fields missing or mistyped).

Each case carries the field path a good answer must name (None where no field can be named: a body
that is not JSON must then say what is wrong instead); `tests/kit/admission_tally.py` sorts answers.
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from kruise.webhook.configurations import Entry, mutating_entries, validating_entries

ROOT = Path(__file__).resolve().parents[2]
REVIEW_VERSION = "admission.k8s.io/v1"
HUGE = 2**70  # past int64: kube's JSON decoder refuses it, a Python webhook must not choke on it

# Maps whose keys are the user's (a wrong value there is reported at the map, as apimachinery does).
USER_KEYED_MAPS = {"labels", "annotations", "matchLabels", "nodeSelector", "data", "stringData"}
# Maps of resource quantities: an entry is reported at `requests[cpu]`, as apimachinery's Key() path
QUANTITY_MAPS = {"requests", "limits", "overhead", "capacity"}
# Fields that take an int or a percentage string (upstream IntOrString).
INT_OR_PERCENT = re.compile(r"^(maxUnavailable|maxSurge|partition|minAvailable|maxSkew|replicas)$")

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Case:
    """One request: `kind` groups the tally, `field` is the path the answer should name (None: none
    can be named), `body` the raw bytes posted to `path` with `content_type`."""

    kind: str
    path: str
    what: str
    field: str | None
    body: bytes
    content_type: str = "application/json"
    obj: dict[str, Any] | None = None  # the malformed object itself, for `kubectl apply`


def render(path: Path_) -> str:
    """A field path as apimachinery prints it: `spec.template.spec.containers[0].image`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _doc_samples() -> dict[tuple[str, str], dict[str, Any]]:
    """The richest example (most fields) of each Kruise apiVersion/kind in docs/*.md that is valid,
    defaulted as kruise-webhook's mutating webhook would (what the validating webhook is sent)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```ya?ml\n(.*?)```", page.read_text(), re.S):
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue
            for doc in docs:
                if not isinstance(doc, dict) or "kruise.io/" not in str(doc.get("apiVersion", "")):
                    continue
                key = (doc["apiVersion"], doc["kind"])
                defaulted = _defaulted_if_valid(doc)
                if defaulted is not None and (key not in found or _leaves(doc) > _leaves(found[key])):
                    found[key] = defaulted
    return found


def _defaulted_if_valid(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The example with its kind's defaults, or None when it does not parse or its kind's validation
    refuses it (a snippet that leaves out required fields would make every mutation of it a denial
    for the snippet's own gap)."""
    from pydantic import ValidationError

    from kruise.api.registry import KINDS
    from kruise.webhook.handlers.kindhooks import hooks_for

    group, _, version = doc["apiVersion"].rpartition("/")
    info = next((i for i in KINDS if i.group == group and i.kind == doc["kind"]), None)
    if info is None:
        return None
    hooks = hooks_for(info)
    try:
        obj = hooks.model_for(version).model_validate(copy.deepcopy(doc))
    except ValidationError:
        return None
    if hooks.set_defaults is not None:
        hooks.set_defaults(obj)
    if hooks.validate is not None:
        errors = hooks.validate(obj, old=None) if hooks.validate_takes_old else hooks.validate(obj)
        if errors:
            return None
    return {**obj.to_dict(), "apiVersion": doc["apiVersion"], "kind": doc["kind"]}


def _leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


# Cascading with no replicas: the deletion is allowed while the object is well formed, so a refusal
# is the malformed field's, not the protection's
_PROTECTED = {"policy.kruise.io/delete-protection": "Cascading"}

BUILTIN_SAMPLES: dict[str, dict[str, Any]] = {
    "pods": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "fuzz-pod", "namespace": "default", "labels": {"app": "fuzz"}},
        "spec": {
            "containers": [{
                "name": "app", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "fuzz"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1"}},
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
            }],
            "restartPolicy": "Always",
            "readinessGates": [{"conditionType": "KruisePodReady"}],
        },
    },
    "pods/eviction": {
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "fuzz-pod", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 30, "dryRun": ["All"]},
    },
    "deployments": {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "fuzz", "namespace": "default", "labels": _PROTECTED},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "fuzz"}}},
    },
    "replicasets": {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "fuzz", "namespace": "default", "labels": _PROTECTED},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "fuzz"}}},
    },
    "statefulsets": {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "fuzz", "namespace": "default", "labels": _PROTECTED},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "fuzz"}}},
    },
    "namespaces": {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "fuzz", "labels": _PROTECTED}, "status": {"phase": "Active"},
    },
    "services": {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "fuzz", "namespace": "default", "labels": _PROTECTED},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "fuzz"}},
    },
    "ingresses": {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "fuzz", "namespace": "default", "labels": _PROTECTED},
        "spec": {"rules": [{"host": "fuzz.example"}]},
    },
    "customresourcedefinitions": {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "fuzzes.example.io", "labels": {"app": "fuzz"}},
        "spec": {"group": "example.io", "names": {"kind": "Fuzz", "plural": "fuzzes"}, "scope": "Namespaced",
                 "versions": [{"name": "v1", "served": True, "storage": True}]},
    },
}  # fmt: skip


def wrong_values(path: Path_, value: Any) -> Iterator[tuple[str, Any]]:
    """The wrong values a field of this type invites, each with a short label."""
    key = path[-1] if path else ""
    yield "null", None
    if isinstance(value, bool):
        yield "string where bool", "yes"
    elif isinstance(value, int):
        yield "string where int", "many"
        yield "huge number", HUGE
        yield "negative", -1
        yield "float where int", 1.5
    elif isinstance(value, str):
        yield "int where string", 12345
        yield "list where string", [value]
        if value[:1].isupper() and value.isalnum():
            yield "unknown enum value", "NotAKnownValue"
    elif isinstance(value, dict):
        yield "list where map", [value]
        yield "string where map", "x"
    elif isinstance(value, list):
        yield "map where list", {"item": value[0] if value else None}
        yield "string where list", "x"
        yield "null item", [None]
    if isinstance(key, str) and INT_OR_PERCENT.match(key) and not isinstance(value, bool):
        yield "percentage over 100", "150%"
        yield "negative percentage", "-5%"
        yield "not a percentage", "abc%"
    if key == "matchLabels":
        yield "bad label key", {"bad key!": "x"}
    if key == "matchExpressions":
        yield "unknown selector operator", [{"key": "app", "operator": "Bogus", "values": ["x"]}]
        yield "selector values a string", [{"key": "app", "operator": "In", "values": "x"}]


def _walk(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every field below the root, parents before children."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k), v
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*path, i), v
            yield from _walk(v, (*path, i))


def _set(obj: dict[str, Any], path: Path_, value: Any, *, remove: bool = False) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    parent: Any = out
    for part in path[:-1]:
        parent = parent[part]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def mutations(sample: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(what, field path, malformed object) for every field of `sample` (apiVersion and kind included:
    a wrong apiVersion or a missing kind is bad input too)."""
    yield "wrong apiVersion", "apiVersion", {**sample, "apiVersion": "apps.kruise.io/v9"}
    for path, value in _walk(sample):
        if path in (("apiVersion",), ("kind",)):
            continue
        field = render(path)
        if len(path) > 1 and path[-2] in USER_KEYED_MAPS:
            field = render(path[:-1])
        elif len(path) > 1 and path[-2] in QUANTITY_MAPS:
            field = f"{render(path[:-1])}[{path[-1]}]"
        for what, wrong in wrong_values(path, value):
            yield what, field, _set(sample, path, wrong)
        if (isinstance(path[-1], str) and path[:1] != ("metadata",)) or path[-1] == "name":
            yield "missing field", render(path), _set(sample, path, None, remove=True)


def review(entry: Entry, resource: str, version: str, operation: str, obj: Any, old: Any) -> dict[str, Any]:
    group = entry.groups[0]
    kind = (obj if isinstance(obj, dict) else old if isinstance(old, dict) else {}).get("kind", "")
    meta = (obj if operation != "DELETE" else old) or {}
    meta = meta.get("metadata") if isinstance(meta, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    return {
        "apiVersion": REVIEW_VERSION, "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": kind or "Unknown"},
            "resource": {"group": group, "version": version, "resource": resource.split("/")[0]},
            "subResource": "eviction" if resource == "pods/eviction" else "",
            "name": name if isinstance(name, str) else "",
            "namespace": namespace if isinstance(namespace, str) else "",
            "operation": operation, "userInfo": {"username": "fuzz"},
            "object": obj, "oldObject": old, "dryRun": False,
        },
    }  # fmt: skip


def _dumps(body: Any) -> bytes:
    """JSON bytes, ints past 64 bits included (orjson refuses them; the apiserver's bytes may hold one)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        import json

        return json.dumps(body).encode()


def _targets(entry: Entry) -> list[str]:
    """The operations a mutated object is sent as; DELETE sends it as the old object."""
    return [op for op in ("CREATE", "UPDATE", "DELETE") if op in entry.operations]


Docs = dict[tuple[str, str], dict[str, Any]]


def _samples_for(entry: Entry, docs: Docs) -> list[tuple[str, dict[str, Any]]]:
    """(version, sample) for the entry's resource: the docs' examples at a version the entry lists."""
    resource = entry.resources[0]
    group = entry.groups[0]
    if "kruise.io" not in group:
        return [(entry.versions[0], BUILTIN_SAMPLES[resource])]
    out = []
    for (api_version, _kind), sample in docs.items():
        sample_group, _, version = api_version.rpartition("/")
        plural = _plural_of(group, _kind)
        if sample_group == group and plural == resource and version in entry.versions:
            out.append((version, sample))
    return out


def _plural_of(group: str, kind: str) -> str | None:
    from kruise.api.registry import KINDS

    return next((i.plural for i in KINDS if i.group == group and i.kind == kind), None)


def object_cases() -> list[Case]:
    """Each field mutation once per operation the entry takes, spread round robin over the entries of
    the same resource (mutating and validating), so every mutation reaches a webhook and the corpus
    stays a few thousand requests."""
    docs = _doc_samples()
    by_resource: dict[tuple[str, str], list[Entry]] = {}
    for entry in [*mutating_entries(), *validating_entries()]:
        by_resource.setdefault((entry.groups[0], entry.resources[0]), []).append(entry)
    cases: list[Case] = []
    for (_group, resource), entries in by_resource.items():
        targets = [(e, op) for e in entries for op in _targets(e)]
        samples = {version: sample for e in entries for version, sample in _samples_for(e, docs)}
        if not samples:
            raise AssertionError(f"no valid sample object for {resource} (add an example to docs/)")
        turn = 0
        for version, sample in sorted(samples.items()):
            label = sample["kind"]
            for what, field, bad in mutations(sample):
                entry, op = targets[turn % len(targets)]
                turn += 1
                new, old = (None, bad) if op == "DELETE" else (bad, sample if op == "UPDATE" else None)
                body = _dumps(review(entry, resource, version, op, new, old))
                created = bad if op == "CREATE" else None
                cases.append(Case(label, entry.path, f"{op} {what}", field, body, obj=created))
    return cases


def envelope_cases() -> list[Case]:
    """The AdmissionReview itself broken, sent to one mutating, one validating and the pod path."""
    docs = _doc_samples()
    cloneset = docs[("apps.kruise.io/v1alpha1", "CloneSet")]
    entries = {e.path: e for e in [*mutating_entries(), *validating_entries()]}
    good: dict[str, dict[str, Any]] = {}
    for path, resource, obj in (
        ("/mutate-apps-kruise-io-v1alpha1-cloneset", "clonesets", cloneset),
        ("/validate-apps-kruise-io-v1alpha1-cloneset", "clonesets", cloneset),
        ("/mutate-pod", "pods", BUILTIN_SAMPLES["pods"]),
    ):
        good[path] = review(entries[path], resource, entries[path].versions[0], "CREATE", obj, None)
    cases: list[Case] = []
    for path, body in good.items():
        raw = orjson.dumps(body)

        def add(
            what: str, field: str | None, data: Any, content_type: str = "application/json", at: str = path
        ) -> None:
            payload = data if isinstance(data, bytes) else _dumps(data)
            cases.append(Case("AdmissionReview", at, what, field, payload, content_type))

        for cut in (1, len(raw) // 3, len(raw) // 2, len(raw) - 1):
            add(f"truncated at {cut} bytes", None, raw[:cut])
        for junk in (b"{not json", b"\xff\xfe\x00", b"null", b"[]", b'"review"', b"42", b""):
            add(f"not a review: {junk[:12]!r}", None, junk)
        add("wrong content type", None, raw, "text/plain")
        add("wrong review apiVersion", "apiVersion", {**body, "apiVersion": "admission.k8s.io/v9"})
        add("wrong review kind", "kind", {**body, "kind": "Pod"})
        add("request missing", "request", {k: v for k, v in body.items() if k != "request"})
        add("request null", "request", {**body, "request": None})
        add("request a list", "request", {**body, "request": [body["request"]]})
        req = body["request"]
        for key in ("uid", "kind", "resource", "operation"):
            without = {k: v for k, v in req.items() if k != key}
            add(f"request.{key} missing", f"request.{key}", {**body, "request": without})
        for key, wrong in (
            ("uid", 7),
            ("uid", ""),
            ("kind", "CloneSet"),
            ("resource", ["clonesets"]),
            ("operation", "PATCH"),
            ("object", [1]),
            ("object", "x"),
            ("oldObject", 3),
            ("dryRun", "maybe"),
            ("userInfo", "root"),
            ("name", 5),
            ("namespace", {}),
            ("subResource", []),
        ):
            add(f"request.{key} wrong type", f"request.{key}", {**body, "request": {**req, key: wrong}})
        for key in ("group", "version", "kind"):
            kind = {k: v for k, v in req["kind"].items() if k != key}
            missing = None if key == "group" else f"request.kind.{key}"
            add(f"request.kind.{key} missing", missing, {**body, "request": {**req, "kind": kind}})
        add("request.kind.version unknown", "request.kind.version",
            {**body, "request": {**req, "kind": {**req["kind"], "version": "v9"}}})  # fmt: skip
    return cases


def corpus() -> list[Case]:
    return [*object_cases(), *envelope_cases()]
