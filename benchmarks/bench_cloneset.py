"""CloneSet at scale: 0 -> N pods, then an in-place update of all N, timed end to end.

The cluster is a real `kruise sandbox up --no-kruise` process (API emulator + simulated nodes); this
process plays kruise-manager: the real CloneSet and pod-readiness controllers sharing one client at
kube-controller-manager's default limits (QPS 20, burst 30) unless told otherwise. Reported per
phase: wall time until the CloneSet status says done, the API requests the manager made by method
(`rest_client_requests_total`), and its writes (every non-GET request) per pod and per component.
The last line is machine-readable:
`writes_per_pod_scale=<x> writes_per_pod_update=<y> scale_ready_s=<t1> update_ready_s=<t2>`.

Run on demand: `.venv/bin/python -m benchmarks cloneset --pods 200` or
`.venv/bin/python benchmarks/bench_cloneset.py --pods 1000 --qps 20 --burst 30`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import copy
import queue
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from tempfile import TemporaryDirectory

from kruise.api.features import FeatureGates
from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.metrics import REST_CLIENT_REQUESTS
from kruise.kube.resources import CLONESETS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers import cloneset, podreadiness

NAMESPACE = "default"


def start_sandbox(kubeconfig: Path, nodes: int, speed: float) -> subprocess.Popen[str]:
    kruise = Path(sys.executable).parent / "kruise"
    process = subprocess.Popen(
        [str(kruise), "sandbox", "up", "--no-kruise", "--nodes", str(nodes), "--speed", str(speed),
         "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if lines.get(timeout=1).startswith("ready"):
                return process
        except queue.Empty:
            if process.poll() is not None:
                break
    process.terminate()
    raise RuntimeError("sandbox did not become ready")


# Which controller a request comes from: each controller's workers are started inside a context that
# names it, and every task copies its creator's context, so the one shared client (one rate limiter,
# as in kruise-manager) can still attribute its writes.
# The event recorders' sender runs in a fresh context, so its writes (and the benchmark's own) land
# under the default.
COMPONENT: contextvars.ContextVar[str] = contextvars.ContextVar("component", default="events+bench")


class AttributingClient(Client):
    """The manager's client, also counting its non-GET requests by component."""

    writes: Counter[str]

    async def _send(self, method: str, path: str, **kwargs):  # type: ignore[no-untyped-def]
        if method != "GET":
            self.writes[COMPONENT.get()] += 1
        return await super()._send(method, path, **kwargs)


def writes_of(counts: Counter[str]) -> int:
    return sum(n for method, n in counts.items() if method != "GET")


def requests_by_method(host: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for metric in REST_CLIENT_REQUESTS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels["host"] == host:
                counts[sample.labels["method"]] += int(sample.value)
    return counts


def report(used: Counter[str]) -> str:
    return f"requests {dict(sorted(used.items()))} total {sum(used.values())}"


def manifest(replicas: int, image: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "bench", "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "bench"}},
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"},
            "template": {
                "metadata": {"labels": {"app": "bench"}},
                # kruise-webhook adds this gate to every pod a kruise workload creates; the sandbox
                # runs without kruise, so the template carries it and the pods come out the same
                "spec": {
                    "containers": [{"name": "app", "image": image}],
                    "readinessGates": [{"conditionType": CONDITION_KRUISE_POD_READY}],
                },
            },
        },
    }


async def run(replicas: int, nodes: int, speed: float, qps: float, burst: int) -> str:
    with TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sandbox = start_sandbox(kubeconfig, nodes, speed)
        try:
            client = await AttributingClient.from_kubeconfig(kubeconfig, qps=qps, burst=burst)
            client.writes = Counter()
            ctx = ManagerContext(
                client=client, informers=SharedInformerFactory(client), feature_gates=FeatureGates(env={})
            )
            controllers = {
                "cloneset": cloneset.SETUP.build(ctx),
                "podreadiness": podreadiness.SETUP.build(ctx),
            }
            ctx.informers.start()
            await ctx.informers.wait_for_cache_sync(60)
            for name, c in controllers.items():
                contextvars.Context().run(_start_as, name, c)
            watched = ctx.informers.informer(CLONESETS)

            async def until(done) -> float:
                start = time.monotonic()
                while True:
                    obj = watched.get(f"{NAMESPACE}/bench")
                    if obj is not None and done(obj.get("status") or {}, obj):
                        return time.monotonic() - start
                    await asyncio.sleep(0.05)

            print(f"replicas={replicas} nodes={nodes} speed={speed} qps={qps} burst={burst}")
            before, by_component = requests_by_method(client.host), client.writes.copy()
            created = await client.create(CLONESETS, manifest(replicas, "nginx:1.25"))
            scale_s = await until(
                lambda s, o: s.get("readyReplicas") == replicas and s.get("availableReplicas") == replicas
            )
            await settle(client)
            used = requests_by_method(client.host) - before
            # the benchmark's own create of the CloneSet went through the same client
            scale_writes = writes_of(used) - 1
            components = client.writes - by_component
            components["events+bench"] -= 1
            print(f"scale 0 -> {replicas}: {scale_s:.1f} s until all ready; {report(used)}")
            print(f"  writes by component: {dict(sorted((+components).items()))}")

            before, by_component = requests_by_method(client.host), client.writes.copy()
            body = copy.deepcopy(watched.get(f"{NAMESPACE}/bench") or created)
            body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
            target = (await client.update(CLONESETS, body))["metadata"]["generation"]
            update_s = await until(
                lambda s, o: (
                    s.get("observedGeneration") == target
                    and s.get("updatedReadyReplicas") == replicas
                    and s.get("currentRevision") == s.get("updateRevision")
                )
            )
            await settle(client)
            used = requests_by_method(client.host) - before
            update_writes = writes_of(used) - 1
            components = client.writes - by_component
            components["events+bench"] -= 1
            print(
                f"in-place update of {replicas}: {update_s:.1f} s until all updated and ready; {report(used)}"
            )
            print(f"  writes by component: {dict(sorted((+components).items()))}")
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"manager process peak RSS: {peak:.0f} MiB")
            for c in controllers.values():
                await c.stop()
            for recorder in ctx.recorders:
                await recorder.stop()
            await ctx.informers.stop()
            await client.close()
        finally:
            sandbox.terminate()
            sandbox.wait(timeout=30)
    return (
        f"writes_per_pod_scale={scale_writes / replicas:.2f} "
        f"writes_per_pod_update={update_writes / replicas:.2f} "
        f"scale_ready_s={scale_s:.1f} update_ready_s={update_s:.1f}"
    )


async def settle(client: AttributingClient, quiet: float = 2.0) -> None:
    """Wait until the manager has written nothing for `quiet` seconds: writes that trail the status
    (a last lifecycle label, a last status patch) belong to the phase that caused them."""
    last, since = sum(client.writes.values()), time.monotonic()
    while time.monotonic() - since < quiet:
        await asyncio.sleep(0.1)
        now = sum(client.writes.values())
        if now != last:
            last, since = now, time.monotonic()


def _start_as(component: str, controller) -> None:  # type: ignore[no-untyped-def]
    COMPONENT.set(component)
    controller.start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000, help="replicas to scale to, then update")
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--speed", type=float, default=100.0)
    parser.add_argument("--qps", type=float, default=20.0)
    parser.add_argument("--burst", type=int, default=30)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:] if __name__ == "__main__" else [])
    print(asyncio.run(run(args.pods, args.nodes, args.speed, args.qps, args.burst)))


if __name__ == "__main__":
    main()
