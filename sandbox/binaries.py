"""Command-line tools the sandbox and the CLI run as subprocesses (kubectl, helm).

`make install` puts pinned copies next to the venv's Python, so a checkout uses those before any other
copy on PATH: the versions the tests were written against, whatever else the machine has.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def find_binary(name: str) -> str:
    """The `name` installed next to this Python (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name}: not found next to the Python interpreter nor on PATH")
    return found
