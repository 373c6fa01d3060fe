"""Every control/<kind> package, and every daemon/<function> package, names its entry points the same
way (docs/where-things-go.md, "A kind's entry points"): `__init__.__all__` lists exactly the package's
`plan_<phase>` functions, each returning a frozen dataclass `<Phase>Plan`; nothing else is named
`plan*`, and every `*Plan` class of the package is what one of them returns. Checked by
introspection, so a new kind or a renamed phase cannot drift. And no module is imported under a bare
generic name (`plan`, `logic`): callers name what they use."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOT_KINDS = {"common"}
NOT_DAEMON_FUNCTIONS = {"cri"}  # the CRI client and its generated stubs: no rules of the daemon's own
GENERIC_MODULE_NAMES = {"plan", "logic"}
ENTRY = re.compile(r"^plan_([a-z][a-z0-9]*(?:_[a-z0-9]+)*)$")


def _kinds() -> list[str]:
    return sorted(
        p.parent.name for p in (ROOT / "control").glob("*/__init__.py") if p.parent.name not in NOT_KINDS
    )


def _daemon_packages() -> list[str]:
    return sorted(
        p.parent.name
        for p in (ROOT / "daemon").glob("*/__init__.py")
        if p.parent.name not in NOT_DAEMON_FUNCTIONS
    )


def _packages() -> list[str]:
    return [f"kruise.control.{kind}" for kind in _kinds()] + [
        f"kruise.daemon.{name}" for name in _daemon_packages()
    ]


def _submodules(package: ModuleType) -> list[ModuleType]:
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if not info.ispkg
    ]


def _own(module: ModuleType, predicate: typing.Callable[[object], bool]) -> list[tuple[str, typing.Any]]:
    """Top-level members defined in `module` itself (not imported into it)."""
    return [
        (name, value)
        for name, value in vars(module).items()
        if predicate(value) and getattr(value, "__module__", None) == module.__name__
    ]


def _returns(function: typing.Callable[..., object]) -> object:
    return typing.get_type_hints(function).get("return")


def _camel(phase: str) -> str:
    return "".join(word.capitalize() for word in phase.split("_"))


def violations(package_name: str) -> list[str]:
    """What in the package breaks the convention, one line each (empty: it follows it)."""
    package = importlib.import_module(package_name)
    kind = package_name.rsplit(".", 1)[-1]
    modules = _submodules(package)
    found: list[str] = []
    exported = getattr(package, "__all__", None)
    if exported is None:
        found.append(f"{kind}: __init__ has no __all__ (its plan_<phase> entry points, [] when none)")
        exported = []
    entry_points: dict[str, typing.Any] = {}
    submodule_names = {m.__name__.rsplit(".", 1)[-1] for m in modules}
    for name in exported:
        match = ENTRY.match(name)
        value = getattr(package, name, None)
        if name in submodule_names:
            found.append(f"{kind}.{name}: exported name shadows the submodule {kind}/{name}.py")
        if match is None or not inspect.isfunction(value):
            found.append(f"{kind}.{name}: in __all__ but not a function named plan_<phase>")
            continue
        entry_points[name] = value
        expected = f"{_camel(match.group(1))}Plan"
        returned = _returns(value)
        returned_name = getattr(returned, "__name__", repr(returned))
        if returned_name != expected:
            found.append(f"{kind}.{name}: returns {returned_name}, not {expected}")
        elif not (
            inspect.isclass(returned)
            and dataclasses.is_dataclass(returned)
            and returned.__dataclass_params__.frozen  # type: ignore[attr-defined]
        ):
            found.append(f"{kind}.{name}: {returned_name} is not a frozen dataclass")
    returned_by_entries = {_returns(f) for f in entry_points.values()}
    for module in modules:
        where = module.__name__.rsplit(".", 1)[-1]
        for name, function in _own(module, inspect.isfunction):
            if name.lstrip("_").startswith("plan") and entry_points.get(name) is not function:
                found.append(f"{kind}/{where}.py {name}: named plan* but not an entry point in __all__")
        for name, cls in _own(module, inspect.isclass):
            if name.endswith("Plan") and cls not in returned_by_entries:
                found.append(f"{kind}/{where}.py {name}: a *Plan class that no entry point returns")
    return found


def test_every_kind_package_is_checked() -> None:
    """A kind folder without `__init__.py` would escape the check (and the import root)."""
    folders = {p.name for p in (ROOT / "control").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert folders == set(_kinds()) | NOT_KINDS
    assert {"cloneset", "statefulset", "daemonset"} <= set(_kinds())
    daemon = {p.name for p in (ROOT / "daemon").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert daemon == set(_daemon_packages()) | NOT_DAEMON_FUNCTIONS
    assert "containerrecreate" in _daemon_packages()


@pytest.mark.parametrize("package", _packages())
def test_package_names_its_entry_points_the_same_way(package: str) -> None:
    found = violations(package)
    assert found == [], "\n".join(found)


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] != "kruise":
        return False
    path = ROOT.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def generic_module_imports(path: Path) -> list[str]:
    """`from kruise.x import plan`, `... import planning as plan`, `import kruise.x.logic as logic`:
    a module bound to a name that says nothing of what it holds, one line each."""
    found = []
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [(f"{node.module}.{a.name}", a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [(a.name, a.asname) for a in node.names if a.asname]
        else:
            continue
        for module, bound in targets:
            if bound in GENERIC_MODULE_NAMES and _is_module(module):
                found.append(f"{where}:{node.lineno} module {module} imported as {bound}")
    return found


def test_no_module_is_imported_under_a_generic_name() -> None:
    folders = ["api", "kube", "control", "manager", "webhook", "daemon", "cli", "tests"]
    found = [
        line
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in generic_module_imports(path)
    ]
    assert found == [], "\n".join(found)


def test_the_generic_import_check_sees_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from kruise.daemon.containerrecreate import progress as plan\n"
        "import kruise.control.cloneset.scale as logic\n"
        "from kruise.control.cloneset.scale import plan_scale\n"
        "from kruise.control.broadcastjob import plan\n"
    )
    lines = [line.split(" ", 1)[1] for line in generic_module_imports(sample)]
    assert lines == [
        "module kruise.daemon.containerrecreate.progress imported as plan",
        "module kruise.control.cloneset.scale imported as logic",
        "module kruise.control.broadcastjob.plan imported as plan",
    ]


BAD_PACKAGE = {
    "__init__.py": (
        "from fakekind.plan import plan, plan_scale, plan_update, Helper\n"
        "__all__ = ['plan', 'plan_scale', 'plan_update', 'Helper']\n"
    ),
    "plan.py": """
