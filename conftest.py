"""How `make test` (`pytest -n 3 --dist loadfile`) shares the suite among pytest-xdist workers.

A test module is the unit of work, so its module-scoped fixtures (a containerd cluster, a live webhook)
start once; every worker starts its own sandboxes, each on its own claimed addresses and reserved ports
(`kruise.sandbox.simulator.addresses`, `kruise.sandbox.ports`), so modules on different workers run side
by side. The exception is the machine's one real-node setup — containerd roots, the CNI bridge and its pod
subnet, the image build: every module under those folders is one unit, run one after another on one
worker. Workers run the long units first (real node, then e2e, then integration, then unit) so the short
ones fill the end.

Without xdist (`pytest` alone, `-n 0`) nothing here changes the order.
"""

from __future__ import annotations

import pytest

REAL_NODE_FOLDERS = ("e2e/containerd/", "tests/integration/realnode/", "tests/image/")
RUN_ORDER = ("e2e/", "tests/integration/", "tests/unit/")


def unit_of_work(nodeid: str) -> str:
    """The scope a test is scheduled with: its module, or the shared real-node unit."""
    if nodeid.startswith(REAL_NODE_FOLDERS):
        return "real-node"
    return nodeid.split("::", 1)[0]


def run_rank(nodeid: str) -> int:
    if nodeid.startswith(REAL_NODE_FOLDERS):
        return 0
    for rank, folder in enumerate(RUN_ORDER, start=1):
        if nodeid.startswith(folder):
            return rank
    return len(RUN_ORDER) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: long units first. Stable, so every worker sends the same order, and the
    scheduler (`--no-loadscope-reorder`) keeps it."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: run_rank(item.nodeid))


try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pytest-xdist is a test dependency; without it there is nothing to schedule
    LoadFileScheduling = None


class XdistScheduling:
    """The scheduler hook, registered only when xdist is loaded: pluggy refuses an unknown hook, so a
    module-level hook would break `pytest -p no:xdist`."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
        if config.getvalue("dist") == "loadfile":
            return _module_scheduling()(config, log)
        return None


def _module_scheduling() -> type:
    class ModuleScheduling(LoadFileScheduling):
        """`--dist loadfile` with the real-node folders as one unit."""

        def _split_scope(self, nodeid: str) -> str:
            return unit_of_work(nodeid)

    return ModuleScheduling


def pytest_configure(config: pytest.Config) -> None:
    if LoadFileScheduling is not None and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistScheduling(), "kruise-xdist-scheduling")
