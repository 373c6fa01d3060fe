"""Regenerate ``tables.py``: wire schemas of the built-in API types, read from Go sources.

kube-apiserver accepts ``application/vnd.kubernetes.protobuf`` bodies, and client-go's typed
clients (``kubectl create configmap|secret|deployment|...``) send them. Decoding needs, per
message, its field numbers, JSON names, Go kinds and pointer-ness. The field tags of
``k8s.io/api``'s ``types.go`` carry all of that (``protobuf:"bytes,3,opt,name=spec"``) — the
``.proto`` files do not say which scalars are pointers, which decides whether an explicit
zero (``replicas: 0``) survives. Run against a checkout of k8s.io/api::

    python -m kruise.sandbox.apiserver.protobuf.gen /path/to/k8s.io/api

The apimachinery types (ObjectMeta, Time, IntOrString, Quantity...) are few and stable; they
are written out in ``meta.py`` rather than read from a second checkout, and ``tables.py`` holds
only what this script reads.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

GROUPS = {
    "core": "",
    "apps": "apps",
    "batch": "batch",
    "coordination": "coordination.k8s.io",
    "events": "events.k8s.io",
    "policy": "policy",
    "admissionregistration": "admissionregistration.k8s.io",
    "rbac": "rbac.authorization.k8s.io",
    "networking": "networking.k8s.io",
    "scheduling": "scheduling.k8s.io",
    "discovery": "discovery.k8s.io",
    "autoscaling": "autoscaling",
    "authorization": "authorization.k8s.io",
}

# Go types that are not messages of their own in JSON.
SPECIAL = {
    "metav1.Time": "meta.Time",
    "metav1.MicroTime": "meta.Time",
    "metav1.Duration": "meta.Duration",
    "intstr.IntOrString": "meta.IntOrString",
    "resource.Quantity": "meta.Quantity",
    "runtime.RawExtension": "meta.RawExtension",
    "metav1.ObjectMeta": "meta.ObjectMeta",
    "metav1.ListMeta": "meta.ListMeta",
    "metav1.LabelSelector": "meta.LabelSelector",
    "metav1.LabelSelectorRequirement": "meta.LabelSelectorRequirement",
    "metav1.OwnerReference": "meta.OwnerReference",
    "metav1.Condition": "meta.Condition",
    "metav1.DeleteOptions": "meta.DeleteOptions",
    "metav1.FieldSelectorRequirement": "meta.FieldSelectorRequirement",
}
STRINGS = {"types.UID", "string", "metav1.StatusReason"}
INTS = {"int", "int32", "int64", "uint32", "uint64", "byte"}

_FIELD = re.compile(r"^\s+(\w+)\s+([^`]+?)\s+`([^`]*)`")
_EMBEDDED = re.compile(r"^\s+([\w.*]+)\s+`([^`]*)`")
_TYPE = re.compile(r"^type (\w+) (.+?)(?:\s*//.*)?$")
_IMPORT = re.compile(r'^\s*(\w+\s+)?"([^"]+)"')


def _parse(path: Path, pkg: str) -> tuple[dict, dict, dict]:
    """Structs (name -> fields), named non-struct types (name -> Go type) and import aliases."""
    structs: dict[str, list[tuple[str, str, str]]] = {}
    named: dict[str, str] = {}
    aliases: dict[str, str] = {}
    current: str | None = None
    in_import = False
    for line in path.read_text().splitlines():
        if line.startswith("import ("):
            in_import = True
            continue
        if in_import:
            if line.startswith(")"):
                in_import = False
                continue
            m = _IMPORT.match(line)
            if m:
                alias = (m.group(1) or m.group(2).rsplit("/", 1)[-1]).strip()
                aliases[alias] = m.group(2)
            continue
        if current is None:
            m = _TYPE.match(line)
            if m and m.group(2).startswith("struct {"):
                current = m.group(1)
                structs[current] = []
            elif m:
                named[m.group(1)] = m.group(2).strip()
            continue
        if line.startswith("}"):
            current = None
            continue
        m = _FIELD.match(line)
        if m and "protobuf:" in m.group(3):
            structs[current].append((m.group(1), m.group(2), m.group(3)))
        m = _EMBEDDED.match(line)
        if m and "protobuf:" in m.group(2):
            structs[current].append((m.group(1).rsplit(".", 1)[-1], m.group(1), m.group(2)))
    return structs, named, aliases


def _tag(tags: str, key: str) -> str:
    m = re.search(rf'{key}:"([^"]*)"', tags)
    return m.group(1) if m else ""


def generate(root: Path) -> tuple[dict, dict]:
    parsed = {pkg: _parse(root / pkg / "v1" / "types.go", pkg) for pkg in GROUPS}
    tables: dict[str, dict[int, tuple[str, str, str | None, str]]] = {}
    kinds: dict[str, str] = {}

    def resolve(pkg: str, gotype: str) -> tuple[str, str | None]:
        """(kind, ref) of a Go element type seen in package ``pkg``."""
        structs, named, aliases = parsed[pkg]
        if gotype in SPECIAL:
            return "m", SPECIAL[gotype]
        if gotype in STRINGS:
            return "s", None
        if gotype in INTS:
            return "i", None
        if gotype == "bool":
            return "b", None
        if gotype == "[]byte":
            return "y", None
        if gotype.startswith("[]"):  # a named slice type, e.g. ``type ExtraValue []string``
            return resolve(pkg, gotype[2:])
        if gotype.startswith("map["):
            key, val = re.match(r"map\[([^\]]+)\](.+)", gotype).groups()
            if named.get(val, "").startswith("[]") and named[val] != "[]byte":
                # proto wraps such values in a message of their own (e.g. ExtraValue); not decoded
                raise KeyError(f"{pkg}: map of named slices {gotype}")
            kk, _ = resolve(pkg, key)
            vk, vref = resolve(pkg, val)
            return "M", f"{kk}:{vref or vk}"
        if "." in gotype:
            alias, name = gotype.split(".", 1)
            path = aliases.get(alias, "")
            m = re.match(r"k8s\.io/api/(\w+)/v1$", path)
            if m and m.group(1) in parsed:
                return resolve(m.group(1), name)
            raise KeyError(f"{pkg}: unknown type {gotype}")
        if gotype in structs:
            return "m", f"{pkg}.{gotype}"
        if gotype in named:
            return resolve(pkg, named[gotype])
        raise KeyError(f"{pkg}: unknown type {gotype}")

    for pkg, (structs, _named, _aliases) in parsed.items():
        for name, fields in structs.items():
            rows: dict[int, tuple[str, str, str | None, str]] = {}
            for _fname, gotype, tags in fields:
                pb = _tag(tags, "protobuf").split(",")
                js = _tag(tags, "json").split(",")
                flags = "o" if "omitempty" in js[1:] else ""
                t = gotype
                if t.startswith("*"):
                    flags += "p"
                    t = t[1:]
                if pb[2] == "rep" and t.startswith("[]") and t != "[]byte":
                    flags += "r"
                    t = t[2:]
                try:
                    kind, ref = resolve(pkg, t)
                except KeyError as exc:  # alpha types of other API versions: such fields are skipped
                    print(f"skipped {pkg}.{name}.{js[0]}: {exc}", file=sys.stderr)
                    continue
                if kind == "M" or (pb[2] == "rep" and t.startswith("map")):
                    flags = flags.replace("r", "")
                rows[int(pb[1])] = (js[0], kind, ref, flags)
            tables[f"{pkg}.{name}"] = rows
            if any(f[0] == "ObjectMeta" for f in fields) or name.endswith("List"):
                kinds[f"{GROUPS[pkg]}/v1/{name}"] = f"{pkg}.{name}"
    return tables, kinds


def main() -> None:
    root = Path(sys.argv[1])
    tables, kinds = generate(root)
    out = Path(__file__).with_name("tables.py")
    lines = [
        '"""Generated by ``python -m kruise.sandbox.apiserver.protobuf.gen`` from k8s.io/api — do not edit.',
        "",
        "MESSAGES: message -> {field number: (json name, kind, ref, flags)} (see meta.py for the legend).",
        'KINDS: "<group>/<version>/<Kind>" -> message. One message per line.',
        '"""',
        "",
        "# ruff: noqa: E501",
        "# fmt: off",
        "MESSAGES = {",
        *(f"    {name!r}: {tables[name]!r}," for name in sorted(tables)),
        "}",
        "",
        "KINDS = {",
        *(f"    {kind!r}: {kinds[kind]!r}," for kind in sorted(kinds)),
        "}",
        "# fmt: on",
        "",
    ]
    out.write_text("\n".join(lines))
    print(f"{len(tables)} messages, {len(kinds)} kinds -> {out}")


if __name__ == "__main__":
    main()
