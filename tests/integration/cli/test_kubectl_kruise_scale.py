"""`kubectl-kruise scale` against the API emulator: every write goes through /scale, so the tests
read spec.replicas back from the objects and set status.replicas themselves, as a controller would."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from kruise.cli.kubectl_kruise.app import run
from kruise.cli.kubectl_kruise.kinds import ADVANCED_STATEFULSETS, CLONESETS, DAEMONSETS_APPS
from kruise.kube.client import Client
from kruise.kube.resources import DEPLOYMENTS
from tests.kit import until

NS = "default"


def template() -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "demo"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }


def workload(api_version: str, kind: str, name: str, replicas: int = 3, labels: dict | None = None) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "demo"}}, "template": template()},
    }


def cloneset(name: str, replicas: int = 3, labels: dict | None = None) -> dict:
    return workload("apps.kruise.io/v1alpha1", "CloneSet", name, replicas, labels)


async def replicas(client: Client, ref, name: str) -> int:
    return (await client.get(ref, name, NS))["spec"]["replicas"]


async def test_scales_cloneset_advanced_statefulset_and_deployment(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset("demo"))
    await client.create(ADVANCED_STATEFULSETS, workload("apps.kruise.io/v1beta1", "StatefulSet", "db"))
    await client.create(DEPLOYMENTS, workload("apps/v1", "Deployment", "web"))

    result = await plugin("scale", "cloneset/demo", "asts/db", "deploy/web", "--replicas=5")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "cloneset.apps.kruise.io/demo scaled\n"
        "statefulset.apps.kruise.io/db scaled\n"
        "deployment.apps/web scaled\n"
    )
    scaled = ((CLONESETS, "demo"), (ADVANCED_STATEFULSETS, "db"), (DEPLOYMENTS, "web"))
    assert [await replicas(client, ref, n) for ref, n in scaled] == [5, 5, 5]

    by_type = await plugin("scale", "clone", "demo", "--replicas", "0", "-o", "name")
    assert (by_type.code, by_type.out) == (0, "cloneset.apps.kruise.io/demo\n")
    assert await replicas(client, CLONESETS, "demo") == 0


async def test_output_formats_and_dry_runs(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset("demo"))
    as_json = await plugin("scale", "cloneset/demo", "--replicas=4", "-o", "json")
    assert json.loads(as_json.out)["spec"]["replicas"] == 4

    client_dry = await plugin("scale", "cloneset/demo", "--replicas=9", "--dry-run=client")
    assert client_dry.out == "cloneset.apps.kruise.io/demo scaled (dry run)\n"
    server_dry = await plugin("scale", "cloneset/demo", "--replicas=9", "--dry-run=server")
    assert (server_dry.code, server_dry.out) == (0, "cloneset.apps.kruise.io/demo scaled (server dry run)\n")
    assert await replicas(client, CLONESETS, "demo") == 4


async def test_preconditions_name_the_expected_and_actual_values(plugin):
    client = plugin.client
    created = await client.create(CLONESETS, cloneset("demo", replicas=3))
    wrong = await plugin("scale", "cloneset/demo", "--current-replicas=2", "--replicas=5")
    assert (wrong.code, wrong.out, wrong.err) == (1, "", "error: Expected replicas to be 2, was 3\n")
    stale = await plugin("scale", "cloneset/demo", "--resource-version=1", "--replicas=5")
    assert (
        stale.err
        == f"error: Expected resource version to be 1, was {created['metadata']['resourceVersion']}\n"
    )
    assert await replicas(client, CLONESETS, "demo") == 3

    right = await plugin("scale", "cloneset/demo", "--current-replicas=3", "--replicas=5")
    assert (right.code, right.out) == (0, "cloneset.apps.kruise.io/demo scaled\n")
    assert await replicas(client, CLONESETS, "demo") == 5

    await client.create(CLONESETS, cloneset("other"))
    many = await plugin("scale", "cloneset", "demo", "other", "--resource-version=1", "--replicas=1")
    assert many.err == "error: cannot use --resource-version with multiple resources\n"


async def test_selector_and_all_pick_objects_of_the_type(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset("a", labels={"tier": "front"}))
    await client.create(CLONESETS, cloneset("b", labels={"tier": "back"}))
    picked = await plugin("scale", "cloneset", "-l", "tier=front", "--replicas=1")
    assert (picked.code, picked.out) == (0, "cloneset.apps.kruise.io/a scaled\n")
    assert [await replicas(client, CLONESETS, n) for n in ("a", "b")] == [1, 3]

    everything = await plugin("scale", "cloneset", "--all", "--replicas=2")
    assert everything.out == "cloneset.apps.kruise.io/a scaled\ncloneset.apps.kruise.io/b scaled\n"
    none = await plugin("scale", "cloneset", "-l", "tier=none", "--replicas=2")
    assert (none.code, none.err) == (1, "error: no objects passed to scale\n")


async def test_missing_objects_are_reported_after_the_others_are_scaled(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset("demo"))
    result = await plugin("scale", "cloneset/nope", "cloneset/demo", "--replicas=2")
    assert (result.code, result.out) == (1, "cloneset.apps.kruise.io/demo scaled\n")
    assert result.err == 'Error from server (NotFound): clonesets.apps.kruise.io "nope" not found\n'
    assert await replicas(client, CLONESETS, "demo") == 2


async def test_usage_errors_name_the_flag_and_the_rule(plugin):
    missing = await plugin("scale", "cloneset/demo")
    assert (missing.code, missing.err) == (1, 'error: required flag(s) "replicas" not set\n')
    negative = await plugin("scale", "cloneset/demo", "--replicas=-1")
    assert negative.err == (
        "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0\n"
    )
    current = await plugin("scale", "cloneset/demo", "--replicas=1", "--current-replicas=-2")
    assert current.err == "error: The --current-replicas must specify an integer of -1 or greater\n"
    no_name = await plugin("scale", "cloneset", "--replicas=1")
    assert no_name.err == "error: resource(s) were provided, but no name was specified\n"
    both = await plugin("scale", "cloneset", "demo", "-l", "a=b", "--replicas=1")
    assert both.err == "error: name cannot be provided when a selector is specified\n"
    nothing = await plugin("scale", "--replicas=1")
    assert nothing.err.startswith("error: You must provide one or more resources by argument or filename.\n")
    unknown = await plugin("scale", "widget/x", "--replicas=1")
    assert unknown.err == 'error: the server doesn\'t have a resource type "widget"\n'


async def test_a_kind_without_scale_subresource_is_refused_by_the_server(plugin):
    client = plugin.client
    body = workload("apps/v1", "DaemonSet", "agent")
    del body["spec"]["replicas"]
    await client.create(DAEMONSETS_APPS, body)
    result = await plugin("scale", "ds/agent", "--replicas=2")
    assert result.code == 1
    assert result.err == "Error from server (NotFound): the server could not find the requested resource\n"


async def test_timeout_waits_for_status_replicas(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset("demo", replicas=1))
    timed_out = await plugin("scale", "cloneset/demo", "--replicas=2", "--timeout=100ms")
    assert (timed_out.code, timed_out.err) == (1, 'error: timed out waiting for "demo" to be synced\n')

    out, err = io.StringIO(), io.StringIO()
    argv = ["--kubeconfig", str(plugin.kubeconfig), "scale", "cloneset/demo", "--replicas=3", "--timeout=60s"]
    task = asyncio.create_task(run(argv, out, err))
    # The controller's part: once the new size is written, report it reached.
    await until(_equals(client, 3), message="spec.replicas == 3")
    obj = await client.get(CLONESETS, "demo", NS)
    obj["status"] = {"observedGeneration": obj["metadata"]["generation"], "replicas": 3}
    await client.update_status(CLONESETS, obj)
    async with asyncio.timeout(30):
        code = await task
    assert (code, out.getvalue(), err.getvalue()) == (0, "cloneset.apps.kruise.io/demo scaled\n", "")


def _equals(client: Client, wanted: int):
    async def check() -> bool:
        return await replicas(client, CLONESETS, "demo") == wanted

    return check