from dataclasses import dataclass


@dataclass
class ScalePlan:
    n: int


@dataclass(frozen=True)
class OrphanPlan:
    n: int


class Helper:
    pass


def plan() -> ScalePlan:
    return ScalePlan(1)


def plan_scale() -> ScalePlan:
    return ScalePlan(1)


def plan_update() -> int:
    return 1


def planned_things() -> int:
    return 1
""",
}


def test_the_checker_sees_each_outlier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in BAD_PACKAGE.items():
        (tmp_path / "fakekind").mkdir(exist_ok=True)
        (tmp_path / "fakekind" / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert sorted(violations("fakekind")) == [
            "fakekind.Helper: in __all__ but not a function named plan_<phase>",
            "fakekind.plan: exported name shadows the submodule fakekind/plan.py",
            "fakekind.plan: in __all__ but not a function named plan_<phase>",
            "fakekind.plan_scale: ScalePlan is not a frozen dataclass",
            "fakekind.plan_update: returns int, not UpdatePlan",
            "fakekind/plan.py OrphanPlan: a *Plan class that no entry point returns",
            "fakekind/plan.py plan: named plan* but not an entry point in __all__",
            "fakekind/plan.py planned_things: named plan* but not an entry point in __all__",
        ]
    finally:
        for name in [m for m in sys.modules if m == "fakekind" or m.startswith("fakekind.")]:
            del sys.modules[name]
