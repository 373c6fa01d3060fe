"""Keeping the serving certificate in the Secret and the CA bundle in the webhook configurations.

Every replica runs this. The first to find the Secret missing creates it; the others lose the
create race (AlreadyExists) or the update race (Conflict) and adopt the winner's bundle, so all
replicas serve certificates from one CA — the one in the configurations' caBundle.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
import structlog

from kruise.api.apisets import DEFAULT_API_SET
from kruise.api.objects import section
from kruise.kube.client import Client
from kruise.kube.errors import AlreadyExists, Conflict, NotFound
from kruise.kube.resources import SECRETS, ResourceRef
from kruise.webhook import certs
from kruise.webhook.configurations import (
    MUTATING_NAME,
    VALIDATING_NAME,
    ClientTarget,
    mutating_configuration,
    validating_configuration,
)

log = structlog.get_logger("kruise.webhook.certs")

SECRET_NAME = "kruise-webhook-certs"
TEMPLATE_ANNOTATION = "template"  # upstream keeps the chart's original `webhooks` here
MUTATING = ResourceRef(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    False,
    "MutatingWebhookConfiguration",
)
VALIDATING = ResourceRef(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    False,
    "ValidatingWebhookConfiguration",
)
MAX_ATTEMPTS = 10


def _decode(data: dict[str, str] | None) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, value in (data or {}).items():
        try:
            out[key] = base64.b64decode(value)
        except ValueError:
            continue
    return out


def _encode(data: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode() for k, v in data.items()}


async def ensure_secret(
    client: Client, namespace: str, dns_name: str, *, secret_name: str = SECRET_NAME,
    renew_before: datetime.timedelta = certs.DEFAULT_RENEW_BEFORE,
    now: Callable[[], datetime.datetime] | None = None,
) -> certs.CertBundle:  # fmt: skip
    """The bundle to serve: the Secret's if still good, else a new one this call managed to store."""
    clock = now or (lambda: datetime.datetime.now(datetime.UTC))
    for _ in range(MAX_ATTEMPTS):
        try:
            secret = await client.get(SECRETS, secret_name, namespace)
        except NotFound:
            bundle = certs.generate_bundle(dns_name, clock())
            body = {
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": secret_name, "namespace": namespace},
                "data": _encode(bundle.secret_data()),
            }  # fmt: skip
            try:
                await client.create(SECRETS, body, namespace)
            except AlreadyExists:
                continue  # another replica won the race: read and use theirs
            log.info("created webhook certificate secret", secret=secret_name, namespace=namespace)
            return bundle
        current = certs.CertBundle.from_secret_data(_decode(secret.get("data")))
        replacement = certs.renew(current, dns_name, renew_before, clock())
        if replacement is None:
            assert current is not None
            return current
        secret = dict(secret)
        secret["data"] = {**section(secret, "data"), **_encode(replacement.secret_data())}
        try:
            await client.update(SECRETS, secret)
        except Conflict:
            continue  # someone renewed concurrently; adopt theirs if good
        reasons = certs.problems(current, dns_name, renew_before, clock()) if current else ["missing keys"]
        log.info("renewed webhook certificate", secret=secret_name, reasons=reasons)
        return replacement
    raise RuntimeError(f"could not settle Secret {namespace}/{secret_name} after {MAX_ATTEMPTS} attempts")


# EnableExternalCerts: the Secret someone else (cert-manager, say) keeps, in the kubernetes.io/tls layout.
EXTERNAL_CA_CERT, EXTERNAL_CA_KEY, EXTERNAL_SERVER_CERT, EXTERNAL_SERVER_KEY = (
    "ca.crt",
    "ca.key",
    "tls.crt",
    "tls.key",
)


async def read_external_secret(
    client: Client, namespace: str, secret_name: str = SECRET_NAME
) -> certs.CertBundle:
    """The bundle in an externally managed Secret, read as is: never created, renewed or written.

    As upstream's external cert writer: keys ``ca.crt``, ``tls.crt``, ``tls.key`` (``ca.key`` is optional,
    an issuer need not hand out its key); serving without them is impossible, so their absence is an error.
    """
    try:
        secret = await client.get(SECRETS, secret_name, namespace)
    except NotFound:
        raise certs.ExternalCertsError(
            f"Secret {namespace}/{secret_name} not found: with EnableExternalCerts the webhook certificate "
            f"must be provided in it (keys {EXTERNAL_CA_CERT}, {EXTERNAL_SERVER_CERT}, {EXTERNAL_SERVER_KEY})"
        ) from None
    data = _decode(secret.get("data"))
    missing = [k for k in (EXTERNAL_CA_CERT, EXTERNAL_SERVER_CERT, EXTERNAL_SERVER_KEY) if not data.get(k)]
    if missing:
        raise certs.ExternalCertsError(
            f"Secret {namespace}/{secret_name}: data.{', data.'.join(missing)} must be set"
        )
    return certs.CertBundle(
        ca_key=data.get(EXTERNAL_CA_KEY, b""),
        ca_cert=data[EXTERNAL_CA_CERT],
        key=data[EXTERNAL_SERVER_KEY],
        cert=data[EXTERNAL_SERVER_CERT],
    )


