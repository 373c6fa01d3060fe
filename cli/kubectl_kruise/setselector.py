"""`set selector (TYPE NAME | TYPE/NAME)... EXPRESSIONS [--resource-version=V]`.

As in kruise-tools (and kubectl), only a Service's selector can be set; any other kind is refused,
object by object, with upstream's reason. The new selector replaces the old one: the patch
replaces `spec.selector` whole (kruise-tools' merge patch of the whole object would merge the old
labels into the new ones instead, which its own help text says is not what the command does).
`--resource-version` makes the write conditional on that version, as upstream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client

COMMAND = PatchCommand("selector updated", None)
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = re.compile(rf"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}")
LABEL_VALUE = re.compile(rf"({_NAME})?")
_SET_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)$")


class SetSelectorError(PluginError):
    """A bad expression or an object that has no selector to set; upstream's wording."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()

    def go(self) -> str:
        """How Go's %v prints a metav1.LabelSelectorRequirement: `{env In [a b]}`."""
        return f"{{{self.key} {self.operator} [{' '.join(self.values)}]}}"


@dataclass(frozen=True)
class Selector:
    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()


def _terms(text: str) -> list[str]:
    """Split on the commas outside parentheses."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(text[start:i].strip())
            start = i + 1
    terms.append(text[start:].strip())
    return [term for term in terms if term]


def _check(key: str, values: tuple[str, ...]) -> None:
    if not LABEL_KEY.fullmatch(key) or len(key.rpartition("/")[2]) > 63:
        raise SetSelectorError(f'unable to parse requirement: invalid label key "{key}"')
    for value in values:
        if len(value) > 63 or not LABEL_VALUE.fullmatch(value):
            raise SetSelectorError(f'unable to parse requirement: invalid label value: "{value}"')


def parse_selector(text: str) -> Selector:
    """metav1.ParseToLabelSelector: `k=v`/`k==v` become match labels, set terms and bare keys
    become expressions, and `!=` has no LabelSelector form."""
    labels: dict[str, str] = {}
    expressions: list[Requirement] = []
    for term in _terms(text):
        if match := _SET_TERM.match(term):
            values = tuple(sorted({v.strip() for v in match["values"].split(",") if v.strip()}))
            _check(match["key"], values)
            operator = "In" if match["op"] == "in" else "NotIn"
            expressions.append(Requirement(match["key"], operator, values))
        elif match := _EQ_TERM.match(term):
            _check(match["key"], (match["value"],))
            if match["op"] == "!=":
                raise SetSelectorError('"!=" is not a valid label selector operator')
            labels[match["key"]] = match["value"]
        elif term.startswith("!"):
            _check(term[1:].strip(), ())
            expressions.append(Requirement(term[1:].strip(), "DoesNotExist"))
        else:
            _check(term, ())
            expressions.append(Requirement(term, "Exists"))
    return Selector(labels, tuple(expressions))


def split_arguments(args: list[str]) -> tuple[list[kinds.Target], Selector]:
    """The last argument is the selector; everything before it names the objects."""
    if not args:
        raise SetSelectorError("one selector is required")
    selector = parse_selector(args[-1])
    return kinds.parse_targets(args[:-1], objects.SET_TARGETS), selector


def plan(selector: Selector, resource_version: str = "") -> Plan:
    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        name = objects.object_name(target)
        if target.workload is not objects.SERVICE:
            raise SetSelectorError(f"{name} setting a selector is only supported for Services")
        if selector.match_expressions:
            shown = " ".join(req.go() for req in selector.match_expressions)
            raise SetSelectorError(f"{name} match expression [{shown}] not supported on this object")
        ops: list[dict[str, Any]] = []
        if resource_version:
            # Sent as the object's version, the server refuses the write (409) if it is not current.
            ops.append({"op": "replace", "path": "/metadata/resourceVersion", "value": resource_version})
        ops.append({"op": "add", "path": "/spec/selector", "value": dict(selector.match_labels)})
        return Edit(ops)

    return edit


async def set_selector(
    client: Client,
    namespace: str,
    targets: list[kinds.Target],
    selector: Selector,
    resource_version: str,
    printer: Printer,
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(selector, resource_version), COMMAND, printer)
