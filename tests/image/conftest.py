"""The two root file system builds every image test shares (one session, one download cache).

Both builds use the cache `make image` uses (build/image/cache: .debs and wheels), so only the first
build of a fresh checkout downloads; the trees themselves are built from scratch each time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docker"))

EPOCH = 1_700_000_000  # any fixed value: the two builds must agree on it, not on the clock


@pytest.fixture(scope="session")
def epoch() -> int:
    return EPOCH


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path, str]:
    import rootfs

    cache = ROOT / "build/image/cache"
    first = tmp_path_factory.mktemp("first") / "rootfs"
    second = tmp_path_factory.mktemp("second") / "rootfs"
    digest1 = rootfs.build(first, cache, EPOCH)
    digest2 = rootfs.build(second, cache, EPOCH)
    return first, digest1, second, digest2


@pytest.fixture(scope="session")
def tree(builds: tuple[Path, str, Path, str]) -> Path:
    return builds[0]
