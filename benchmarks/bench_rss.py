"""Resident memory and cache-sync time of the real kruise-manager and kruise-webhook at 100k pods (issue 27).

The API emulator runs in its own process (`python -m kruise.sandbox.apiserver --allow-bulk-load`) with
the repository's CRDs; no simulator runs, so no pod is created by a kubelet. Instead the cluster is
loaded through the emulator's benchmark-only bulk-load path (`sandbox/apiserver/bulkload.py`): 100
Nodes, `--pods / --per-cloneset` CloneSets (defaulted as kruise-webhook defaults them) over 10
namespaces, each with its ControllerRevision, its pods (owned by it, Running and Ready, labelled with
the revision's hash, two containers, the readiness gate, conditions and container statuses, the
service-account volume) and a status computed from them by the controller's own status function, so
a restarted manager finds a settled cluster and has nothing to write.

Each process is started the way `kruise sandbox up` starts it (`kruise.cli.stack`'s argv, leader
election in kruise-system), first against the empty cluster (the anchor: the same binaries, the same
CRDs, no workload) and then against the loaded one; webhook first, then manager. Caches synced is
the log line each process writes once every informer has listed: `kruise-webhook serving` and the
manager's `controllers started` (its leader waits for the cache sync before starting controllers);
the sync time runs from spawning the process to that line. RSS is VmRSS from /proc/<pid>/status at
that moment and again once the manager has settled (every workqueue empty and no worker busy on
three scrapes of its /metrics in a row); peak is VmHWM. The manager's API writes while settling are
counted from its `rest_client_requests_total` (a settled cluster should need none).

The last line is machine-readable: `manager_rss_mib_<n>=... manager_sync_s_<n>=... webhook_rss_mib_<n>=...`
(settled RSS; issue 27's goals at 100k: manager <= 512 MiB, sync <= 60 s).

Run: `python -m benchmarks rss [--pods 100000] [--per-cloneset 100]` (10k takes about a minute; 100k
needs a few GiB, most of it the emulator's).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import yaml

from benchmarks import pyspy
from kruise.api import cloneset as cloneset_api
from kruise.control.cloneset import conditions as cloneset_conditions
from kruise.control.cloneset.status import compute_status
from kruise.control.common.revision import new_cloneset_revision, revision_labels_for_pod

NAMESPACES = 10
NODES = 100
GOAL_MANAGER_MIB = 512
GOAL_SYNC_S = 60
LOAD_CHUNK = 2_000  # objects per bulk-load request
READY_TIMEOUT = 600.0
SETTLE_POLLS = 3
MANAGER_READY = "controllers started"
WEBHOOK_READY = "kruise-webhook serving"

Obj = dict[str, Any]


# ------------------------------------------------------------------------------------------ arithmetic
def layout(pods: int, per_cloneset: int) -> int:
    """How many CloneSets hold `pods` pods at `per_cloneset` each; refuses what does not divide."""
    if per_cloneset < 1:
        raise ValueError(f"--per-cloneset {per_cloneset}: must be at least 1")
    if pods < 1:
        raise ValueError(f"--pods {pods}: must be at least 1")
    if pods % per_cloneset:
        raise ValueError(f"--pods {pods}: must be a multiple of --per-cloneset {per_cloneset}")
    return pods // per_cloneset


def vm_kib(status_text: str, field_name: str) -> int:
    """A `VmRSS:    123456 kB`-style line of /proc/<pid>/status, in KiB."""
    match = re.search(rf"^{field_name}:\s+(\d+) kB$", status_text, re.MULTILINE)
    if match is None:
        raise ValueError(f"/proc status: no {field_name} line")
    return int(match.group(1))


def metric_sum(text: str, name: str, label: str = "") -> float:
    """The sum of every sample of metric `name` in Prometheus text (`label`: only samples whose
    labels contain it, e.g. 'method="GET"')."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        metric = head.split("{", 1)[0]
        if metric == name and label in head:
            total += float(value)
    return total


def size_label(count: int) -> str:
    """`100k` for 100,000 pods, `1500` for 1,500."""
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


@dataclass
class Figures:
    """One process in one phase (anchor or loaded)."""

    sync_s: float
    rss_synced_kib: int
    rss_settled_kib: int = 0
    peak_kib: int = 0
    writes: float = 0.0  # API writes while settling (manager only)

    @property
    def rss_mib(self) -> float:
        return self.rss_settled_kib / 1024


def ratio(value: float, anchor: float) -> str:
    return f"{value / anchor:.2f}x" if anchor else "-"


def summary(pods: int, loaded: dict[str, Figures], anchor: dict[str, Figures]) -> str:
    """The machine-readable last line: settled RSS (MiB) and sync seconds of each process at this size,
    and each against its anchor run."""
    size = size_label(pods)
    parts = []
    for name in ("manager", "webhook"):
        got, base = loaded[name], anchor[name]
        parts += [
            f"{name}_rss_mib_{size}={got.rss_mib:.0f}",
            f"{name}_sync_s_{size}={got.sync_s:.1f}",
            f"{name}_rss_ratio_{size}={got.rss_settled_kib / base.rss_settled_kib:.2f}",
            f"{name}_peak_mib_{size}={got.peak_kib / 1024:.0f}",
        ]
    return " ".join(parts)


# ------------------------------------------------------------------------------------------ objects
def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def namespace(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(i: int, created: str) -> Obj:
    name = f"node-{i}"
    capacity = {"cpu": "32", "memory": "131858436Ki", "pods": "1100", "ephemeral-storage": "514937088Ki"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-8000-{i:012x}",
            "creationTimestamp": created,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": f"zone-{i % 3}",
            },
        },
        "spec": {"podCIDR": f"10.{i // 250}.{i % 250}.0/24"},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": created,
                    "lastTransitionTime": created,
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"192.168.{i // 250}.{i % 250}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.36.0",
                "containerRuntimeVersion": "containerd://2.1.0",
                "osImage": "Debian GNU/Linux 13",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def cloneset(index: int, ns: str, replicas: int, created: str) -> Obj:
    """A CloneSet as stored after kruise-webhook's defaulting: two containers, probes, resources."""
    name = f"web-{index}"
    raw = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"0c0c0c0c-{index:04x}-4000-8000-{index:012x}",
            "creationTimestamp": created,
            "generation": 1,
            "labels": {"app": name},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {
                    "labels": {"app": name, "tier": "frontend"},
                    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
                },
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.27",
                            "ports": [{"containerPort": 80, "name": "http"}],
                            "env": [
                                {
                                    "name": "POD_NAME",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                }
                            ],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"cpu": "500m", "memory": "256Mi"},
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/healthz", "port": 80},
                                "periodSeconds": 10,
                            },
                        },
                        {
                            "name": "log-agent",
                            "image": "busybox:1.36",
                            "command": ["sh", "-c", "tail -F /var/log/app/access.log"],
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                            "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}],
                        },
                    ],
                    "volumes": [{"name": "logs", "emptyDir": {}}],
                },
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"},
        },
    }
    model = cloneset_api.CloneSet.model_validate(raw)
    cloneset_api.set_defaults(model)
    return model.to_dict()


