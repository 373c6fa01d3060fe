"""The CloneSet CRD's conversion webhook, for tests that go through kruise-webhook's real /convert.

A conversion can only go through once kruise-webhook has written its CA into the CRD's
`spec.conversion.webhook.clientConfig.caBundle`; the tests wait for that by watching the CRD.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from kruise.kube.client import Client
from kruise.kube.resources import CRDS, SECRETS

CLONESET_CRD = "clonesets.apps.kruise.io"

BETA_CLONESET = """
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: beta, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: beta}}
  template:
    metadata: {labels: {app: beta}}
    spec: {containers: [{name: main, image: nginx:alpine}]}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: InPlaceIfPossible}}
"""
"""A v1beta1 CloneSet `beta` for `kubectl apply`: it reaches storage only through /convert."""


async def kruise_ca_bundle(client: Client) -> str:
    """kruise-webhook's CA (from its certs Secret), base64-encoded as a `caBundle` holds it."""
    secret = await client.get(SECRETS, "kruise-webhook-certs", "kruise-system")
    return base64.b64encode(base64.b64decode(secret["data"]["ca-cert.pem"])).decode()


async def until_conversion_ca(
    client: Client, expected: str | None = None, timeout: float = 15
) -> dict[str, Any]:
    """Watch the CloneSet CRD until its conversion webhook's caBundle is `expected` (by default
    kruise-webhook's current CA) and return the CRD as it then stood."""
    if expected is None:
        expected = await kruise_ca_bundle(client)
    async with asyncio.timeout(timeout):
        async for event in client.watch(CRDS, field_selector=f"metadata.name={CLONESET_CRD}"):
            webhook = event.object["spec"]["conversion"].get("webhook") or {}
            if (webhook.get("clientConfig") or {}).get("caBundle") == expected:
                return event.object
    raise AssertionError(f"the watch on CRD {CLONESET_CRD} ended before its caBundle was kruise-webhook's CA")
