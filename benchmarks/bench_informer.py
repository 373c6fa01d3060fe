"""Informer memory per cached pod, full objects against each process's projection, at 10k and 100k pods.

Pods arrive as JSON bytes (as from the apiserver), are parsed with orjson and cached the way the
informer caches them: the anchor is the full object minus managedFields (the cache before
projections); then kruise-manager's pod projection with every controller running (the union of their
`pod_fields`) and kruise-webhook's (kruise.kube.projection: kept fields only, interned, frozen,
pod-template parts shared between replicas, per-pod conditions and container statuses as records).
Every variant goes into a Store with the standard indexes (namespace, owner UID, node name);
tracemalloc counts what stays allocated, so the figures are the cache's own bytes, not the process's
RSS (`--rss` adds that too, per row in a fresh process). The last line is the issue-27 figure: the
larger projection's bytes per pod at each size.

Pods are made the way the API emulator makes them (its defaulting and service-account admission:
every pod mounts its own `kube-api-access-<5 random>` token volume in every container), then differ
from the next where real pods do (name, uid, resourceVersion, IPs, container IDs, instance-id label,
token volume name, and every timestamp, one second apart); pods of one CloneSet (100) share their
template, owner and revision, as replicas do.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from kruise.control.common.revision import revision_labels_for_pod
from kruise.kube.informer import strip_managed_fields
from kruise.kube.resources import PODS as POD_RESOURCE
from kruise.kube.store import STANDARD_INDEXERS, Store
from kruise.manager import cachefields as manager_fields
from kruise.manager.controllers import discover
from kruise.sandbox.apiserver import defaults, priority, serviceaccounts
from kruise.webhook import cachefields as webhook_fields

COUNTS = (10_000, 100_000)
EPOCH = 1_795_820_400  # 2026-11-27T23:00:00Z


def stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH + seconds))


PER_OWNER = 100  # pods per CloneSet, as in issue 27's 1000 CloneSets x 100


def template(owner: int) -> dict[str, Any]:
    """A CloneSet's pod template as a user writes it (two containers, probes, env, resources, a
    log volume), plus the readiness gate kruise-webhook injects."""
    app = f"web-{owner}"
    return {
        "metadata": {
            "labels": {"app": app, "tier": "frontend"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        },
        "spec": {
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "env": [
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "APP", "value": app},
                    ],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                    },
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 80}},
                    "livenessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 5},
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
    }


def _account(namespace: str, name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}}


def pod_object(i: int) -> dict[str, Any]:
    """Pod `i` as the apiserver stores it once its kubelet reported it Running and Ready.

    The template goes through the emulator's own create path for pods (`sandbox.apiserver.defaults.pod`:
    field defaults, default tolerations, QoS; `priority.admit_pod`: priority 0 without a class;
    `serviceaccounts.admit_pod`: the `kube-api-access-<5 random>` projected volume mounted in every
    container, a name of its own per pod), then gets what differs per pod on a real cluster: name,
    uid, resourceVersion, the CloneSet's instance-id label, IPs, container IDs and every timestamp
    (one second apart)."""
    owner = i // PER_OWNER
    name = f"web-{owner}-{i:05x}"
    created, started, ready = stamp(i), stamp(i + 1), stamp(i + 5)
    namespace = f"team-{owner % 20}"
    base = template(owner)
    labels = {
        **base["metadata"]["labels"],
        **revision_labels_for_pod(f"web-{owner}-{hashlib.sha256(bytes(owner)).hexdigest()[:10]}"),
        "apps.kruise.io/cloneset-instance-id": f"{i:05x}",
    }
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"web-{owner}-",
            "namespace": namespace,
            "labels": labels,
            "annotations": base["metadata"]["annotations"],
        },
        "spec": base["spec"],
    }
    defaults.pod(pod)
    serviceaccounts.admit_pod(pod, _account, random.Random(i))
    priority.admit_pod(pod, lambda name: None, list)
    meta, spec = pod["metadata"], pod["spec"]
    meta.update(
        uid=f"6f1c2f3e-{i:04x}-4c1b-9a7e-{i:012x}",
        resourceVersion=str(100_000 + i),
        creationTimestamp=created,
        ownerReferences=[
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "name": f"web-{owner}",
                "uid": f"0a0b0c0d-{owner:04x}-4000-8000-000000000000",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        managedFields=[
            {
                "manager": "kruise-manager",
                "operation": "Update",
                "apiVersion": "v1",
                "time": created,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {f"f:{k}": {} for k in labels}}, "f:spec": {}},
            },
            {
                "manager": "kubelet",
                "operation": "Update",
                "apiVersion": "v1",
                "time": ready,
                "fieldsType": "FieldsV1",
                "subresource": "status",
                "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:podIP": {}}},
            },
        ],
    )
    spec["nodeName"] = f"node-{i % 100}"
    ip = f"10.{i // 62500}.{i // 250 % 250}.{i % 250}"
    pod["status"].update(
        phase="Running",
        podIP=ip,
        podIPs=[{"ip": ip}],
        hostIP=f"192.168.0.{i % 100}",
        hostIPs=[{"ip": f"192.168.0.{i % 100}"}],
        startTime=started,
        conditions=[
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
        containerStatuses=[
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": f"docker.io/library/{c['image'].split(':')[0]}@sha256:{n + 1:064x}",
                "ready": True,
                "restartCount": 0,
                "started": True,
                "lastState": {},
                "containerID": f"containerd://{i * 2 + n:064x}",
                "state": {"running": {"startedAt": started}},
                "resources": c["resources"],
                "allocatedResources": c["resources"]["requests"],
            }
            for n, c in enumerate(spec["containers"])
        ],
    )
    return pod


def pod_json(i: int) -> bytes:
    return orjson.dumps(pod_object(i))


Cache = Callable[[dict[str, Any]], dict[str, Any]]


def wire(count: int) -> Iterator[bytes]:
    return (pod_json(i) for i in range(count))


def measure(cached_form: Cache, count: int) -> tuple[float, float]:
    """Bytes per pod retained by a store (with the standard indexes) of `count` pods, and pods/s."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    store = Store(STANDARD_INDEXERS)
    for data in wire(count):
        store.upsert(cached_form(orjson.loads(data)))
    elapsed = time.perf_counter() - started
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(store) == count
    return used / count, count / elapsed