def pod(owner: Obj, revision: str, ordinal: int, pod_index: int, created: datetime) -> Obj:
    """One Running and Ready pod of `owner` as the kubelet and kruise-webhook leave it."""
    meta, template = owner["metadata"], owner["spec"]["template"]
    suffix = f"{pod_index:05x}"
    name = f"{meta['name']}-{suffix}"
    started, ready = stamp(created + timedelta(seconds=2)), stamp(created + timedelta(seconds=8))
    labels = {
        **template["metadata"].get("labels", {}),
        **revision_labels_for_pod(revision),
        "apps.kruise.io/cloneset-instance-id": suffix,
    }
    spec = dict(template["spec"])
    token_volume = f"kube-api-access-{suffix}"
    mount = {
        "name": token_volume,
        "readOnly": True,
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
    }
    spec["containers"] = [
        {**c, "volumeMounts": [*c.get("volumeMounts", []), mount]} for c in spec["containers"]
    ]
    spec["volumes"] = [
        *spec.get("volumes", []),
        {
            "name": token_volume,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                ],
            },
        },
    ]
    node_index = pod_index % NODES
    spec.update(
        nodeName=f"node-{node_index}",
        serviceAccountName="default",
        serviceAccount="default",
        readinessGates=[{"conditionType": "InPlaceUpdateReady"}],
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        priority=0,
        hostname=name,
        tolerations=[
            {
                "key": f"node.kubernetes.io/{t}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for t in ("not-ready", "unreachable")
        ],
    )
    ip = f"10.{pod_index // 62500}.{pod_index // 250 % 250}.{pod_index % 250}"
    statuses = [
        {
            "name": c["name"],
            "ready": True,
            "restartCount": 0,
            "started": True,
            "image": c["image"],
            "imageID": f"docker.io/library/{c['image'].split(':')[0]}@sha256:{(pod_index * 31 + n):064x}",
            "containerID": f"containerd://{(pod_index * 2 + n):064x}",
            "state": {"running": {"startedAt": started}},
        }
        for n, c in enumerate(spec["containers"])
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": dict(template["metadata"].get("annotations", {})),
            "uid": f"0d0d0d0d-{ordinal:04x}-4000-8000-{pod_index:012x}",
            "creationTimestamp": stamp(created),
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "CloneSet",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "qosClass": "Burstable",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "hostIP": f"192.168.{node_index // 250}.{node_index % 250}",
            "startTime": started,
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ready}
                for t in (
                    "InPlaceUpdateReady",
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": statuses,
        },
    }


