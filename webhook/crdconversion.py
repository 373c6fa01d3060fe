"""Point every Kruise CRD that declares Webhook conversion at this process, with the current CA.

The CRDs ship with `conversion.strategy: Webhook` and a clientConfig naming kruise-webhook-service
`/convert` but no caBundle (the CA is generated at runtime), so the apiserver cannot call `/convert`
until the webhook writes the bundle in. As upstream's crd.Ensure does, each sync rewrites
`spec.conversion.webhook` of every such CRD whose kind kruise serves (found in the registry) when
its clientConfig differs from the desired one: the same Service (or `--webhook-url` base) the
admission configurations use, path `/convert`, and conversionReviewVersions [v1, v1beta1]. CRDs of
other groups and CRDs with conversion None are never touched.

Only a differing clientConfig (its caBundle or its target) is written, as upstream compares only
that, and the comparison fills in the Service port the apiserver defaults (443): kube-apiserver ends
every watch on a CRD whose object changes, so a needless write at each webhook start makes every
informer of that kind relist.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from kruise.api.objects import section
from kruise.api.registry import by_kind
from kruise.kube.client import Client
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import CRDS
from kruise.webhook.certs import ExternalCertsError
from kruise.webhook.configurations import ClientTarget
from kruise.webhook.paths import CONVERT

REVIEW_VERSIONS = ["v1", "v1beta1"]
MAX_ATTEMPTS = 5


def is_kruise_webhook_converted(crd: dict[str, Any]) -> bool:
    """A CRD of a registered Kruise kind whose conversion strategy is Webhook."""
    spec = crd.get("spec") or {}
    if not spec.get("versions") or section(spec, "conversion").get("strategy") != "Webhook":
        return False
    try:
        by_kind(spec.get("group", ""), section(spec, "names").get("kind", ""))
    except KeyError:
        return False
    return True


def desired_webhook(target: ClientTarget, ca_bundle: bytes) -> dict[str, Any]:
    return {
        "clientConfig": target.client_config(CONVERT, ca_bundle),
        "conversionReviewVersions": REVIEW_VERSIONS,
    }


def _normalized(config: dict[str, Any]) -> dict[str, Any]:
    """A clientConfig as the apiserver stores it (service.port defaulted), for comparison."""
    service = config.get("service")
    if isinstance(service, dict) and service.get("port") is None:
        return {**config, "service": {**service, "port": 443}}
    return config


def up_to_date(crd: dict[str, Any], webhook: dict[str, Any]) -> bool:
    """The CRD already calls the desired clientConfig (conversionReviewVersions are left as found)."""
    current = (crd["spec"]["conversion"].get("webhook") or {}).get("clientConfig") or {}
    return _normalized(current) == _normalized(webhook["clientConfig"])


def with_conversion_webhook(crd: dict[str, Any], webhook: dict[str, Any]) -> dict[str, Any]:
    """A copy of `crd` whose conversion webhook is `webhook` (other CRD fields untouched)."""
    out = orjson.loads(orjson.dumps(crd))
    out["spec"]["conversion"]["webhook"] = webhook
    return out


@dataclass(frozen=True)
class ConversionPatcher:
    client: Client
    target: ClientTarget
    redefined: Callable[[dict[str, Any]], None] | None = None
    """Told each CRD it wrote, right after the write: the apiserver ends that resource's watches (a new
    definition), so the process re-lists its caches of it before answering from them again."""

    async def ensure(self, ca_bundle: bytes) -> list[str]:
        """Bring every Kruise CRD with Webhook conversion up to date; returns the names written."""
        webhook = desired_webhook(self.target, ca_bundle)
        listing = await self.client.list(CRDS)
        written = []
        for crd in listing.get("items") or []:
            if is_kruise_webhook_converted(crd) and await self._ensure_one(crd, webhook):
                written.append(crd["metadata"]["name"])
        return written

    async def check(self, ca_bundle: bytes) -> None:
        """EnableExternalCerts: write nothing; every Kruise webhook-converted CRD must trust ``ca_bundle``."""
        expected = base64.b64encode(ca_bundle).decode()
        listing = await self.client.list(CRDS)
        for crd in listing.get("items") or []:
            if not is_kruise_webhook_converted(crd):
                continue
            name = crd["metadata"]["name"]
            config = section(crd["spec"]["conversion"], "webhook").get("clientConfig")
            if not config:
                raise ExternalCertsError(
                    f"bad conversion configuration of CRD {name}: "
                    "spec.conversion.webhook.clientConfig is not set"
                )
            if config.get("caBundle") != expected:
                raise ExternalCertsError(f"caBundle of CRD {name} does not match the external caBundle")

    async def _ensure_one(self, crd: dict[str, Any], webhook: dict[str, Any]) -> bool:
        name = crd["metadata"]["name"]
        for _ in range(MAX_ATTEMPTS):
            if up_to_date(crd, webhook):
                return False
            try:
                await self.client.update(CRDS, with_conversion_webhook(crd, webhook))
                if self.redefined is not None:
                    self.redefined(crd)
                return True
            except Conflict:
                try:
                    crd = await self.client.get(CRDS, name)
                except NotFound:
                    return False
                if not is_kruise_webhook_converted(crd):
                    return False
        raise RuntimeError(f"could not settle customresourcedefinitions/{name} after {MAX_ATTEMPTS} attempts")
