"""Hold the leader's controllers until kruise-webhook can answer admission calls.

Upstream's manager serves the webhook itself and starts its controllers only after that server is
ready, so its first writes never meet a webhook that is not there yet. kruise-py runs the webhook as
its own Deployment; the equivalent gate is "the webhook Service has a ready endpoint" (the apiserver
reaches the webhook only through those). Without it, right after install every write the leader
makes fails with `no endpoints available for service ...` until the webhook pods turn Ready.
"""

from __future__ import annotations

from typing import Any

import structlog

from kruise.api.objects import section
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.errors import ApiError
from kruise.kube.resources import ENDPOINT_SLICES

log = structlog.get_logger("kruise.manager")

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
RETRY_INTERVAL = 2.0  # upstream's WaitReady polls every 2 s
QUIET_FOR = 5.0  # and only starts complaining after 5 s


def ready_endpoint_count(slices: list[dict[str, Any]]) -> int:
    """Endpoints the apiserver would route to: `conditions.ready` unset counts as ready (API rule)."""
    count = 0
    for endpoint_slice in slices:
        for endpoint in endpoint_slice.get("endpoints") or []:
            if section(endpoint, "conditions").get("ready") is not False and endpoint.get("addresses"):
                count += 1
    return count


async def wait_for_webhook(
    client: Client,
    namespace: str,
    service: str,
    *,
    interval: float = RETRY_INTERVAL,
    quiet_for: float = QUIET_FOR,
    clock: Clock | None = None,
) -> int:
    """Return the ready endpoint count once it is above zero; log one line per retry, no traceback."""
    clock = clock or RealClock()
    started = clock.now()
    log.info("wait webhook ready", service=service, namespace=namespace)
    while True:
        try:
            listing = await client.list(
                ENDPOINT_SLICES, namespace, label_selector=f"{SERVICE_NAME_LABEL}={service}"
            )
            ready = ready_endpoint_count(listing.get("items") or [])
            reason = f'no ready endpoints for service "{service}"'
        except ApiError as exc:
            ready, reason = 0, str(exc)
        if ready:
            log.info(
                "webhook ready", service=service, endpoints=ready, waited=round(clock.now() - started, 1)
            )
            return ready
        waited = clock.now() - started
        if waited >= quiet_for:
            log.warning("webhook not ready yet, controllers wait", reason=reason, waited=round(waited, 1))
        await clock.sleep(interval)