def _hook_path(hook: dict[str, Any]) -> str:
    config = hook.get("clientConfig") or {}
    if config.get("url"):
        return urlsplit(config["url"]).path
    return section(config, "service").get("path") or ""


@dataclass(frozen=True)
class ConfigurationPatcher:
    """Rebuilds both webhook configurations for this process: served paths, client target, caBundle."""

    client: Client
    target: ClientTarget
    served: frozenset[str]
    api_set: str = DEFAULT_API_SET
    """Which versions the configurations it creates list per Kruise kind; one found is rebuilt as it is."""

    async def ensure(self, ca_bundle: bytes) -> list[str]:
        """Bring both configurations up to date; returns the names that were written."""
        written = []
        for ref, name, fresh in (
            (MUTATING, MUTATING_NAME, mutating_configuration),
            (VALIDATING, VALIDATING_NAME, validating_configuration),
        ):
            if await self._ensure_one(ref, name, fresh, ca_bundle):
                written.append(name)
        return written

    async def _ensure_one(
        self, ref: ResourceRef, name: str, fresh: Callable[..., dict[str, Any]], ca_bundle: bytes
    ) -> bool:
        for _ in range(MAX_ATTEMPTS):
            try:
                current = await self.client.get(ref, name)
            except NotFound:
                if not self.target.url:
                    # Behind a Service the chart owns both configurations, as upstream's: creating one
                    # here would undo `helm uninstall` (which deletes them before this pod stops) and
                    # leave a failurePolicy-Fail webhook pointing at nothing.
                    raise RuntimeError(f"not found {ref.kind} {name}") from None
                body = fresh(self.target, ca_bundle, served=set(self.served), api_set=self.api_set)
                try:
                    await self.client.create(ref, body)
                    return True
                except AlreadyExists:
                    continue
            desired = self.rebuild(current, ca_bundle)
            if desired == current:
                return False
            try:
                await self.client.update(ref, desired)
                return True
            except Conflict:
                continue
        raise RuntimeError(f"could not settle {ref.plural}/{name} after {MAX_ATTEMPTS} attempts")

    async def check(self, ca_bundle: bytes) -> None:
        """EnableExternalCerts: write nothing, but every served webhook must already trust ``ca_bundle``.

        Upstream leaves the configurations to whoever injects the CA (cert-manager's CA injector) and
        fails the sync until they agree, so the webhook is not reported ready against a CA the API server
        would reject.
        """
        expected = base64.b64encode(ca_bundle).decode()
        for ref, name in ((MUTATING, MUTATING_NAME), (VALIDATING, VALIDATING_NAME)):
            try:
                current = await self.client.get(ref, name)
            except NotFound:
                raise certs.ExternalCertsError(f"not found {ref.kind} {name}") from None
            for hook in current.get("webhooks") or []:
                if _hook_path(hook) not in self.served:
                    continue
                if section(hook, "clientConfig").get("caBundle") != expected:
                    raise certs.ExternalCertsError(
                        f"caBundle of {ref.kind} {name} (webhook {hook.get('name')}) does not match "
                        "the external caBundle"
                    )

    def rebuild(self, current: dict[str, Any], ca_bundle: bytes) -> dict[str, Any]:
        """From the stored template (first run: the webhooks found), keep served paths, set clientConfig.

        An empty template counts as none, as upstream: the chart renders ``template: ""``, so every
        ``helm upgrade`` clears the stored copy and the webhooks Helm just wrote (a new timeout, say)
        become the template instead of being reverted to the first install's.
        """
        out = orjson.loads(orjson.dumps(current))
        annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
        if not annotations.get(TEMPLATE_ANNOTATION):
            annotations[TEMPLATE_ANNOTATION] = orjson.dumps(out.get("webhooks") or []).decode()
        template = orjson.loads(annotations[TEMPLATE_ANNOTATION])
        hooks = []
        for hook in template:
            path = _hook_path(hook)
            if path not in self.served:
                continue
            hook["clientConfig"] = self.target.client_config(path, ca_bundle)
            hooks.append(hook)
        out["webhooks"] = hooks
        return out
