"""`kubectl kruise set resources` against the API emulator: stored result, output shapes, errors."""

from __future__ import annotations

from typing import Any

import yaml

from kruise.cli.kubectl_kruise.kinds import ADVANCED_STATEFULSETS, CLONESETS
from kruise.kube.resources import DEPLOYMENTS
from tests.integration.cli.test_kubectl_kruise_live import NS, cloneset, deployment, pod_template


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]


async def test_set_resources_on_a_cloneset_merges_limits_and_requests(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    result = await plugin(
        "set", "resources", "cloneset/demo", "--limits=cpu=200m,memory=512Mi", "--requests=cpu=0.1"
    )
    assert (result.code, result.out, result.err) == (
        0, "cloneset.apps.kruise.io/demo resource requirements updated\n", ""
    )  # fmt: skip
    stored = containers(await client.get(CLONESETS, "demo", NS))[0]["resources"]
    assert stored == {"limits": {"cpu": "200m", "memory": "512Mi"}, "requests": {"cpu": "100m"}}

    more = await plugin("set", "resources", "clone", "demo", "-c", "main", "--limits=cpu=1")
    assert more.out == "cloneset.apps.kruise.io/demo resource requirements updated\n"
    stored = containers(await client.get(CLONESETS, "demo", NS))[0]["resources"]
    assert stored["limits"] == {"cpu": "1", "memory": "512Mi"} and stored["requests"] == {"cpu": "100m"}

    unchanged = await plugin("set", "resources", "cloneset/demo", "--limits=cpu=1")
    assert (unchanged.code, unchanged.out, unchanged.err) == (0, "", "")
    ghost = await plugin("set", "resources", "cloneset/demo", "-c", "ghost", "--limits=cpu=2")
    assert (ghost.code, ghost.err) == (1, "error: error: unable to find container named ghost\n")


async def test_set_resources_dry_run_and_output_leave_the_object_alone(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    server = await plugin("set", "resources", "cloneset/demo", "--requests=memory=64Mi", "--dry-run=server")
    assert server.out == "cloneset.apps.kruise.io/demo resource requirements updated (server dry run)\n"
    client_side = await plugin(
        "set", "resources", "cloneset/demo", "--requests=memory=64Mi", "--dry-run=client", "-o", "yaml"
    )
    shown = yaml.safe_load(client_side.out)
    assert containers(shown)[0]["resources"] == {"requests": {"memory": "64Mi"}}
    assert "resources" not in containers(await client.get(CLONESETS, "demo", NS))[0]
    named = await plugin("set", "resources", "cloneset/demo", "--limits=cpu=3", "-o", "name")
    assert named.out == "cloneset.apps.kruise.io/demo\n"


async def test_set_resources_on_advanced_statefulset_and_deployment(plugin):
    client = plugin.client
    await client.create(
        ADVANCED_STATEFULSETS,
        {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": NS},
            "spec": {
                "replicas": 1,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "demo"}},
                "template": pod_template(),
            },
        },
    )
    await client.create(DEPLOYMENTS, deployment())
    asts = await plugin("set", "resources", "asts/db", "deploy/web", "--limits=memory=1Gi")
    assert (asts.code, asts.err) == (0, "")
    assert asts.out == (
        "statefulset.apps.kruise.io/db resource requirements updated\n"
        "deployment.apps/web resource requirements updated\n"
    )
    for ref, name in ((ADVANCED_STATEFULSETS, "db"), (DEPLOYMENTS, "web")):
        assert containers(await client.get(ref, name, NS))[0]["resources"] == {"limits": {"memory": "1Gi"}}


async def test_set_resources_errors(plugin):
    missing = await plugin("set", "resources", "cloneset/nope", "--limits=cpu=1")
    assert missing.code == 1 and missing.err.startswith("Error from server (NotFound): ")
    no_update = await plugin("set", "resources", "cloneset/demo")
    assert no_update.err == (
        "error: you must specify an update to requests or limits (in the form of --requests/--limits)\n"
    )
    bad = await plugin("set", "resources", "cloneset/demo", "--limits=cpu")
    assert (bad.code, bad.err) == (1, "error: Invalid argument syntax cpu, expected <resource>=<value>\n")
