"""Admission latency for pod CREATE through kruise-webhook, beside a bare uvicorn JSON echo.

All servers run in their own process over the same TLS setup, so the difference between the rows
is what the admission framework and handlers cost on top of uvicorn + TLS + JSON. The pod is
owned by a CloneSet and asks for Ordered launch priority, so the readiness gate and barrier env
mutations run and a JSONPatch is computed. The `sidecar10` server additionally holds 10 SidecarSets
that all match the pod (issue 5's scenario): each injects a container with a volume, half share the
app's volumeMounts, half transfer an env, one is hot-upgraded.

Like with like: every server is one uvicorn process (one worker) with the same options as
kruise-webhook's own server (uvloop and httptools when installed, as `uvicorn[standard]` installs
them), the same certificate, and the same client (one httpx process with one connection per
concurrent client). The machine is shared, so the servers take turns within each level, in
alternating order over `--rounds` rounds, and the figures pool every round; each is printed as a
ratio against the echo measured in the same run. The last line is machine-readable:
`admission_p99_ratio_10=<x> admission_throughput_ratio_10=<y> ...` (the `webhook` server against
the echo; `sidecar10_*` the same for the SidecarSet scenario).

Run: `python -m benchmarks webhook [--rounds 3] [--scale 1.0] [--no-sidecar10]`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import socket
import ssl
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import orjson

LEVELS = ((1, 400), (10, 2000), (100, 4000))  # (concurrent clients, requests per server over all rounds)
ANCHOR = "echo"


def _pod_review() -> bytes:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "demo-abcde",
            "namespace": "default",
            "labels": {"app": "demo"},
            "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"},
            "ownerReferences": [
                {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo", "uid": "u-1",
                 "controller": True, "blockOwnerDeletion": True}
            ],
        },
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "nginx:1.25", "ports": [{"containerPort": 80 + i}],
                 "env": [{"name": "A", "value": "b"}], "resources": {"requests": {"cpu": "100m"}}}
                for i in range(3)
            ],
        },
    }  # fmt: skip
    return orjson.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "bench"},
                "object": pod,
            },
        }
    )


SIDECARSET_COUNT = 10


def _sidecarsets() -> list[dict]:
    """Stored as the mutating webhook would store them: defaulted and hashed."""
    from kruise.api import sidecarset as api
    from kruise.control.sidecarset.hashing import set_hash_annotations

    stored = []
    for i in range(SIDECARSET_COUNT):
        container: dict = {
            "name": f"sidecar{i}", "image": f"registry.local/agent-{i}:1.0",
            "command": ["agent", "--port", str(9000 + i)],
            "volumeMounts": [{"name": f"vol{i}", "mountPath": f"/sidecar/{i}"}],
            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        }  # fmt: skip
        if i % 2:
            container["shareVolumePolicy"] = {"type": "enabled"}
        else:
            container["transferEnv"] = [{"sourceContainerName": "c0", "envName": "A"}]
        if i == 0:
            container["upgradeStrategy"] = {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1.0"}
        model = api.SidecarSet.model_validate({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": f"agent-{i}"},
            "spec": {"selector": {"matchLabels": {"app": "demo"}}, "containers": [container],
                     "volumes": [{"name": f"vol{i}", "emptyDir": {}}],
                     "imagePullSecrets": [{"name": "regcred"}]},
        })  # fmt: skip
        api.set_defaults(model)
        body = model.to_dict()
        set_hash_annotations(body)
        stored.append(body)
    return stored


class _StaticSidecarSets:
    def __init__(self, items: list[dict]) -> None:
        self._items = items

    def list(self) -> list[dict]:
        return self._items

    def get(self, name: str) -> dict | None:
        return next((s for s in self._items if s["metadata"]["name"] == name), None)

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        return {"kubernetes.io/metadata.name": name}

    def configuration(self) -> dict[str, str]:
        return {}


class _NoContents:
    def active_pods(self, namespace: str) -> int:
        return 0

    def bound_pvcs(self, namespace: str) -> int:
        return 0


async def _echo_app(scope, receive, send):  # type: ignore[no-untyped-def]
    """The floor: read the body, parse it, answer with a JSON document of similar size."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    review = orjson.loads(body)
    answer = orjson.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
                           "response": {"uid": review["request"]["uid"], "allowed": True}})  # fmt: skip
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": answer})


def _serve(kind: str, port: int, cert_dir: str) -> None:
    import uvicorn

    if kind in ("webhook", "sidecar10"):
        from kruise.webhook import registry
        from kruise.webhook.app import create_app
        from kruise.webhook.context import WebhookContext

        source = _StaticSidecarSets(_sidecarsets() if kind == "sidecar10" else [])
        context = WebhookContext(namespace_contents=_NoContents(), sidecarsets=source)
        app = create_app(registry.routes(context))
    else:
        app = _echo_app
    uvicorn.run(
        app, host="127.0.0.1", port=port, ssl_certfile=f"{cert_dir}/tls.crt",
        ssl_keyfile=f"{cert_dir}/tls.key", log_level="warning", access_log=False, lifespan="off",
    )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_listening(port: int, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.05)


