import io
import json
import logging

import httpx
import pytest
import structlog

from kruise.kube.logging import configure_logging, parse_level, use_plain_tracebacks, with_key
from kruise.kube.serving import ProbeServer


async def test_probe_server_metrics_and_checks():
    server = ProbeServer(port=0)
    ready = {"informers": False}
    server.add_readyz_check("informers", lambda: ready["informers"])

    async def webhook_ok():
        return True

    server.add_healthz_check("webhook", webhook_ok)
    port = await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            r = await http.get("/healthz")
            assert (r.status_code, r.text) == (200, "ok")
            r = await http.get("/readyz")
            assert r.status_code == 500
            assert r.text == "[+]ping ok\n[-]informers failed: reason withheld\nreadyz check failed\n"
            ready["informers"] = True
            r = await http.get("/readyz?verbose")
            assert (
                r.status_code == 200
                and "[+]informers ok" in r.text
                and r.text.endswith("readyz check passed\n")
            )
            assert (await http.get("/readyz/informers")).status_code == 200
            assert (await http.get("/readyz/nope")).status_code == 404
            r = await http.get("/metrics")
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
            assert "# TYPE python_info gauge" in r.text or "process_" in r.text or "workqueue" in r.text
    finally:
        await server.stop()


def test_check_names_validated():
    server = ProbeServer()
    server.add_readyz_check("a", lambda: True)
    with pytest.raises(ValueError, match="already added"):
        server.add_readyz_check("a", lambda: True)
    with pytest.raises(ValueError, match="no '/'"):
        server.add_healthz_check("a/b", lambda: True)


@pytest.fixture(autouse=True)
def restore_logging():
    """configure_logging reconfigures the root logger; give the rest of the suite its own back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def test_json_logging_carries_key():
    out = io.StringIO()
    configure_logging("debug", "json", out)
    try:
        with_key(structlog.get_logger("t"), "ns/web", controller="cloneset").info("Reconciling")
        line = json.loads(out.getvalue().strip().splitlines()[-1])
        assert line["key"] == "ns/web" and line["controller"] == "cloneset" and line["level"] == "info"
        assert line["event"] == "Reconciling" and line["timestamp"].endswith("Z")
    finally:
        structlog.reset_defaults()


def test_level_filtering_and_bad_values():
    out = io.StringIO()
    configure_logging("warning", "console", out)
    try:
        structlog.get_logger().info("hidden")
        structlog.get_logger().warning("shown")
        assert "hidden" not in out.getvalue() and "shown" in out.getvalue()
    finally:
        structlog.reset_defaults()
    with pytest.raises(ValueError, match='log-level: Unsupported value: "loud"'):
        parse_level("loud")
    with pytest.raises(ValueError, match="log-format"):
        configure_logging("info", "xml", io.StringIO())  # type: ignore[arg-type]


def _fail_with_big_locals() -> None:
    rows = [{"name": f"pod-{i}", "secret-marker": "local-value-" * 4} for i in range(2000)]
    raise RuntimeError(f"conflict after {len(rows)} rows")


def _logged_exception(logger) -> str:
    try:
        _fail_with_big_locals()
    except RuntimeError as exc:
        logger.error("Reconciler error", error=str(exc), exc_info=exc)
    raise AssertionError("unreachable")


@pytest.mark.parametrize("setup", ["configure_logging", "structlog defaults"])
def test_console_tracebacks_are_plain(setup, capsys):
    """A logged exception renders as a plain traceback without frame locals: rich's locals
    rendering took seconds on the event loop and froze every controller (flaky integration tests)."""
    out = io.StringIO()
    if setup == "configure_logging":
        configure_logging("info", "console", out)
    else:
        structlog.reset_defaults()
        use_plain_tracebacks()
        structlog.configure(logger_factory=structlog.PrintLoggerFactory(out))
    try:
        with pytest.raises(AssertionError, match="unreachable"):
            _logged_exception(structlog.get_logger("t"))
    finally:
        structlog.reset_defaults()
    text = out.getvalue()
    assert "Reconciler error" in text
    assert "Traceback (most recent call last):" in text
    assert "RuntimeError: conflict after 2000 rows" in text
    assert "local-value-" not in text and "│" not in text  # no locals, no rich panel
