"""CloneSet at scale: 0 -> N pods, then an in-place update of all N, timed end to end.

The cluster is a real `kruise sandbox up --no-kruise` process (API emulator + simulated nodes); this
process plays kruise-manager: the real CloneSet and pod-readiness controllers with the manager's
default client limits (QPS 30, burst 50) unless told otherwise. Reported per phase: wall time until
the CloneSet status says done, and the API requests the controllers made, by method.

Run on demand: `.venv/bin/python -m benchmarks cloneset` or
`.venv/bin/python benchmarks/bench_cloneset.py --replicas 1000 --qps 30 --burst 50`.
"""

from __future__ import annotations

import argparse
import asyncio
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
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }


async def run(replicas: int, nodes: int, speed: float, qps: float, burst: int) -> None:
    with TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sandbox = start_sandbox(kubeconfig, nodes, speed)
        try:
            client = await Client.from_kubeconfig(kubeconfig, qps=qps, burst=burst)
            ctx = ManagerContext(
                client=client, informers=SharedInformerFactory(client), feature_gates=FeatureGates(env={})
            )
            controllers = [cloneset.SETUP.build(ctx), podreadiness.SETUP.build(ctx)]
            ctx.informers.start()
            await ctx.informers.wait_for_cache_sync(60)
            for c in controllers:
                c.start()
            watched = ctx.informers.informer(CLONESETS)

            async def until(done) -> float:
                start = time.monotonic()
                while True:
                    obj = watched.get(f"{NAMESPACE}/bench")
                    if obj is not None and done(obj.get("status") or {}, obj):
                        return time.monotonic() - start
                    await asyncio.sleep(0.05)

            print(f"replicas={replicas} nodes={nodes} speed={speed} qps={qps} burst={burst}")
            before = requests_by_method(client.host)
            created = await client.create(CLONESETS, manifest(replicas, "nginx:1.25"))
            elapsed = await until(
                lambda s, o: s.get("readyReplicas") == replicas and s.get("availableReplicas") == replicas
            )
            used = requests_by_method(client.host) - before
            print(f"scale 0 -> {replicas}: {elapsed:.1f} s until all ready; {report(used)}")

            before = requests_by_method(client.host)
            body = copy.deepcopy(watched.get(f"{NAMESPACE}/bench") or created)
            body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
            target = (await client.update(CLONESETS, body))["metadata"]["generation"]
            elapsed = await until(
                lambda s, o: (
                    s.get("observedGeneration") == target
                    and s.get("updatedReadyReplicas") == replicas
                    and s.get("currentRevision") == s.get("updateRevision")
                )
            )
            used = requests_by_method(client.host) - before
            print(
                f"in-place update of {replicas}: {elapsed:.1f} s until all updated and ready; {report(used)}"
            )
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"manager process peak RSS: {peak:.0f} MiB")
            for c in controllers:
                await c.stop()
            for recorder in ctx.recorders:
                await recorder.stop()
            await ctx.informers.stop()
            await client.close()
        finally:
            sandbox.terminate()
            sandbox.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--speed", type=float, default=100.0)
    parser.add_argument("--qps", type=float, default=30.0)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:] if __name__ == "__main__" else [])
    asyncio.run(run(args.replicas, args.nodes, args.speed, args.qps, args.burst))


if __name__ == "__main__":
    main()
