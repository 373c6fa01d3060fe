"""matchPolicy Equivalent with kruise-webhook's real /convert: a webhook registered for v1alpha1 CloneSets
only sees a v1beta1 CloneSet in its v1alpha1 shape, and its v1alpha1 patch comes back in v1beta1 form."""

from __future__ import annotations

import orjson
import pytest

from kruise.kube.resources import CLONESETS, ResourceRef
from tests.kit import webhook_server
from tests.kit.crd_conversion import BETA_CLONESET, until_conversion_ca
from tests.kit.webhook_server import patch_response

MUTATING = ResourceRef("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", False, "")


@pytest.fixture
async def alpha_only_hook():
    """A test admission webhook (HTTPS on 127.0.0.1) for the MutatingWebhookConfiguration below."""
    certificates = webhook_server.make_certificates(["alpha-hook.test.svc"])
    server = await webhook_server.WebhookServer(certificates).start()
    yield server, certificates
    await server.stop()


async def test_v1alpha1_only_webhook_sees_a_v1beta1_cloneset_converted_by_kruise(
    live_webhook, alpha_only_hook
):
    server, certificates = alpha_only_hook
    server.routes["/alpha"] = lambda req: patch_response(
        [{"op": "add", "path": "/spec/updateStrategy/partition", "value": 1}]
    )
    await until_conversion_ca(live_webhook.client)
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "alpha-only"},
        "webhooks": [
            {
                "name": "alpha.example.com",
                "clientConfig": {"url": server.url("/alpha"), "caBundle": certificates.ca_bundle},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": ["apps.kruise.io"],
                        "apiVersions": ["v1alpha1"],
                        "resources": ["clonesets"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    await live_webhook.client.create(MUTATING, configuration)
    await live_webhook.kubectl.apply(BETA_CLONESET)

    (review,) = server.received["/alpha"]
    request = review["request"]
    assert request["kind"] == {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "CloneSet"}
    assert request["requestKind"] == {"group": "apps.kruise.io", "version": "v1beta1", "kind": "CloneSet"}
    assert request["object"]["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert request["object"]["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"  # the v1alpha1 shape

    stored = await live_webhook.client.get(CLONESETS, "beta", "default")
    assert stored["spec"]["updateStrategy"]["partition"] == 1
    _, out, _ = await live_webhook.kubectl("get", "clonesets.v1beta1.apps.kruise.io", "beta", "-o", "json")
    assert orjson.loads(out)["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 1


@pytest.fixture
def live_webhook_api_set() -> str:
    """CloneSet is this module's two-version CRD: served at v1beta1 only on the 2.0 API set."""
    return "2.0"
