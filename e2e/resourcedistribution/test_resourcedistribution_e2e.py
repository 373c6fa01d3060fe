"""ResourceDistribution through `kruise sandbox up --feature-gates ResourceDistributionGate=true`
and the real kubectl: a Secret copied into two listed namespaces, `kubectl get distributor` counting them,
and both copies rewritten when the distribution's data changes."""

from __future__ import annotations

import base64
import json

from harness import Cluster, until

NAMESPACES = ("rd-team-a", "rd-team-b")
HASH = "kruise.io/resourcedistribution.resource.hashcode"


def distribution(token: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": "shared-secret"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred"},
                         "type": "Opaque", "data": {"token": base64.b64encode(token.encode()).decode()}},
            "targets": {"includedNamespaces": {"list": [{"name": n} for n in NAMESPACES]}},
        },
    }  # fmt: skip


async def copies(cluster: Cluster) -> dict[str, str]:
    """namespace → the decoded token of its `regcred` copy (namespaces without one left out)."""
    found = {}
    for ns in NAMESPACES:
        code, out = await cluster.kubectl("get", "secret", "regcred", "-n", ns, "-o", "json", check=False)
        if code == 0:
            found[ns] = base64.b64decode(json.loads(out)["data"]["token"]).decode()
    return found


async def until_copies(cluster: Cluster, token: str) -> None:
    want = {ns: token for ns in NAMESPACES}
    await until(lambda: copies(cluster), lambda seen: seen == want, f"both copies holding {token!r}")


async def test_secret_distributed_to_two_namespaces_and_kept_in_sync(kruise_sandbox_gated: Cluster):
    cluster = kruise_sandbox_gated
    for ns in NAMESPACES:
        await cluster.kubectl("create", "namespace", ns)
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(distribution("v1-secret")))

    await until_copies(cluster, "v1-secret")
    await cluster.kubectl(
        "wait", "resourcedistribution/shared-secret", "--for=jsonpath={.status.succeeded}=2", "--timeout=60s"
    )
    _, table = await cluster.kubectl("get", "distributor", "shared-secret")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "TOTAL", "SUCCEED", "FAILED"]
    assert row.split()[:3] == ["shared-secret", "2", "2"]
    _, out = await cluster.kubectl("get", "secret", "regcred", "-n", NAMESPACES[0], "-o", "json")
    first = json.loads(out)
    owner = first["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("ResourceDistribution", "shared-secret")
    assert first["type"] == "Opaque"

    patch = {"spec": {"resource": distribution("v2-secret")["spec"]["resource"]}}
    await cluster.kubectl(
        "patch", "resourcedistribution", "shared-secret", "--type=merge", "-p", json.dumps(patch)
    )
    await until_copies(cluster, "v2-secret")
    _, out = await cluster.kubectl("get", "secret", "regcred", "-n", NAMESPACES[0], "-o", "json")
    assert json.loads(out)["metadata"]["annotations"][HASH] != first["metadata"]["annotations"][HASH]