def workload(index: int, ns: str, replicas: int, first_pod: int, now: datetime) -> Iterator[Obj]:
    """A CloneSet, its ControllerRevision and its pods, with the status its controller would write."""
    created = now - timedelta(hours=1)
    owner = cloneset(index, ns, replicas, stamp(created))
    revision = new_cloneset_revision(owner, 1, 0)
    name = revision["metadata"]["name"]
    revision["metadata"]["uid"] = f"0e0e0e0e-{index:04x}-4000-8000-{index:012x}"
    pods = [pod(owner, name, index, first_pod + i, created + timedelta(seconds=i)) for i in range(replicas)]
    status: Obj = {"conditions": []}
    status.update(compute_status(owner, pods, name, name, 0, now))
    cloneset_conditions.apply_progressing(owner, status, now)
    owner["status"] = status
    yield owner
    yield revision
    yield from pods


def cluster_objects(pods: int, per_cloneset: int) -> Iterator[Obj]:
    """Namespaces, Nodes, then each CloneSet before its revision and pods (an owner must exist first,
    or the emulator's garbage collector takes its dependents)."""
    now = datetime.now(UTC).replace(microsecond=0)
    created = stamp(now - timedelta(days=1))
    for i in range(NAMESPACES):
        yield namespace(f"bench-{i}")
    for i in range(NODES):
        yield node(i, created)
    for index in range(layout(pods, per_cloneset)):
        yield from workload(index, f"bench-{index % NAMESPACES}", per_cloneset, index * per_cloneset, now)


