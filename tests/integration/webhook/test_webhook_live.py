"""kruise-webhook against the emulator: certificates, configurations, and kubectl seeing its answers."""

from __future__ import annotations

import asyncio
import base64
import datetime
import ssl

import httpx
import orjson

from kruise.kube.resources import SECRETS
from kruise.webhook import certs
from kruise.webhook.certsecret import MUTATING, VALIDATING, ensure_secret

INVALID_CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: bad, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: main, image: nginx:alpine}]}
"""

VALID_CLONESET = INVALID_CLONESET.replace("name: bad", "name: good").replace("app: other", "app: bad")


async def test_secret_configurations_and_readiness(live_webhook):
    secret = await live_webhook.client.get(SECRETS, "kruise-webhook-certs", "kruise-system")
    assert set(secret["data"]) == {"ca-key.pem", "ca-cert.pem", "key.pem", "cert.pem", "tls.key", "tls.crt"}
    ca = base64.b64decode(secret["data"]["ca-cert.pem"])
    mutating = await live_webhook.client.get(MUTATING, "kruise-mutating-webhook-configuration")
    validating = await live_webhook.client.get(VALIDATING, "kruise-validating-webhook-configuration")
    for config in (mutating, validating):
        assert config["webhooks"]
        for hook in config["webhooks"]:
            assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca
            assert hook["clientConfig"]["url"].startswith(live_webhook.url + "/")
    context = ssl.create_default_context(cadata=ca.decode())
    async with httpx.AsyncClient(verify=context) as http:
        assert (await http.get(live_webhook.url + "/readyz")).status_code == 200
        metrics = (await http.get(live_webhook.url + "/metrics")).text
    assert "controller_runtime_webhook_latency_seconds" in metrics


async def test_kubectl_apply_invalid_cloneset_is_refused_naming_the_field(live_webhook):
    code, _, err = await live_webhook.kubectl("apply", "-f", "-", stdin=INVALID_CLONESET, check=False)
    assert code != 0
    assert 'admission webhook "vcloneset.kb.io" denied the request' in err
    assert "spec.template.metadata.labels" in err
    await live_webhook.kubectl("apply", "-f", "-", stdin=VALID_CLONESET)
    _, out, _ = await live_webhook.kubectl("get", "clonesets.v1alpha1.apps.kruise.io", "good", "-o", "json")
    spec = orjson.loads(out)["spec"]
    assert spec["updateStrategy"]["type"] == "ReCreate"  # defaulted by the mutating webhook
    assert spec["revisionHistoryLimit"] == 10
    # the default API set (1.9) serves CloneSet at v1alpha1 only: kubectl's plain name reads that
    _, out, _ = await live_webhook.kubectl("get", "clonesets.apps.kruise.io", "good", "-o", "json")
    plain = orjson.loads(out)
    assert plain["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert plain["spec"]["updateStrategy"]["type"] == "ReCreate"


async def test_kubectl_delete_protected_namespace_is_refused(live_webhook):
    kubectl = live_webhook.kubectl
    await kubectl.namespace("team")
    await kubectl("label", "namespace", "team", "policy.kruise.io/delete-protection=Always")
    code, _, err = await kubectl("delete", "namespace", "team", check=False)
    assert code != 0
    assert (
        'admission webhook "vnamespace.kb.io" denied the request: '
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
    ) in err
    await kubectl("label", "namespace", "team", "policy.kruise.io/delete-protection-")
    await kubectl("delete", "namespace", "team", "--wait=false")


async def test_reset_ca_bundle_is_patched_back(live_webhook):
    client = live_webhook.client
    name = "kruise-validating-webhook-configuration"
    config = await client.get(VALIDATING, name)
    expected = config["webhooks"][0]["clientConfig"]["caBundle"]
    patch = [{"op": "remove", "path": "/webhooks/0/clientConfig/caBundle"}]
    args = (
        "patch",
        "validatingwebhookconfiguration",
        name,
        "--type=json",
        "-p",
        orjson.dumps(patch).decode(),
    )
    await live_webhook.kubectl(*args)
    async with asyncio.timeout(15):
        async for event in client.watch(VALIDATING, field_selector=f"metadata.name={name}"):
            if event.object["webhooks"][0]["clientConfig"].get("caBundle") == expected:
                break


async def test_concurrent_replicas_settle_on_one_certificate(live_webhook):
    client = live_webhook.client
    dns = "kruise-webhook-service.race.svc"
    await live_webhook.kubectl.namespace("race")
    bundles = await asyncio.gather(*(ensure_secret(client, "race", dns) for _ in range(4)))
    assert len({b.ca_cert for b in bundles}) == 1 and len({b.cert for b in bundles}) == 1
    stored = await client.get(SECRETS, "kruise-webhook-certs", "race")
    assert base64.b64decode(stored["data"]["tls.crt"]) == bundles[0].cert


async def test_expiring_certificate_is_renewed_in_the_secret(live_webhook):
    client = live_webhook.client
    await live_webhook.kubectl.namespace("renew")
    dns = "kruise-webhook-service.renew.svc"
    first = await ensure_secret(client, "renew", dns)
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=3650 - 30)
    renewed = await ensure_secret(client, "renew", dns, now=lambda: later)
    assert renewed.cert != first.cert
    assert not certs.problems(renewed, dns, certs.DEFAULT_RENEW_BEFORE, later)
    stored = await client.get(SECRETS, "kruise-webhook-certs", "renew")
    assert base64.b64decode(stored["data"]["cert.pem"]) == renewed.cert
