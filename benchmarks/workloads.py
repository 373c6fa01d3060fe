"""Shared machinery of the pod-creating workload benchmarks (issue 18): 0 -> N pods, then (when the
workload has one) a template update of all N, counting the manager's API writes.

The cluster is a real `kruise sandbox up --no-kruise` process (API emulator + simulated nodes); this
process plays kruise-manager: the workload's controller and the pod-readiness controller sharing one
client at kube-controller-manager's default limits (QPS 20, burst 30) unless told otherwise. Reported
per phase: wall time until the workload's status says done, the API requests the manager made by
method (`rest_client_requests_total`), and its writes (every non-GET request) by component and by
request (method and resource). The last line is machine-readable:
`writes_per_pod_scale=<x> writes_per_pod_update=<y> scale_ready_s=<t1> update_ready_s=<t2>`
(`n/a` for a workload without an update phase).

Each `bench_<workload>` module describes its workload as a `Workload` and calls `main`.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.metrics import REST_CLIENT_REQUESTS
from kruise.kube.resources import ResourceRef
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.controllers import podreadiness

NAMESPACE = "default"
NAME = "bench"
IMAGE = "nginx:1.25"
UPDATED_IMAGE = "nginx:1.26"

Obj = dict[str, Any]


@dataclass(frozen=True)
class Workload:
    """What a benchmark needs to know about one pod-creating workload kind.

    `manifest(pods)` is the object to create (named `NAME`, image `IMAGE`; the template carries the
    readiness gates kruise-webhook would add, since the sandbox runs without kruise); `scaled(obj,
    pods)` says the scale phase is done; `updated(obj, pods, generation)` says the update to the
    template's first image is done, None for a workload that runs to completion instead.
    `nodes_follow_pods`: one pod per node (DaemonSet, BroadcastJob), so N pods need N nodes.
    """

    kind: str
    resource: ResourceRef
    controller: ControllerSetup
    manifest: Callable[[int], Obj]
    scaled: Callable[[Obj, int], bool]
    updated: Callable[[Obj, int, int], bool] | None = None
    nodes_follow_pods: bool = False
    scale_phase: str = "scale 0 -> {pods}"


def start_sandbox(
    kubeconfig: Path, nodes: int, speed: float, extra: Sequence[str] = ()
) -> subprocess.Popen[str]:
    """`extra`: more `kruise sandbox up` flags (e.g. the built-in controllers' `--kube-api-qps`)."""
    kruise = Path(sys.executable).parent / "kruise"
    process = subprocess.Popen(
        [str(kruise), "sandbox", "up", "--no-kruise", "--nodes", str(nodes), "--speed", str(speed),
         "--kubeconfig", str(kubeconfig), *extra],
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


def request_resource(path: str) -> str:
    """`pods`, `pods/status`, `clonesets/status`, `events`, ...: the resource (and subresource) a
    request path names, without API group, namespace or object name."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    parts = parts[2:] if parts[:1] == ["api"] else parts[3:] if parts[:1] == ["apis"] else parts
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    return "/".join(parts[:1] + parts[2:3])


class AttributingClient(Client):
    """The manager's client, also counting its non-GET requests by component and by request."""

    writes: Counter[str]
    requests: Counter[tuple[str, str, str]]  # (component, method, resource)

    async def _send(self, method: str, path: str, **kwargs):  # type: ignore[no-untyped-def]
        if method != "GET":
            self.writes[COMPONENT.get()] += 1
            self.requests[(COMPONENT.get(), method, request_resource(path))] += 1
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


class _Phase:
    """The manager's writes during one phase, minus the benchmark's own write that started it."""

    def __init__(self, client: AttributingClient) -> None:
        self.client = client
        self.methods = requests_by_method(client.host)
        self.components = client.writes.copy()
        self.requests = client.requests.copy()

    def close(self, label: str, seconds: float, done: str) -> int:
        used = requests_by_method(self.client.host) - self.methods
        components = self.client.writes - self.components
        components["events+bench"] -= 1
        requests = self.client.requests - self.requests
        print(f"{label}: {seconds:.1f} s until {done}; {report(used)}")
        print(f"  writes by component: {dict(sorted((+components).items()))}")
        for (component, method, what), n in sorted(requests.items()):
            print(f"    {component:>14} {method:<6} {what:<28} {n}")
        # the benchmark's own create/update of the workload went through the same client
        return writes_of(used) - 1


async def run(workload: Workload, pods: int, nodes: int, speed: float, qps: float, burst: int) -> str:
    with TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sandbox = start_sandbox(kubeconfig, nodes, speed)
        try:
            client = await AttributingClient.from_kubeconfig(kubeconfig, qps=qps, burst=burst)
            client.writes, client.requests = Counter(), Counter()
            ctx = ManagerContext(
                client=client, informers=SharedInformerFactory(client), feature_gates=FeatureGates(env={})
            )
            controllers = {
                workload.controller.name: workload.controller.build(ctx),
                "podreadiness": podreadiness.SETUP.build(ctx),
            }
            ctx.informers.start()
            await ctx.informers.wait_for_cache_sync(60)
            for name, c in controllers.items():
                contextvars.Context().run(_start_as, name, c)
            watched = ctx.informers.informer(workload.resource)

            async def until(done: Callable[[Obj], bool]) -> float:
                start = time.monotonic()
                while True:
                    obj = watched.get(f"{NAMESPACE}/{NAME}")
                    if obj is not None and done(obj):
                        return time.monotonic() - start
                    await asyncio.sleep(0.05)

            print(f"{workload.kind} pods={pods} nodes={nodes} speed={speed} qps={qps} burst={burst}")
            phase = _Phase(client)
            created = await client.create(workload.resource, workload.manifest(pods))
            scale_s = await until(lambda o: workload.scaled(o, pods))
            await settle(client)
            label = workload.scale_phase.format(pods=pods)
            scale_writes = phase.close(label, scale_s, "done")

            update_writes: int | None = None
            update_s: float | None = None
            if workload.updated is not None:
                updated = workload.updated
                phase = _Phase(client)
                body = copy.deepcopy(watched.get(f"{NAMESPACE}/{NAME}") or created)
                body["spec"]["template"]["spec"]["containers"][0]["image"] = UPDATED_IMAGE
                target = (await client.update(workload.resource, body))["metadata"]["generation"]
                update_s = await until(lambda o: updated(o, pods, target))
                await settle(client)
                update_writes = phase.close(f"update of {pods}", update_s, "all updated and ready")
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
    return summary(pods, scale_writes, scale_s, update_writes, update_s)


def summary(
    pods: int, scale_writes: int, scale_s: float, update_writes: int | None, update_s: float | None
) -> str:
    """The machine-readable last line; `n/a` for the update fields of a workload without one."""
    per_pod_update = "n/a" if update_writes is None else f"{update_writes / pods:.2f}"
    update_time = "n/a" if update_s is None else f"{update_s:.1f}"
    return (
        f"writes_per_pod_scale={scale_writes / pods:.2f} writes_per_pod_update={per_pod_update} "
        f"scale_ready_s={scale_s:.1f} update_ready_s={update_time}"
    )


def main(workload: Workload, argv: list[str] | None, doc: str) -> None:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000, help="pods to create (then update, if any)")
    if not workload.nodes_follow_pods:
        parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--speed", type=float, default=100.0)
    parser.add_argument("--qps", type=float, default=20.0)
    parser.add_argument("--burst", type=int, default=30)
    args = parser.parse_args(argv if argv is not None else [])
    nodes = args.pods if workload.nodes_follow_pods else args.nodes
    print(asyncio.run(run(workload, args.pods, nodes, args.speed, args.qps, args.burst)))


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}
