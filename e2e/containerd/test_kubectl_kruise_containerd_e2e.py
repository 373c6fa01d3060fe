"""`kubectl kruise migrate` and `exec` on real nodes (`kruise sandbox up --runtime containerd`).

A Deployment of 10 nginx stand-ins (busybox httpd in real containers on the bridge) sits behind a
Service; `kubectl kruise migrate CloneSet --from Deployment` moves them under a CloneSet with
--max-surge=2 while a client pod on the bridge sends an HTTP GET every 100 ms.

What this proves, exactly: the sandbox has no kube-proxy (docs/sandbox.md, "Services: simulated"),
so the client cannot dial the Service's ClusterIP. The test plays kube-proxy's part instead: an
informer watches the Service's Endpoints and, on every change, writes the ready pod IPs into the
client container (`kubectl exec`); the client asks those IPs in turn. So the client's traffic follows
the Service's Endpoints with a propagation lag, as it would through kube-proxy, and every request
hits a real container. Zero failed requests then means: at no moment during the migration did the
Endpoints name a pod that could not answer, nor leave the client with nothing to ask. The
Deployment's pods carry the usual preStop sleep that covers the Endpoints propagation lag on any
cluster (the kubelet kills a deleted pod while its removal from the Endpoints is still on its way).
Separately, every Endpoints version is recorded, and Ready addresses never drop below the 10 that
migrate's settings allow (it removes a Deployment pod only once a CloneSet pod has replaced it).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from harness import Cluster, kubectl_kruise, until

from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ResourceRef

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

ENDPOINTS = ResourceRef("", "v1", "endpoints", True, "Endpoints")
NS = "default"
REPLICAS = 10
MAX_SURGE = 2
LABELS = {"app": "web"}

# One request per line: `ok <n> <ip>` or `FAIL <n> <ip> <error>`; each request goes to the next IP of
# the current target list, re-read every time (the test rewrites it as the Endpoints change).
# (Busybox's `wget -T` segfaults on a refused connection, hence `timeout`.)
CLIENT = r"""
n=0
while :; do
  set -- $(cat /tmp/targets 2>/dev/null)
  if [ $# -gt 0 ]; then
    n=$((n+1))
    i=$((n % $# + 1))
    eval ip=\${$i}
    if timeout 5 wget -q -O /dev/null "http://$ip:80/" 2>/tmp/err; then
      echo "ok $n $ip"
    else
      echo "FAIL $n $ip $(tr '\n' ' ' </tmp/err)"
    fi
  fi
  sleep 0.1
done
"""


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    # simulated seconds (speed 20): 10 s of wall clock for the preStop sleep below
                    "terminationGracePeriodSeconds": 200,
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:alpine",
                            # ready 3 s after it starts (probes of real processes run on the wall
                            # clock): a migration that removed Deployment pods before their CloneSet
                            # replacements serve would show
                            "readinessProbe": {
                                "tcpSocket": {"port": 80},
                                "initialDelaySeconds": 3,
                                "periodSeconds": 1,
                            },
                            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "3"]}}},
                        }
                    ],
                },
            },
        },
    }


def service() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": LABELS, "ports": [{"port": 80, "targetPort": 80}]},
    }


def client_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-client", "namespace": NS},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "client", "image": "busybox", "command": ["sh", "-c", CLIENT]}],
        },
    }


def ready_addresses(endpoints: dict[str, Any]) -> list[tuple[str, str]]:
    """(pod name, IP) of every ready address, as kube-proxy would route to them."""
    return sorted(
        ((address.get("targetRef") or {}).get("name", ""), address.get("ip", ""))
        for subset in endpoints.get("subsets") or []
        for address in subset.get("addresses") or []
    )


async def apply(cluster: Cluster, obj: dict[str, Any]) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


async def client_log(cluster: Cluster) -> list[str]:
    _, out = await cluster.kubectl("logs", "web-client", "-n", NS)
    return out.splitlines()


class TargetFeed:
    """kube-proxy's part: each Endpoints version's ready IPs, written into the client container in
    order (the newest wins when several arrive during one write)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.versions: list[list[tuple[str, str]]] = []
        self.changed = asyncio.Event()
        self.writes = 0

    def record(self, *objs: dict[str, Any]) -> None:
        self.versions.append(ready_addresses(objs[-1]))
        self.changed.set()

    async def run(self) -> None:
        written: list[str] | None = None
        while True:
            await self.changed.wait()
            self.changed.clear()
            ips = [ip for _, ip in self.versions[-1]]
            if ips == written:
                continue
            await self.cluster.kubectl(
                "exec", "web-client", "-n", NS, "--", "sh", "-c",
                'echo "$0" > /tmp/targets.new && mv /tmp/targets.new /tmp/targets', " ".join(ips),
            )  # fmt: skip
            written = ips
            self.writes += 1


async def test_migrate_under_a_client_loop_and_exec_in_a_real_container(real_cluster: Cluster) -> None:
    cluster = real_cluster
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=500, burst=500)
    informer = SharedInformer(client, ENDPOINTS, NS, field_selector="metadata.name=web")
    feed = TargetFeed(cluster)
    feeding: asyncio.Task[None] | None = None
    try:
        await apply(cluster, deployment())
        await apply(cluster, service())
        await apply(cluster, client_pod())

        async def endpoints() -> list[tuple[str, str]]:
            _, out = await cluster.kubectl("get", "endpoints", "web", "-n", NS, "-o", "json", check=False)
            return ready_addresses(json.loads(out)) if out.startswith("{") else []

        await until(
            endpoints,
            lambda addresses: len(addresses) == REPLICAS,
            "10 ready Deployment pods behind the Service",
            timeout=240,
        )
        await cluster.kubectl("wait", "pod/web-client", "-n", NS, "--for=condition=Ready", "--timeout=120s")

        informer.add_event_handler(on_add=feed.record, on_update=feed.record)
        informer.start()
        assert await informer.wait_for_sync(30)
        feeding = asyncio.create_task(feed.run())
        await until(
            lambda: client_log(cluster),
            lambda lines: sum(line.startswith("ok ") for line in lines) >= 20,
            "the client hears the Deployment's pods",
        )

        base = ("migrate", "CloneSet", "--from", "Deployment", "-n", NS, "--src-name", "web",
                "--dst-name", "web-cs")  # fmt: skip
        started = len(await client_log(cluster))
        _, out, err = await kubectl_kruise(cluster, *base, "--create")
        assert (out, err) == ("", "Successfully created from Deployment/web to CloneSet/web-cs\n")
        _, out, err = await kubectl_kruise(
            cluster, *base, f"--max-surge={MAX_SURGE}", "--timeout-seconds=400", timeout=420
        )
        finished = len(await client_log(cluster))
        assert out == ""
        assert (
            err.splitlines()[-1] == "Successfully migrated 10 replicas from Deployment/web to CloneSet/web-cs"
        )

        final = await until(
            endpoints,
            lambda addresses: (
                len(addresses) == REPLICAS and all(n.startswith("web-cs-") for n, _ in addresses)
            ),
            "the Service served by the CloneSet's 10 pods alone",
            timeout=120,
        )
        final_ips = {ip for _, ip in final}
        # the client has moved over: it answers from CloneSet pods only for a while
        lines = await until(
            lambda: client_log(cluster),
            lambda lines: len(lines) > 20 and all(line.split()[2] in final_ips for line in lines[-20:]),
            "the client asking the CloneSet's pods alone",
        )

        # exec: the plugin picks a pod by the CloneSet's selector, which the Deployment shares (as
        # kruise-tools, terminating pods included): once the Deployment's pods are gone, a CloneSet
        # pod, and the command runs in its real container
        async def pods() -> list[str]:
            _, out = await cluster.kubectl(
                "get", "pods", "-n", NS, "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}"
            )
            return out.split()

        await until(
            pods, lambda names: all(n.startswith("web-cs-") for n in names), "the Deployment's pods gone"
        )
        code, _, err = await kubectl_kruise(
            cluster, "exec", "cloneset/web-cs", "-n", NS, "-c", "nope", "--", "true", check=False
        )
        chosen = re.search(r"is not valid for pod (\S+)", err)
        assert code == 1 and chosen is not None, err
        assert chosen.group(1) in {name for name, _ in final}, (chosen.group(1), final)
        _, out, _ = await kubectl_kruise(
            cluster, "exec", "cloneset/web-cs", "-n", NS, "--",
            "sh", "-c", 'echo "$HOSTNAME"; cat /etc/kruise-standin; wget -q -O - http://127.0.0.1:80/',
        )  # fmt: skip
        hostname, standin, *page = out.splitlines()
        assert hostname == chosen.group(1)
        assert "nginx" in standin
        assert any("Welcome to nginx!" in line for line in page), out
    finally:
        if feeding is not None:
            feeding.cancel()
        await informer.stop()
        await client.close()
        for what in (
            ("pod", "web-client"),
            ("cloneset", "web-cs"),
            ("deployment", "web"),
            ("service", "web"),
        ):
            await cluster.kubectl(
                "delete", *what, "-n", NS, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False
            )

    failures = [line for line in lines if not line.startswith("ok ")]
    counts = [len(addresses) for addresses in feed.versions]
    asked = {line.split()[2] for line in lines}
    print(
        f"containerd migrate: {len(lines)} client requests to {len(asked)} pod IPs "
        f"({finished - started} while migrate ran), {len(failures)} failed; "
        f"{len(feed.versions)} Endpoints versions (target list rewritten {feed.writes} times), "
        f"ready min={min(counts)} max={max(counts)}"
    )
    assert failures == [], failures
    numbers = [int(line.split()[1]) for line in lines]
    assert numbers == list(range(1, len(lines) + 1))  # no request went unlogged
    # the client asked the Deployment's pods before the migration and the CloneSet's after it
    initial_ips = {ip for _, ip in feed.versions[0]}
    assert {line.split()[2] for line in lines[:started]} <= initial_ips
    assert finished - started > 0, "no request was sent while the replicas moved"
    assert len(feed.versions) > REPLICAS, feed.versions
    assert min(counts) >= REPLICAS, counts  # migrate allows no unavailability
    assert max(counts) <= REPLICAS + MAX_SURGE, counts
