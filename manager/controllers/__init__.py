"""One subpackage per controller, each exposing `SETUP: ControllerSetup` (see `kruise.manager.context`).

Discovery by subpackage keeps controllers independent of each other and of the process wiring.
"""

from __future__ import annotations

import importlib
import pkgutil

from kruise.manager.context import ControllerSetup


def discover() -> list[ControllerSetup]:
    """Every controller SETUP under this package, sorted by name for a stable start order."""
    setups: list[ControllerSetup] = []
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{module.name}")
        setup = getattr(package, "SETUP", None)
        if not isinstance(setup, ControllerSetup):
            raise TypeError(f"{package.__name__}: must expose SETUP as a ControllerSetup")
        setups.append(setup)
    names = [s.name for s in setups]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"controller names must be unique, repeated: {sorted(duplicates)}")
    return sorted(setups, key=lambda s: s.name)
