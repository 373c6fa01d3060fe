"""`kubectl-kruise migrate CloneSet --from Deployment` against the API emulator.

No controllers run, so the tests play both: `Controllers` observes each new generation (status
through the status subresource) and makes CloneSet pods available only some rounds later, so the
plugin has to wait for them. Every state it observed is recorded, to check the migration's bounds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from kruise.cli.kubectl_kruise.kinds import CLONESETS
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.resources import DEPLOYMENTS

NS = "default"
LABELS = {"app": "web"}


def deployment(name: str = "web", replicas: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS, "labels": LABELS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        },
    }


@dataclass
class Controllers:
    """Stands in for the Deployment and CloneSet controllers: each round, observe the latest
    generation of both; CloneSet pods become available `delay` rounds after they were asked for."""

    client: Client
    delay: int = 3
    available: bool = True
    states: list[tuple[int, int, int]] = field(default_factory=list)  # (deployment, cloneset, available)
    _pending: int = 0

    async def _round(self) -> None:
        try:
            dep = await self.client.get(DEPLOYMENTS, "web", NS)
            cs = await self.client.get(CLONESETS, "web-cs", NS)
        except NotFound:
            return
        cs_status = cs.get("status") or {}
        ready = int(cs_status.get("availableReplicas") or 0)
        wanted = cs["spec"]["replicas"]
        if ready != wanted and self.available:
            self._pending += 1
            if self._pending >= self.delay:
                ready, self._pending = wanted, 0
        self.states.append((dep["spec"]["replicas"], wanted, ready))
        for ref, obj, extra in ((DEPLOYMENTS, dep, {}), (CLONESETS, cs, {"availableReplicas": ready})):
            status = {
                **(obj.get("status") or {}),
                "observedGeneration": obj["metadata"]["generation"],
                **extra,
            }
            if status != obj.get("status"):
                await self.client.update_status(ref, {**obj, "status": status})

    async def run(self) -> None:
        while True:
            await self._round()
            await asyncio.sleep(0.02)


@asynccontextmanager
async def controllers(client: Client, **kwargs: Any) -> AsyncIterator[Controllers]:
    playing = Controllers(client, **kwargs)
    task = asyncio.create_task(playing.run())
    try:
        yield playing
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def replicas(client: Client, ref, name: str) -> int:
    return (await client.get(ref, name, NS))["spec"]["replicas"]


async def test_create_makes_an_empty_cloneset_and_copy_a_full_one(plugin):
    client = plugin.client
    await client.create(DEPLOYMENTS, deployment())
    base = ("migrate", "CloneSet", "--from", "Deployment", "-n", NS, "--src-name", "web")
    created = await plugin(*base, "--dst-name", "web-cs", "--create")
    assert (created.code, created.out) == (0, "")
    assert created.err == "Successfully created from Deployment/web to CloneSet/web-cs\n"
    cloneset = await client.get(CLONESETS, "web-cs", NS)
    assert cloneset["spec"]["replicas"] == 0
    assert cloneset["spec"]["selector"] == {"matchLabels": LABELS}
    assert cloneset["spec"]["updateStrategy"]["type"] == "ReCreate"

    again = await plugin(*base, "--dst-name", "web-cs", "--create", "--copy")
    assert (again.code, again.err) == (1, "error: cloneset default/web-cs already exists\n")

    copied = await plugin(*base, "--dst-name", "copy", "--create", "--copy")
    assert copied.code == 0
    assert await replicas(client, CLONESETS, "copy") == 10


async def test_migrates_every_replica_within_the_surge_and_never_below_the_start(plugin):
    client = plugin.client
    await client.create(DEPLOYMENTS, deployment())
    base = (
        "migrate",
        "CloneSet",
        "--from",
        "Deployment",
        "-n",
        NS,
        "--src-name",
        "web",
        "--dst-name",
        "web-cs",
    )
    assert (await plugin(*base, "--create")).code == 0
    async with controllers(client) as played:
        result = await plugin(*base, "--max-surge=3")
    assert (result.code, result.out) == (0, "")
    lines = result.err.splitlines()
    assert lines[0] == "Migration progress: Deployment/web scale in 0, CloneSet/web-cs scale out 3"
    assert lines[-2] == "Migration progress: Deployment/web scale in 10, CloneSet/web-cs scale out 10"
    assert lines[-1] == "Successfully migrated 10 replicas from Deployment/web to CloneSet/web-cs"
    assert all(line.startswith("Migration progress: ") for line in lines[:-1])
    assert (await replicas(client, DEPLOYMENTS, "web"), await replicas(client, CLONESETS, "web-cs")) == (
        0,
        10,
    )
    assert played.states, "the stand-in controllers saw nothing"
    assert max(dep + cs for dep, cs, _ in played.states) == 13
    assert min(dep + available for dep, _, available in played.states) >= 10


async def test_partial_migration_and_the_timeout(plugin):
    client = plugin.client
    await client.create(DEPLOYMENTS, deployment())
    base = (
        "migrate",
        "CloneSet",
        "--from",
        "Deployment",
        "-n",
        NS,
        "--src-name",
        "web",
        "--dst-name",
        "web-cs",
    )
    assert (await plugin(*base, "--create")).code == 0
    async with controllers(client):
        partial = await plugin(*base, "--replicas", "4", "--max-surge", "2")
    assert (partial.code, partial.err.splitlines()[-1]) == (
        0,
        "Successfully migrated 4 replicas from Deployment/web to CloneSet/web-cs",
    )
    assert (await replicas(client, DEPLOYMENTS, "web"), await replicas(client, CLONESETS, "web-cs")) == (6, 4)

    async with controllers(client, available=False):
        stuck = await plugin(*base, "--timeout-seconds", "1")
    assert stuck.code == 1
    assert stuck.err.splitlines() == [
        "Migration progress: Deployment/web scale in 0, CloneSet/web-cs scale out 1",
        "error: failed to migrate: task timeout exceeded",
    ]
    assert (await replicas(client, DEPLOYMENTS, "web"), await replicas(client, CLONESETS, "web-cs")) == (6, 5)


async def test_errors_name_the_object_and_the_reason(plugin):
    client = plugin.client
    base = ("migrate", "CloneSet", "--from", "Deployment", "-n", NS)
    missing = await plugin(*base, "--src-name", "nope", "--dst-name", "web-cs")
    assert (missing.code, missing.err) == (
        1,
        'error: failed to get {apps/v1 Deployment default nope}: deployments.apps "nope" not found\n',
    )
    await client.create(DEPLOYMENTS, deployment())
    no_cloneset = await plugin(*base, "--src-name", "web", "--dst-name", "gone")
    assert no_cloneset.err == (
        "error: failed to get {apps.kruise.io/v1alpha1 CloneSet default gone}: "
        'clonesets.apps.kruise.io "gone" not found\n'
    )
    zero = await plugin(*base, "--src-name", "web", "--dst-name", "gone", "--replicas", "0")
    assert (zero.code, zero.err) == (1, "error: invalid replicas 0\n")
    no_namespace = await plugin("migrate", "CloneSet", "--from", "Deployment", "--src-name", "web")
    assert (no_namespace.code, no_namespace.err) == (
        1,
        "error: must specify namespace by -n or --namespace\n",
    )
    wrong_kind = await plugin(*base, "--from", "StatefulSet", "--src-name", "web", "--dst-name", "x")
    assert wrong_kind.err == "error: currently only supported Deployment as src type\n"
    assert await replicas(client, DEPLOYMENTS, "web") == 10
