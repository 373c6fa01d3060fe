"""Root fixtures shared by every test package.

`emulator` (function-scoped): an in-process kube-apiserver emulator
(`kruise.sandbox.apiserver.ApiServer`) serving HTTPS on a free 127.0.0.1 port with a throwaway
CA. It runs on its own event loop in a background thread, so it works from sync and async tests
and fixtures alike (also via `request.getfixturevalue("emulator")` inside an async fixture) and
keeps serving while the code under test blocks. It yields an `Emulator` handle:

- `.server` — the `ApiServer`; fault hooks are safe to call from the test's thread:
  `compact_watch_history()` (every resume from an older resourceVersion gets 410 Gone),
  `drop_watches()` (closes every open watch), `fail_next(n, status)` (next n API requests fail
  with 429/500 as real Status bodies);
- `.url` — e.g. `https://127.0.0.1:41234`;
- `.kubeconfig` — a kubeconfig file in the test's tmp_path (bearer token,
  certificate-authority-data), usable by kubernetes-asyncio, kruise.kube and real kubectl.

Namespaces default, kube-system, kube-public and kube-node-lease exist from the start.

`cache_guard` (autouse): every projecting informer cache in a test is guarded (`KRUISE_CACHE_GUARD=1`,
kruise.kube.projection): a controller or handler that reads a pod field its process's projection
drops raises there, and the test fails here even if the reader swallowed the exception. Set
`KRUISE_CACHE_GUARD=record` to instead collect every path read (kruise.kube.projection.READS).

Hypothesis runs with `deadline=None`: its default 200 ms per example is a wall-clock assertion, and
on a loaded 2-core CI machine it failed property tests whose logic was right.

`plain_tracebacks` (autouse): tests never call `configure_logging`, and structlog's defaults render a
logged exception with rich and every frame's locals — seconds per "Reconciler error", during which
the test's event loop (controllers, informers, the simulator) stands still.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from kruise.kube import projection
from kruise.kube.logging import use_plain_tracebacks
from kruise.sandbox.apiserver import ApiServer
from kruise.sandbox.apiserver.threaded import serve_in_thread


@dataclass
class Emulator:
    server: ApiServer
    url: str
    kubeconfig: Path


os.environ.setdefault(projection.GUARD_ENV, "1")
settings.register_profile("kruise", deadline=None)
settings.load_profile("kruise")


@pytest.fixture(autouse=True)
def cache_guard() -> Iterator[None]:
    projection.VIOLATIONS.clear()
    yield
    dropped = sorted(set(projection.VIOLATIONS))
    projection.VIOLATIONS.clear()
    assert not dropped, (
        f"read fields their cache's projection drops (declare them in */cachefields.py): {dropped}"
    )


@pytest.fixture(autouse=True)
def plain_tracebacks() -> None:
    use_plain_tracebacks()


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with serve_in_thread(crd_establish_delay=0.01) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        yield Emulator(server, server.url, kubeconfig)


_MARK_BY_DIRECTORY = {"unit": "unit", "integration": "integration"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers follow the directory a test lives in, so `-m "not e2e"` means unit + integration and
    `-m unit` means tests/unit, with no marker to forget in a new file."""
    root = Path(__file__).resolve().parent.parent
    for item in items:
        parts = Path(str(item.fspath)).resolve().relative_to(root).parts
        if parts[0] == "e2e":
            item.add_marker(pytest.mark.e2e)
        elif parts[0] == "tests" and len(parts) > 1 and parts[1] in _MARK_BY_DIRECTORY:
            item.add_marker(getattr(pytest.mark, _MARK_BY_DIRECTORY[parts[1]]))
