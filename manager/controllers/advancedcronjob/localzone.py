"""The manager process's local time zone, found the way Go's runtime finds `time.Local`.

Upstream evaluates a schedule without `TZ=`/`spec.timeZone` in the process's local zone and writes
the scheduled-at annotation in it, so the zone must be a real IANA zone (with its daylight-saving
rules), not the fixed offset `datetime.now().astimezone()` would give.
"""

from __future__ import annotations

import os
import zoneinfo
from collections.abc import Mapping
from datetime import UTC, tzinfo
from pathlib import Path

LOCALTIME = Path("/etc/localtime")


def process_zone(env: Mapping[str, str] | None = None, localtime: Path = LOCALTIME) -> tzinfo:
    """Go's rule: `TZ` unset → /etc/localtime; `TZ=""` or `TZ=UTC` → UTC; `TZ=name` (a leading ':' is
    dropped; an absolute path is a zone file) → that zone; anything that does not load → UTC."""
    env = os.environ if env is None else env
    name = env.get("TZ")
    if name is None:
        return _from_file(localtime)
    name = name.removeprefix(":")
    if name in ("", "UTC"):
        return UTC
    if name.startswith("/"):
        return _from_file(Path(name))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


def _from_file(path: Path) -> tzinfo:
    try:
        with path.open("rb") as handle:
            return zoneinfo.ZoneInfo.from_file(handle, key=_zone_key(path))
    except (OSError, ValueError):
        return UTC


def _zone_key(path: Path) -> str | None:
    """The IANA name behind a /etc/localtime symlink (…/zoneinfo/Europe/Berlin), for readable logs."""
    try:
        target = str(path.resolve())
    except OSError:
        return None
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else None