async def _load(url: str, context: ssl.SSLContext, clients: int, total: int) -> tuple[list[float], float]:
    body = _pod_review()
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(verify=context, limits=limits, timeout=30) as http:
        headers = {"content-type": "application/json"}
        for _ in range(min(clients, 20)):  # warm connections and caches
            (await http.post(url, content=body, headers=headers)).raise_for_status()
        per_client = total // clients

        async def one() -> None:
            for _ in range(per_client):
                started = time.perf_counter()
                resp = await http.post(url, content=body, headers=headers)
                latencies.append(time.perf_counter() - started)
                resp.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return latencies, elapsed


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] * 1000


def _stack() -> str:
    import uvicorn

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn {uvicorn.__version__}, loop {loop}, http {http}, 1 worker per server, TLS, httpx client"


def _ratio(value: float, anchor: float) -> str:
    return f"{value / anchor:.2f}x" if anchor else "-"


async def _measure(
    ports: dict[str, int], context: ssl.SSLContext, clients: int, total: int, rounds: int
) -> dict[str, tuple[list[float], float]]:
    """Each server's latencies and busy seconds at one level, the servers taking turns."""
    kinds = list(ports)
    pooled: dict[str, tuple[list[float], float]] = {kind: ([], 0.0) for kind in kinds}
    per_round = max(clients, total // rounds)
    for round_ in range(rounds):
        for kind in kinds if round_ % 2 == 0 else reversed(kinds):
            path = "/" if kind == ANCHOR else "/mutate-pod"
            latencies, elapsed = await _load(
                f"https://localhost:{ports[kind]}{path}", context, clients, per_round
            )
            pooled[kind][0].extend(latencies)
            pooled[kind] = (pooled[kind][0], pooled[kind][1] + elapsed)
    return pooled


async def _run(cert_dir: Path, ca: bytes, kinds: list[str], rounds: int, scale: float) -> None:
    context = ssl.create_default_context(cadata=ca.decode())
    spawn = multiprocessing.get_context("spawn")
    ports = {kind: _free_port() for kind in kinds}
    procs = [spawn.Process(target=_serve, args=(k, p, str(cert_dir)), daemon=True) for k, p in ports.items()]
    for proc in procs:
        proc.start()
    ratios: dict[str, float] = {}
    try:
        for port in ports.values():
            await _wait_listening(port)
        print(f"{_stack()}; {rounds} rounds, servers alternating; ratios against {ANCHOR} in this run")
        print(
            f"{'server':<10}{'clients':>8}{'requests':>10}{'p50 ms':>10}{'p99 ms':>10}{'req/s':>10}"
            f"{'p50 ratio':>11}{'p99 ratio':>11}{'req/s ratio':>13}"
        )
        for clients, total in LEVELS:
            results = await _measure(ports, context, clients, max(clients, int(total * scale)), rounds)
            anchor = results[ANCHOR]
            a50, a99, arate = _pct(anchor[0], 50), _pct(anchor[0], 99), len(anchor[0]) / anchor[1]
            for kind, (latencies, busy) in results.items():
                p50, p99, rate = _pct(latencies, 50), _pct(latencies, 99), len(latencies) / busy
                print(
                    f"{kind:<10}{clients:>8}{len(latencies):>10}{p50:>10.2f}{p99:>10.2f}{rate:>10.0f}"
                    f"{_ratio(p50, a50):>11}{_ratio(p99, a99):>11}{_ratio(rate, arate):>13}"
                )
                if kind != ANCHOR:
                    name = "admission" if kind == "webhook" else kind
                    ratios[f"{name}_p50_ratio_{clients}"] = p50 / a50
                    ratios[f"{name}_p99_ratio_{clients}"] = p99 / a99
                    ratios[f"{name}_throughput_ratio_{clients}"] = rate / arate
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(10)
    first = [k for k in ("admission_p99_ratio_10", "admission_throughput_ratio_10") if k in ratios]
    rest = sorted(k for k in ratios if k not in first)
    print(" ".join(f"{k}={ratios[k]:.2f}" for k in first + rest))


def main(argv: list[str] | None = None) -> None:
    from kruise.webhook import certs
    from kruise.webhook.certcontroller import write_files

    parser = argparse.ArgumentParser(prog="python -m benchmarks webhook")
    parser.add_argument("--rounds", type=int, default=3, help="turns each server takes per level")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the requests per level")
    parser.add_argument("--no-sidecar10", action="store_true", help="only the echo and the plain pod webhook")
    options = parser.parse_args(argv or [])
    kinds = [ANCHOR, "webhook"] + ([] if options.no_sidecar10 else ["sidecar10"])
    bundle = certs.generate_bundle("localhost")
    with tempfile.TemporaryDirectory() as tmp:
        write_files(Path(tmp), bundle)
        asyncio.run(_run(Path(tmp), bundle.ca_cert, kinds, max(1, options.rounds), options.scale))


if __name__ == "__main__":
    main()
