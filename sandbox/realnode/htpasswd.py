"""The htpasswd file docker-registry's basic auth reads: ``user:bcrypt-hash`` lines.

The distribution registry accepts only bcrypt hashes there, so the file is written with the PyPI
``bcrypt`` package (a test/sandbox dependency of kruise-py) instead of Apache's ``htpasswd`` tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from kruise.sandbox.realnode.prereqs import PrerequisitesMissing

_USER = re.compile(r"^[A-Za-z0-9._-]+$")


def _bcrypt():  # type: ignore[no-untyped-def]
    try:
        import bcrypt
    except ImportError as exc:
        raise PrerequisitesMissing(
            "bcrypt: the private registry's htpasswd needs the Python package; install with: "
            "pip install 'kruise-py[test]' (or pip install bcrypt)"
        ) from exc
    return bcrypt


def entry(user: str, password: str, *, rounds: int = 10) -> str:
    """One htpasswd line; the user must not contain ':' (the field separator) or whitespace."""
    if not _USER.match(user):
        raise ValueError(f"htpasswd user: must match {_USER.pattern}, got {user!r}")
    if not password:
        raise ValueError("htpasswd password: must not be empty")
    bcrypt = _bcrypt()
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=rounds)).decode()
    return f"{user}:{hashed}"


def verify(line: str, user: str, password: str) -> bool:
    """Whether ``line`` grants ``user`` with ``password`` (what the registry will decide)."""
    name, _, hashed = line.strip().partition(":")
    return name == user and _bcrypt().checkpw(password.encode(), hashed.encode())


def write(path: Path, users: Mapping[str, str]) -> None:
    """Write the file for ``{user: password}``, readable by its owner only."""
    if not users:
        raise ValueError("htpasswd users: at least one user is needed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(entry(u, p) + "\n" for u, p in sorted(users.items())))
    path.chmod(0o600)
