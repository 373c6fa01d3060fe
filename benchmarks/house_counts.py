"""Count the hand-rolled object access issue 29 ("the house") sets out to remove, so every step of it
can be re-measured the same way: `python -m benchmarks.house_counts` (or `--json`).

What is counted, in the product packages api/kube/control/manager/webhook/daemon (cli and sandbox
are outside the issue's scope; sandbox imports nothing of kruise and keeps its own copies):

- ``or_chain_lines`` / ``or_chains``: lines of code (not prose) holding ``or {})`` (a dict walked by
  hand one level at a time) and the number of such links; ``deep_chain_lines``: lines with two or more links
  (walks three levels deep, e.g. ``((x.get("a") or {}).get("b") or {}).get("c")``).
- ``obj_aliases``: module-level ``Obj = ...`` / ``Pod = ...`` / ``MutableObj = ...`` type aliases (beside
  ``api/objects.Obj``, read only, and ``api/objects.MutableObj``, an object being built or changed).
- ``time_copies``: functions outside ``api/timestamps.py`` that format or parse RFC 3339 by hand
  (a ``%Y-%m-%dT%H:%M:%S`` format, ``fromisoformat``, or a hand-written RFC 3339 regex).
- ``controllerref_copies``: functions outside the controller-reference modules that look for the
  controlling owner reference (``ref.get("controller")``) or build a controller reference literal.
- ``get_condition_copies`` / ``set_condition_copies``: functions outside the conditions module
  that find a condition by type in a ``conditions`` list, or write one into it.
- ``expectations_preambles``: functions asking ``*expectations.satisfied(key)`` or checking
  ``is_satisfied`` for every pod of a loop (the "may this reconcile act yet?" preamble), outside its
  home ``manager/writers/expectations.py``.
- ``status_writers``: functions in ``manager/`` outside ``manager/writers/`` that write a status
  subresource themselves (``update_status``, or an update/patch with ``subresource="status"``) instead of
  going through ``manager/writers/status.StatusWriter`` (or the pod writer, for pods).
- ``revision_writers``: functions in ``manager/`` outside ``manager/writers/`` that create, update,
  patch or delete ControllerRevisions themselves instead of through ``RevisionWriter``.
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "kube", "control", "manager", "webhook", "daemon")
TIME_HOME = {"api/timestamps.py"}
CONTROLLERREF_HOMES = {"api/controllerref.py", "control/common/controllerref.py"}
CONDITIONS_HOME = {"api/conditions.py"}
ALIAS_HOME = "api/objects.py"
EXPECTATIONS_HOME = {"manager/writers/expectations.py"}
WRITERS_HOME = "manager/writers/"
OR_LINK = "or {})"
_RFC3339_REGEX = re.compile(r"\\d\{4\}-\\d\{2\}-\\d\{2\}")
_OWNER_REF_KEYS = {"apiVersion", "kind", "name", "uid"}


@dataclass
class Counts:
    or_chain_lines: int = 0
    or_chains: int = 0
    deep_chain_lines: int = 0
    obj_aliases: int = 0
    time_copies: list[str] = field(default_factory=list)
    controllerref_copies: list[str] = field(default_factory=list)
    get_condition_copies: list[str] = field(default_factory=list)
    set_condition_copies: list[str] = field(default_factory=list)
    expectations_preambles: list[str] = field(default_factory=list)
    status_writers: list[str] = field(default_factory=list)
    revision_writers: list[str] = field(default_factory=list)
    or_chains_by_package: dict[str, int] = field(default_factory=dict)


def sources(root: Path = ROOT) -> Iterator[tuple[str, str]]:
    """(path relative to the root, text) of every product module, generated code left out."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "_pb2" not in path.name:
                yield path.relative_to(root).as_posix(), path.read_text()


def code_lines(text: str) -> list[str]:
    """The module's lines with strings and comments blanked, so prose quoting a pattern is not counted."""
    lines = text.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        (srow, scol), (erow, ecol) = tok.start, tok.end
        for row in range(srow, erow + 1):
            line = lines[row - 1]
            start = scol if row == srow else 0
            end = ecol if row == erow else len(line)
            lines[row - 1] = line[:start] + " " * (end - start) + line[end:]
    return lines


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function without those of functions nested in it (each is judged alone)."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_call_to(node: ast.AST, attr: str, *args: str) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr):
        return False
    return not args or [_str(a) for a in node.args[: len(args)]] == list(args)


def handles_time(func: ast.AST) -> bool:
    for node in _own_nodes(func):
        text = _str(node)
        if text is not None and ("%Y-%m-%dT%H:%M:%S" in text or _RFC3339_REGEX.search(text)):
            return True
        if _is_call_to(node, "fromisoformat"):
            return True
        if isinstance(node, ast.Name) and node.id.startswith("_RFC3339"):
            return True
    return False