# ------------------------------------------------------------------------------------------ processes
@dataclass
class Process:
    """A child process whose output lines a thread reads, noting when each line arrived."""

    name: str
    popen: subprocess.Popen[str]
    started: float
    lines: queue.Queue[tuple[float, str] | None] = field(default_factory=queue.Queue)
    tail: list[str] = field(default_factory=list)

    @classmethod
    def spawn(cls, name: str, argv: list[str], env: dict[str, str] | None = None) -> Process:
        started = time.monotonic()
        popen = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        process = cls(name, popen, started)
        threading.Thread(target=process._pump, daemon=True).start()
        return process

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))
        self.lines.put(None)

    def wait_for(self, text: str, timeout: float) -> tuple[float, str]:
        """When the first line containing `text` arrived (monotonic) and the line; fails with the tail."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(
                    f"{self.name}: no {text!r} within {timeout}s:\n" + "\n".join(self.tail)
                ) from None
            if item is None:
                code = self.popen.wait()
                raise RuntimeError(f"{self.name} exited ({code}) before {text!r}:\n" + "\n".join(self.tail))
            self.tail = [*self.tail[-40:], item[1]]
            if text in item[1]:
                return item

    def status(self) -> str:
        return Path(f"/proc/{self.popen.pid}/status").read_text()

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


class Emulator:
    """`python -m kruise.sandbox.apiserver --allow-bulk-load` and an HTTP client on its kubeconfig."""

    def __init__(self, workdir: Path) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        self.process = Process.spawn(
            "emulator",
            [
                sys.executable,
                "-m",
                "kruise.sandbox.apiserver",
                "--kubeconfig",
                str(self.kubeconfig),
                "--allow-bulk-load",
            ],
        )
        self.process.wait_for("ready:", 60)
        config = yaml.safe_load(self.kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        ca = workdir / "ca.crt"
        ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
        self.http = httpx.Client(
            base_url=cluster["server"],
            verify=str(ca),
            timeout=600,
            headers={"Authorization": f"Bearer {config['users'][0]['user']['token']}"},
        )

    def load(self, objects: Iterator[Obj]) -> int:
        """Bulk-load `objects` in chunks; returns how many were stored."""
        stored, chunk = 0, []
        for obj in objects:
            chunk.append(orjson.dumps(obj))
            if len(chunk) == LOAD_CHUNK:
                stored += self._post(chunk)
                chunk = []
        return stored + (self._post(chunk) if chunk else 0)

    def _post(self, lines: list[bytes]) -> int:
        response = self.http.post("/sandbox/bulk-load", content=b"\n".join(lines))
        response.raise_for_status()
        return int(response.json()["loaded"])

    def close(self) -> None:
        self.http.close()
        self.process.stop()


def component_argv(kind: str, kubeconfig: Path, workdir: Path) -> list[str]:
    """kruise-webhook's or kruise-manager's argv exactly as `kruise sandbox up` builds it."""
    from kruise.cli import stack

    component = stack.webhook_component(workdir / "certs") if kind == "webhook" else stack.manager_component()
    argv = [arg.format(kubeconfig=kubeconfig, server="", cri_socket_dir="") for arg in component.argv]
    # measured, not gated: either process's own 120 s default would end a slow 100k run without a figure
    return [*argv, "--cache-sync-timeout", str(READY_TIMEOUT)]


def metrics_url(argv: list[str]) -> str:
    return f"http://{argv[argv.index('--metrics-addr') + 1]}/metrics"


def scrape(url: str) -> str:
    return httpx.get(url, timeout=120).text


def settle(url: str, timeout: float) -> float:
    """Seconds until the manager's workqueues are empty and no worker is busy on SETTLE_POLLS scrapes in
    a row (polled once a second, failing after `timeout`)."""
    started, calm = time.monotonic(), 0
    while calm < SETTLE_POLLS:
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"kruise-manager did not settle within {timeout}s")
        text = scrape(url)
        busy = metric_sum(text, "workqueue_depth") + metric_sum(text, "controller_runtime_active_workers")
        calm = calm + 1 if busy == 0 else 0
        time.sleep(1.0)
    return time.monotonic() - started


def writes(text: str) -> float:
    total = metric_sum(text, "rest_client_requests_total")
    return total - metric_sum(text, "rest_client_requests_total", 'method="GET"')


def phase(
    emulator: Emulator, workdir: Path, settle_timeout: float, profile: Path | None = None
) -> dict[str, Figures]:
    """Start kruise-webhook, then kruise-manager; measure each at its cache sync and once settled.

    `profile`: a directory for py-spy recordings of each process and of the emulator from the process's
    spawn to its cache sync (`<kind>.txt`, `emulator-during-<kind>.txt`)."""
    figures: dict[str, Figures] = {}
    running: dict[str, Process] = {}
    try:
        for kind, ready in (("webhook", WEBHOOK_READY), ("manager", MANAGER_READY)):
            argv = component_argv(kind, emulator.kubeconfig, workdir)
            env = {"KUBECONFIG": str(emulator.kubeconfig)}
            running[kind] = process = Process.spawn(f"kruise-{kind}", argv, env)
            recordings = []
            if profile is not None:
                recordings = [
                    pyspy.Recording(process.popen.pid, profile / f"{kind}.txt"),
                    pyspy.Recording(emulator.process.popen.pid, profile / f"emulator-during-{kind}.txt"),
                ]
            try:
                at, _ = process.wait_for(ready, READY_TIMEOUT)
            finally:
                for recording in recordings:
                    recording.stop()
            figures[kind] = Figures(at - process.started, vm_kib(process.status(), "VmRSS"))
        url = metrics_url(component_argv_of(running["manager"]))
        before = writes(scrape(url))
        settle(url, settle_timeout)
        figures["manager"].writes = writes(scrape(url)) - before
        for kind, process in running.items():
            status = process.status()
            figures[kind].rss_settled_kib = vm_kib(status, "VmRSS")
            figures[kind].peak_kib = vm_kib(status, "VmHWM")
    finally:
        for process in reversed(running.values()):
            process.stop()
    return figures


def component_argv_of(process: Process) -> list[str]:
    return list(process.popen.args)  # type: ignore[arg-type]


def setup_cluster(emulator: Emulator) -> None:
    """The CRDs (established) and the namespaces kruise runs in, as the chart creates them."""
    from kruise.cli.stack import DAEMON_CONFIG_NAMESPACE, KRUISE_NAMESPACE
    from kruise.sandbox.cluster import DEFAULT_CRD_DIR, apply_crds, load_crds

    asyncio.run(apply_crds(emulator.kubeconfig, load_crds(DEFAULT_CRD_DIR), timeout=60))
    emulator.load(iter([namespace(KRUISE_NAMESPACE), namespace(DAEMON_CONFIG_NAMESPACE)]))


def report(
    pods: int, loaded: dict[str, Figures], anchor: dict[str, Figures], load_s: float, emulator_kib: int
) -> None:
    print(
        "anchor: the same binaries against the same emulator with only CRDs and kruise's namespaces (0 pods)"
    )
    print(
        f"loaded {pods:,} pods in {load_s:.1f}s (bulk load, not measured below); "
        f"the emulator's own RSS {emulator_kib / 1024:,.0f} MiB"
    )
    print(
        f"{'process':<16}{'phase':<8}{'sync s':>8}{'RSS synced':>12}{'RSS settled':>13}{'peak':>9}"
        f"{'RSS vs anchor':>15}{'sync vs anchor':>16}{'writes':>8}"
    )
    for kind in ("manager", "webhook"):
        for label, figures in (("anchor", anchor), (size_label(pods), loaded)):
            f, a = figures[kind], anchor[kind]
            print(
                f"{'kruise-' + kind:<16}{label:<8}{f.sync_s:>8.1f}{f.rss_synced_kib / 1024:>10.0f}Mi"
                f"{f.rss_mib:>11.0f}Mi{f.peak_kib / 1024:>7.0f}Mi"
                f"{ratio(f.rss_settled_kib, a.rss_settled_kib):>15}"
                f"{ratio(f.sync_s, a.sync_s):>16}{f.writes if kind == 'manager' else 0:>8.0f}"
            )
    manager = loaded["manager"]
    print(
        f"goals at 100k: manager RSS <= {GOAL_MANAGER_MIB} MiB (here {manager.rss_mib:.0f}), "
        f"sync <= {GOAL_SYNC_S} s (here {manager.sync_s:.1f})"
    )
    print(summary(pods, loaded, anchor))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks rss", description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000, help="pods in the loaded cluster")
    parser.add_argument("--per-cloneset", type=int, default=100, help="pods per CloneSet")
    parser.add_argument(
        "--settle-timeout", type=float, default=600.0, help="seconds the manager may take to settle"
    )
    parser.add_argument(
        "--py-spy",
        type=Path,
        metavar="DIR",
        help="record each loaded process and the emulator with py-spy until that process's cache sync",
    )
    args = parser.parse_args(argv)
    try:
        layout(args.pods, args.per_cloneset)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv or [])
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        workdir = Path(tmp)
        emulator = Emulator(workdir)
        try:
            setup_cluster(emulator)
            anchor = phase(emulator, workdir / "anchor", args.settle_timeout)
            started = time.monotonic()
            emulator.load(cluster_objects(args.pods, args.per_cloneset))
            load_s = time.monotonic() - started
            loaded = phase(emulator, workdir / "loaded", args.settle_timeout, args.py_spy)
            emulator_kib = vm_kib(emulator.process.status(), "VmRSS")
        finally:
            emulator.close()
    report(args.pods, loaded, anchor, load_s, emulator_kib)


if __name__ == "__main__":
    main(sys.argv[1:])
