"""PodUnavailableBudget check before each CloneSet pod update (gate PodUnavailableBudgetUpdateGate).

Upstream's CloneSet asks the pod's PUB for an UPDATE slot before it touches a pod; a refusal skips
the pod for now and retries a second later, so a rollout never takes more pods down than the budget
allows even when kruise-webhook is not consulted (in-place updates are the controller's own writes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import structlog

from kruise.api.keys import PUB_OPERATION_UPDATE
from kruise.api.objects import meta_of
from kruise.control.pub import budget
from kruise.kube.client import Client
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.kube.retry import Backoff, optimistic_update

log = structlog.get_logger("kruise.manager.cloneset")

REFUSED_RETRY_SECONDS = 1.0
CONFLICT_BACKOFF = Backoff(steps=4, duration=0.5, factor=1.0, jitter=0.0)
"""As kruise-webhook: four optimistic writes of the PUB status, half a second apart."""


class PubGate:
    def __init__(
        self,
        client: Client,
        pubs: SharedInformer,
        wall: Callable[[], datetime],
        *,
        vertical_scaling: bool = False,
    ) -> None:
        """`vertical_scaling`: the InPlaceWorkloadVerticalScaling gate (a pod mid-resize takes no slot)."""
        self.client = client
        self.pubs = pubs
        self.wall = wall
        self.vertical_scaling = vertical_scaling

    async def allows(self, pod: Mapping[str, Any]) -> bool:
        name = budget.related_pub(pod)
        namespace = meta_of(pod).get("namespace", "")
        pub = self.pubs.get(f"{namespace}/{name}") if name else None
        if pub is None or not budget.needs_check(
            pub, pod, PUB_OPERATION_UPDATE, vertical_scaling=self.vertical_scaling
        ):
            return True
        try:
            now, pod_name = self.wall(), pod["metadata"]["name"]
            await optimistic_update(
                pub,
                lambda current: budget.reserved(current, pod_name, PUB_OPERATION_UPDATE, now),
                read=lambda: self.client.get(PODUNAVAILABLEBUDGETS, name, namespace),
                write=lambda updated: self.client.update_status(PODUNAVAILABLEBUDGETS, updated),
                backoff=CONFLICT_BACKOFF,
            )
        except NotFound:
            return True
        except (budget.Refused, Conflict) as exc:
            log.info(
                "pod update held back by its PodUnavailableBudget",
                pod=pod["metadata"]["name"],
                reason=str(exc),
            )
            return False
        return True
