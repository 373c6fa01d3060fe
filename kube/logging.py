"""structlog setup for every kruise process: JSON in production, key=value on a terminal.

Every log line of a reconcile should carry the object key; `with_key` binds it once.

Logging runs synchronously on the caller's event loop, so rendering must stay cheap: structlog's
default console exception formatter (rich, printing every frame's locals) spends seconds on one
reconcile's traceback, and meanwhile every controller, watch and lease renewal of the process
stands still. Console output therefore prints plain tracebacks (`console_renderer`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal, TextIO

import structlog

Format = Literal["auto", "json", "console"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def parse_level(level: str | int) -> int:
    if isinstance(level, int):
        return level
    try:
        return _LEVELS[level.lower()]
    except KeyError:
        raise ValueError(
            f'log-level: Unsupported value: "{level}": supported values: "debug", "info", "warning", "error"'
        ) from None


def configure_logging(level: str | int = "info", fmt: Format = "auto", stream: TextIO | None = None) -> None:
    """Configure structlog (and route stdlib logging through the same level).

    `auto` picks console output on a TTY and JSON otherwise, so a pod's logs are machine-readable
    while a developer's terminal stays readable.
    """
    stream = stream or sys.stderr
    numeric = parse_level(level)
    if fmt not in ("auto", "json", "console"):
        raise ValueError(f'log-format: Unsupported value: "{fmt}": supported values: "json", "console"')
    use_json = fmt == "json" or (fmt == "auto" and not stream.isatty())
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if use_json:
        processors += [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        processors.append(console_renderer(colors=stream.isatty()))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(
        level=numeric, stream=stream, format="%(levelname)s %(name)s: %(message)s", force=True
    )


def console_renderer(colors: bool) -> structlog.dev.ConsoleRenderer:
    """key=value lines whose exceptions are plain Python tracebacks (no locals; see the module doc)."""
    return structlog.dev.ConsoleRenderer(colors=colors, exception_formatter=structlog.dev.plain_traceback)


def use_plain_tracebacks() -> None:
    """Keep structlog's current processors but render exceptions as `console_renderer` does.

    For a process that never calls `configure_logging` (a test session): structlog's defaults
    would otherwise render every logged exception with rich and its locals.
    """
    processors = [
        console_renderer(colors=False) if isinstance(p, structlog.dev.ConsoleRenderer) else p
        for p in structlog.get_config()["processors"]
    ]
    structlog.configure(processors=processors)


def with_key(logger: Any, key: str, **extra: Any) -> Any:
    """A logger whose every line names the object being reconciled (`key=namespace/name`)."""
    return logger.bind(key=key, **extra)


def warn_gates_without_effect(logger: Any, gates: Any) -> None:
    """One warning per feature gate the operator set that kruise-py accepts but does not act on
    (`FeatureGates.without_effect`): upstream's values keep working, and nobody believes a switch
    changed something it did not."""
    values = gates.as_dict()
    for name in gates.without_effect():
        logger.warning(
            "feature gate is accepted but has no effect in kruise-py yet", gate=name, value=values[name]
        )
