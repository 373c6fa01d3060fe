"""The loop that keeps certificate, cert files, live TLS context and webhook configurations in step.

Level-triggered like upstream's webhook controller: any change to the Secret or either configuration
(e.g. `helm upgrade` resetting caBundle) wakes it, and a periodic resync catches expiry thresholds.
With a ConversionPatcher it also keeps the caBundle of every Kruise CRD's conversion webhook
current, and a change to such a CRD (e.g. `kubectl apply` of crds/ dropping the bundle) wakes it too.

With `external` (gate EnableExternalCerts) someone else owns the certificate and the CA injection, as
upstream: the Secret is only read (a change to it still hot-reloads the serving certificate), and the
configurations and CRDs are only checked to trust its `ca.crt` — a sync fails, and is retried, until they do.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from kruise.api.objects import meta_of
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CRDS, SECRETS
from kruise.webhook import certs
from kruise.webhook.certsecret import (
    MUTATING,
    SECRET_NAME,
    VALIDATING,
    ConfigurationPatcher,
    ensure_secret,
    read_external_secret,
)
from kruise.webhook.configurations import MUTATING_NAME, VALIDATING_NAME
from kruise.webhook.crdconversion import ConversionPatcher, is_kruise_webhook_converted

log = structlog.get_logger("kruise.webhook.certs")

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
CA_FILE = "ca-cert.pem"


def write_files(cert_dir: Path, bundle: certs.CertBundle) -> None:
    """Atomic per file (write + rename), so a reload never reads half a PEM."""
    cert_dir.mkdir(parents=True, exist_ok=True)
    for name, data in ((KEY_FILE, bundle.key), (CERT_FILE, bundle.cert), (CA_FILE, bundle.ca_cert)):
        tmp = cert_dir / f".{name}.tmp"
        tmp.write_bytes(data)
        os.chmod(tmp, 0o600)
        tmp.replace(cert_dir / name)


class CertController:
    def __init__(
        self,
        client: Client,
        namespace: str,
        dns_name: str,
        cert_dir: Path,
        patcher: ConfigurationPatcher,
        *,
        secret_name: str = SECRET_NAME,
        renew_before: datetime.timedelta = certs.DEFAULT_RENEW_BEFORE,
        resync_seconds: float = 60.0,
        on_rotate: Callable[[certs.CertBundle], None] | None = None,
        now: Callable[[], datetime.datetime] | None = None,
        conversion: ConversionPatcher | None = None,
        external: bool = False,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.dns_name = dns_name
        self.cert_dir = cert_dir
        self.patcher = patcher
        self.secret_name = secret_name
        self.renew_before = renew_before
        self.resync_seconds = resync_seconds
        self.on_rotate = on_rotate
        self.now = now
        self.conversion = conversion
        self.external = external
        self.bundle: certs.CertBundle | None = None
        self.syncs = 0
        self._wake = asyncio.Event()
        self.informers = [
            SharedInformer(client, SECRETS, namespace),
            SharedInformer(client, MUTATING),
            SharedInformer(client, VALIDATING),
        ]
        watched = {self.secret_name, MUTATING_NAME, VALIDATING_NAME}

        def poke(*objs: Any) -> None:
            if any(isinstance(o, dict) and meta_of(o).get("name") in watched for o in objs):
                self._wake.set()

        for informer in self.informers:
            informer.add_event_handler(on_add=poke, on_update=poke, on_delete=poke)
        self.crds: SharedInformer | None = None
        """The CRD cache (with `conversion`): other parts of the process may listen to it too."""
        if conversion is not None:
            crds = self.crds = SharedInformer(client, CRDS)

            def poke_crd(*objs: Any) -> None:
                if any(isinstance(o, dict) and is_kruise_webhook_converted(o) for o in objs):
                    self._wake.set()

            crds.add_event_handler(on_add=poke_crd, on_update=poke_crd)
            self.informers.append(crds)

    @property
    def cert_file(self) -> Path:
        return self.cert_dir / CERT_FILE

    @property
    def key_file(self) -> Path:
        return self.cert_dir / KEY_FILE

    async def _bundle(self) -> certs.CertBundle:
        if self.external:
            return await read_external_secret(self.client, self.namespace, self.secret_name)
        return await ensure_secret(
            self.client, self.namespace, self.dns_name, secret_name=self.secret_name,
            renew_before=self.renew_before, now=self.now,
        )  # fmt: skip

    async def sync_once(self) -> None:
        bundle = await self._bundle()
        if bundle != self.bundle:
            write_files(self.cert_dir, bundle)
            rotated = self.bundle is not None
            self.bundle = bundle
            if rotated and self.on_rotate is not None:
                self.on_rotate(bundle)
            log.info("serving certificate loaded", dns_name=self.dns_name, rotated=rotated)
        if self.external:
            await self.patcher.check(bundle.ca_cert)
            if self.conversion is not None:
                await self.conversion.check(bundle.ca_cert)
            self.syncs += 1
            return
        written = await self.patcher.ensure(bundle.ca_cert)
        if written:
            log.info("patched webhook configurations", names=written)
        if self.conversion is not None:
            crds = await self.conversion.ensure(bundle.ca_cert)
            if crds:
                log.info("patched CRD conversion webhooks", names=crds)
        self.syncs += 1

    async def initialize(self, timeout: float) -> None:
        """First sync with retries, bounded (upstream: --webhook-initialize-timeout, then exit)."""
        async with asyncio.timeout(timeout):
            delay = 0.2
            while True:
                try:
                    await self.sync_once()
                    return
                except Exception as exc:
                    log.warning("webhook certificate init failed, retrying", error=str(exc))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)

    async def run(self) -> None:
        for informer in self.informers:
            informer.start()
        wait = self.resync_seconds
        failures = 0
        try:
            while True:
                # asyncio.timeout, not wait_for: on 3.11 wait_for swallows a cancel that lands just as the
                # event fires, and stop() would then wait on this loop forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
                self._wake.clear()
                try:
                    await self.sync_once()
                    failures, wait = 0, self.resync_seconds
                except Exception as exc:  # retry sooner than a full resync, doubling each time
                    failures += 1
                    wait = min(0.2 * 2**failures, self.resync_seconds)
                    log.warning("webhook certificate sync failed", error=str(exc), retry_in=wait)
        finally:
            for informer in self.informers:
                await informer.stop()
