"""Kinds whose admission refuses every CREATE and UPDATE while a feature gate they need is off.

Upstream answers 403 "feature-gate X is not enabled" from the kind's validating webhook rather than
not serving it, so a user learns why the object is refused instead of seeing it sit unreconciled.
"""

from __future__ import annotations

from kruise.api import features
from kruise.api.features import FeatureGates
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, deny

# Kinds whose validating webhook refuses everything while a gate is off (upstream: 403
# "feature-gate X is not enabled"), checked in this order.
KIND_GATES: dict[str, tuple[str, ...]] = {
    "ImagePullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "ImageListPullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "NodeImage": (features.KRUISE_DAEMON,),
    "PodProbeMarker": (features.POD_PROBE_MARKER_GATE, features.KRUISE_DAEMON),
    "ResourceDistribution": (features.RESOURCE_DISTRIBUTION_GATE,),
    "WorkloadSpread": (features.WORKLOAD_SPREAD,),
}


def gated(handler: Handler, gates: FeatureGates, names: tuple[str, ...]) -> Handler:
    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation in ("CREATE", "UPDATE"):
            for name in names:
                if not gates.enabled(name):
                    return deny(403, f"feature-gate {name} is not enabled")
        return await handler(req)

    return handle