def handles_controller_ref(func: ast.AST) -> bool:
    for node in _own_nodes(func):
        if _is_call_to(node, "get", "controller"):
            return True
        if isinstance(node, ast.Dict):
            keys = {_str(k) for k in node.keys if k is not None}
            if keys >= _OWNER_REF_KEYS and "controller" in keys:
                return True
    return False


def _mentions_conditions(func: ast.AST) -> bool:
    return any(_str(n) == "conditions" for n in _own_nodes(func)) or any(
        isinstance(n, ast.arg) and n.arg == "conditions" for n in ast.walk(func)
    )


def finds_condition(func: ast.AST) -> bool:
    """Looks a condition up by type: compares ``c.get("type")`` inside a function about conditions."""
    if not _mentions_conditions(func):
        return False
    return any(isinstance(n, ast.Compare) and _is_call_to(n.left, "get", "type") for n in _own_nodes(func))


def writes_condition(func: ast.AST) -> bool:
    """Finds a condition by type and then stores into the conditions list (assign, append, filter)."""
    if not finds_condition(func):
        return False
    for node in _own_nodes(func):
        if _is_call_to(node, "append") or (
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
        ):
            return True
    return False


def expectations_preamble(func: ast.AST) -> bool:
    for node in _own_nodes(func):
        if _is_call_to(node, "satisfied") and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr.endswith("expectations"):
                return True
        if isinstance(node, ast.For | ast.GeneratorExp) and any(
            _is_call_to(n, "is_satisfied") for n in ast.walk(node)
        ):
            return True
    return False


def writes_status(func: ast.AST) -> bool:
    """Sends a status subresource write: ``update_status(...)`` or ``subresource="status"``, or a
    ``subresource=`` that is not a literal (a helper passing the subresource through hid CRR's status
    write from this count before)."""
    for node in _own_nodes(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "update_status":
            return True
        if node.func.attr in ("update", "patch") and any(
            k.arg == "subresource" and (_str(k.value) == "status" or not isinstance(k.value, ast.Constant))
            for k in node.keywords
        ):
            return True
    return False


def writes_revisions(func: ast.AST) -> bool:
    """Sends a ControllerRevision write: a create, update, patch or delete of ``CONTROLLER_REVISIONS``."""
    for node in _own_nodes(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        first = node.args[0] if node.args else None
        if (
            node.func.attr in ("create", "update", "patch", "delete")
            and isinstance(first, ast.Name)
            and first.id == "CONTROLLER_REVISIONS"
        ):
            return True
    return False


def _is_alias(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    return bool(names & {"Obj", "Pod", "MutableObj"}) and isinstance(node, ast.Assign | ast.AnnAssign)


def count(files: Iterator[tuple[str, str]] | list[tuple[str, str]]) -> Counts:
    counts = Counts()
    for rel, text in files:
        package = rel.split("/", 1)[0]
        for line in code_lines(text):
            links = line.count(OR_LINK)
            if links:
                counts.or_chain_lines += 1
                counts.or_chains += links
                counts.deep_chain_lines += links >= 2
                counts.or_chains_by_package[package] = counts.or_chains_by_package.get(package, 0) + 1
        tree = ast.parse(text, filename=rel)
        if rel != ALIAS_HOME:
            counts.obj_aliases += sum(_is_alias(node) for node in tree.body)
        for func in _functions(tree):
            where = f"{rel}:{func.lineno} {func.name}"
            if rel not in TIME_HOME and handles_time(func):
                counts.time_copies.append(where)
            if rel not in CONTROLLERREF_HOMES and handles_controller_ref(func):
                counts.controllerref_copies.append(where)
            if rel not in CONDITIONS_HOME and writes_condition(func):
                counts.set_condition_copies.append(where)
            elif rel not in CONDITIONS_HOME and finds_condition(func):
                counts.get_condition_copies.append(where)
            if rel not in EXPECTATIONS_HOME and expectations_preamble(func):
                counts.expectations_preambles.append(where)
            in_manager = rel.startswith("manager/") and not rel.startswith(WRITERS_HOME)
            if in_manager and writes_status(func):
                counts.status_writers.append(where)
            if in_manager and writes_revisions(func):
                counts.revision_writers.append(where)
    return counts


def summary(counts: Counts) -> dict[str, int]:
    return {
        k: len(v) if isinstance(v, list) else v
        for k, v in asdict(counts).items()
        if k != "or_chains_by_package"
    }


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    counts = count(sources())
    if "--json" in argv:
        print(json.dumps(asdict(counts), indent=2))
        return
    for name, value in summary(counts).items():
        print(f"{name:24} {value}")
    print(
        "or_chain_lines by package: " + ", ".join(f"{k}={v}" for k, v in counts.or_chains_by_package.items())
    )
    if "-v" in argv:
        for name in (
            "time_copies",
            "controllerref_copies",
            "get_condition_copies",
            "set_condition_copies",
            "expectations_preambles",
            "status_writers",
            "revision_writers",
        ):
            print(f"\n{name}:")
            print("\n".join(f"  {where}" for where in getattr(counts, name)))


if __name__ == "__main__":
    main()