def rss() -> int:
    """The process's resident set, in bytes (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure_rss(cached_form: Cache, count: int) -> float:
    """Bytes per pod the process's RSS grows by while a store of `count` pods is built (no tracemalloc:
    what the OS sees, allocator slack included; run in a fresh process, see `rss_in_child`)."""
    gc.collect()
    before = rss()
    store = Store(STANDARD_INDEXERS)
    for data in wire(count):
        store.upsert(cached_form(orjson.loads(data)))
    gc.collect()
    grown = rss() - before
    assert len(store) == count
    return grown / count


def variants() -> list[tuple[str, Cache]]:
    return [
        ("full object (anchor)", strip_managed_fields),
        ("kruise-manager projection", manager_fields.projections(discover())[POD_RESOURCE].apply),
        ("kruise-webhook projection", webhook_fields.projections()[POD_RESOURCE].apply),
    ]


def rss_in_child(variant: int, count: int) -> float:
    """`measure_rss` in a fresh interpreter, so no earlier run's freed memory is reused."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_informer", "--rss-child", f"{variant}:{count}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout
    return float(out.split()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="benchmarks informer", description=__doc__.splitlines()[0])
    parser.add_argument("--pods", default=",".join(map(str, COUNTS)), help="comma-separated cache sizes")
    parser.add_argument(
        "--full-at-every-size",
        action="store_true",
        help="measure the full-object anchor at every size, not only the first (~11 KB/pod: 1.1 GB at 100k)",
    )
    parser.add_argument(
        "--rss",
        action="store_true",
        help="also measure each row's RSS growth per pod in a fresh process without tracemalloc",
    )
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.rss_child:
        variant, count = map(int, args.rss_child.split(":"))
        print(f"{measure_rss(variants()[variant][1], count):.1f}")
        return
    try:
        counts = [int(c) for c in args.pods.split(",")]
    except ValueError:
        parser.error(f"--pods {args.pods!r}: must be comma-separated whole numbers (10000,100000)")
    if any(count < 1 for count in counts):
        parser.error(f"--pods {args.pods!r}: every size must be at least 1")
    sample = [pod_json(i) for i in range(1000)]
    avg_json = sum(map(len, sample)) / len(sample)
    stripped = sum(len(orjson.dumps(strip_managed_fields(orjson.loads(d)))) for d in sample) / len(sample)
    print(f"average pod JSON: {avg_json:,.0f} bytes on the wire, {stripped:,.0f} without managedFields")
    anchor = 0.0
    worst: dict[int, float] = {}
    header = f"{'cache':<28}{'pods':>9}{'bytes/pod':>11}{'vs anchor':>11}{'vs JSON':>9}"
    header += f"{'MiB':>9}{'pods/s':>9}"
    print(header + (f"{'RSS/pod':>9}" if args.rss else ""))
    for v, (name, cached_form) in enumerate(variants()):
        for n, count in enumerate(counts):
            if cached_form is strip_managed_fields and n and not args.full_at_every_size:
                continue
            per_pod, rate = measure(cached_form, count)
            anchor = anchor or per_pod
            if cached_form is not strip_managed_fields:
                worst[count] = max(worst.get(count, 0.0), per_pod)
            print(
                f"{name:<28}{count:>9,}{per_pod:>11,.0f}{per_pod / anchor:>10.2f}x{per_pod / stripped:>8.2f}x"
                f"{per_pod * count / 2**20:>9,.1f}{rate:>9,.0f}"
                + (f"{rss_in_child(v, count):>9,.0f}" if args.rss else "")
            )
    print("bytes/pod: what a Store with the namespace, owner-UID and node-name indexes retains per pod")
    print("(tracemalloc, which also slows pods/s); vs JSON: against the pod's JSON without managedFields.")
    if args.rss:
        print("RSS/pod: the process's resident set growth per pod, in a fresh process without tracemalloc.")
    print("Last line: the larger of the two projections at each size (issue 27 goal: <= 3000).")
    print(" ".join(f"informer_bytes_per_pod_{size_label(count)}={worst[count]:.0f}" for count in counts))


def size_label(count: int) -> str:
    """`10k` for 10,000 pods, `1500` for 1,500."""
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


if __name__ == "__main__":
    main(sys.argv[1:])
