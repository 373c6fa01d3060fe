"""List or run the bench_* modules: `python -m benchmarks` runs all, `python -m benchmarks informer` one.

Each module exposes `main() -> None` printing its own results; options after a single benchmark's
name go to its `main(argv)` (`python -m benchmarks cloneset --pods 200`).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main(argv: list[str]) -> int:
    names = available()
    if argv and argv[0] in ("-l", "--list"):
        print("\n".join(names))
        return 0
    split = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    argv, options = argv[:split], argv[split:]
    wanted = [a if a.startswith("bench_") else f"bench_{a}" for a in argv] or names
    if options and len(wanted) != 1:
        print(f"options {' '.join(options)} need exactly one benchmark", file=sys.stderr)
        return 2
    unknown = [w for w in wanted if w not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    for name in wanted:
        print(f"== {name}")
        module = importlib.import_module(f"benchmarks.{name}")
        module.main(options) if options else module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
