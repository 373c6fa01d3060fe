"""Real-node tests keep containerd's sockets below their node directories, and containerd refuses a unix
socket path longer than 104 bytes (`containerd.sock.ttrpc`). A test's own `tmp_path` is named after the test
(up to 30 characters) and, on a pytest-xdist worker (`make test`), sits one `popen-gwN/` deeper — two bytes
too many for `test_pod_with_busybox_and_nginx_on_a_real_containerd`. So `tmp_path` here is a short numbered
directory of the session's base temp, still one per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("n", numbered=True)
