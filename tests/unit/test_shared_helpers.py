"""Each shared helper has one home (issue 29): time in `kruise.api.timestamps`, controller references in
`kruise.api.controllerref`, conditions in `kruise.api.conditions`, object reading in `kruise.api.objects`,
the "may this reconcile act yet?" expectations preamble in `kruise.manager.writers.expectations`,
status writes of custom resources in `kruise.manager.writers.status`, ControllerRevision writes in
`kruise.manager.writers.revisions`.

A second definition drifts from the first (the RFC 3339 copies had three parsing behaviours), so
product code may neither define a function under a shared helper's name nor redo its work by hand.
The pattern detectors are the ones `python -m benchmarks.house_counts` counts with.

Tests follow the same rule: fakes and the pod builder live in `tests/kit` (`tests.kit.pods.pod`,
`RecordingClient`, `FakeApi`, ...), so a test module outside it defines no `class Fake...` and no `pod`
builder of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from benchmarks.house_counts import count, expectations_preamble, handles_time, sources

HOMES: dict[str, set[str]] = {
    "api/timestamps.py": {
        "rfc3339",
        "rfc3339_micro",
        "parse_rfc3339",
        "parse_time",
        "go_parse_rfc3339",
        "go_format_rfc3339",
    },
    "api/controllerref.py": {"controller_of", "controlled_by", "controller_uid", "new_controller_ref"},
    "api/conditions.py": {
        "find_condition",
        "get_condition",
        "condition_of",
        "set_condition",
        "remove_condition",
    },
    "api/objects.py": {
        "section",
        "dig",
        "meta_of",
        "labels_of",
        "annotations_of",
        "owner_refs_of",
        "conditions_of",
        "containers_of",
    },
    "manager/writers/expectations.py": {"scale_hold", "writes_pending", "settled"},
}
SHARED = {name: home for home, names in HOMES.items() for name in names}

# Reviewed exceptions: they look like a copy to the detectors but do something else.
CONTROLLER_REF_EXCEPTIONS = {
    # upstream writes the generated PersistentPodState's owner without blockOwnerDeletion
    "control/persistentpodstate/podstates.py generated",
    # drops the other controller references of a child it takes over (a filter, not a lookup)
    "control/uniteddeployment/subsets.py _with_controller",
}
CONDITION_EXCEPTIONS = {
    # validates every condition of a conversion request, naming the bad index
    "api/conversion/crr.py _grace_time",
    # diffs two condition lists
    "control/podprobemarker/serverless.py changed_condition_types",
}


# Status writes not yet moved onto `StatusWriter` (issue 29 step 2): this list only shrinks. The pod
# status writes among them belong to `manager/writers/pods.PodWriter` instead.
STATUS_WRITERS_LEFT = {
    "manager/controllers/containerrecreaterequest/reconciler.py _pod_readiness",
    "manager/controllers/nodepodprobe/reconciler.py _write_results",
    "manager/controllers/podreadiness/reconciler.py reconcile",
    "manager/controllers/sidecarterminator/reconciler.py _mark_terminated",
}


def _where(entries: list[str]) -> set[str]:
    """'path:line name' -> 'path name' (line numbers move with every edit)."""
    return {f"{entry.split(':')[0]} {entry.split(' ', 1)[1]}" for entry in entries}


def test_no_second_definition_of_a_shared_helper() -> None:
    wrong = []
    for rel, text in sources():
        for node in ast.walk(ast.parse(text, filename=rel)):
            is_def = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_def and node.name in SHARED and SHARED[node.name] != rel:
                wrong.append(f"{rel}:{node.lineno} defines {node.name} (its home is {SHARED[node.name]})")
    assert not wrong, "\n".join(wrong)


def test_time_is_formatted_and_parsed_in_one_place() -> None:
    assert count(sources()).time_copies == []


def test_controller_references_are_read_and_built_in_one_place() -> None:
    assert _where(count(sources()).controllerref_copies) <= CONTROLLER_REF_EXCEPTIONS


def test_conditions_are_found_and_written_in_one_place() -> None:
    counts = count(sources())
    assert _where(counts.get_condition_copies + counts.set_condition_copies) <= CONDITION_EXCEPTIONS


def test_reconcilers_ask_expectations_through_one_preamble() -> None:
    assert count(sources()).expectations_preambles == []


def test_no_new_private_status_writer() -> None:
    assert _where(count(sources()).status_writers) <= STATUS_WRITERS_LEFT


def test_controller_revisions_are_written_through_one_writer() -> None:
    assert count(sources()).revision_writers == []


def test_the_guard_sees_a_preamble_copy() -> None:
    copy = (
        "def reconcile(self, key):\n"
        "    satisfied, waited, pending = self.scale_expectations.satisfied(key)\n"
        "    for pod in self.pods:\n"
        "        if not self.rv_expectations.is_satisfied(pod):\n"
        "            return None\n"
    )
    assert expectations_preamble(ast.parse(copy).body[0])
    assert count([("manager/controllers/x/reconciler.py", copy)]).expectations_preambles == [
        "manager/controllers/x/reconciler.py:1 reconcile"
    ]


def test_the_guard_sees_a_copy() -> None:
    copy = "def stamp(t):\n    return t.strftime('%Y-%m-%dT%H:%M:%SZ')\n"
    func = ast.parse(copy).body[0]
    assert handles_time(func)
    assert count([("control/x.py", copy)]).time_copies == ["control/x.py:1 stamp"]


# ---- the test kit's homes ----------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
KIT = "tests/kit/"
# Reviewed exceptions: named like a kit helper but doing something else.
KIT_EXCEPTIONS = {
    # reads the live pod through kubectl (a fetch, not a builder)
    "e2e/cloneset_tester.py Case.pod",
}


def modules_outside_the_kit() -> Iterator[tuple[str, str]]:
    """(path relative to the root, text) of every test and e2e module outside the kit."""
    for top in ("tests", "e2e"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(KIT):
                yield rel, path.read_text()


def _defined(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every class and function defined in `body`, nested ones included."""
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _defined(node.body, f"{name}.")
        elif hasattr(node, "body"):  # if/try/with blocks at any level
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _defined(getattr(node, field, []) or [], prefix)


def kit_copies(files: Iterable[tuple[str, str]]) -> list[str]:
    """`path:line qualname` of each `class Fake...` and each function named `pod` in `files`."""
    found = []
    for rel, text in files:
        for name, node in _defined(ast.parse(text, filename=rel).body):
            fake = isinstance(node, ast.ClassDef) and node.name.startswith("Fake")
            builder = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "pod"
            if (fake or builder) and f"{rel} {name}" not in KIT_EXCEPTIONS:
                found.append(f"{rel}:{node.lineno} {name}")
    return found


def test_fakes_and_the_pod_builder_live_in_the_kit() -> None:
    files = list(modules_outside_the_kit())
    assert any(rel == "tests/unit/test_shared_helpers.py" for rel, _ in files)
    assert kit_copies(files) == [], (
        "move these into tests/kit (or reuse the kit's fake or tests.kit.pods.pod)"
    )


def test_the_kit_guard_sees_a_copy() -> None:
    copy = (
        "class FakeClient:\n"
        "    def pod(self, name):\n"
        "        return {'metadata': {'name': name}}\n"
        "def pod(name):\n"
        "    return {}\n"
        "def test_x():\n"
        "    class FakeThing:\n"
        "        pass\n"
    )
    assert kit_copies([("tests/unit/x/test_y.py", copy)]) == [
        "tests/unit/x/test_y.py:1 FakeClient",
        "tests/unit/x/test_y.py:2 FakeClient.pod",
        "tests/unit/x/test_y.py:4 pod",
        "tests/unit/x/test_y.py:7 test_x.FakeThing",
    ]
