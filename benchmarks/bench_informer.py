"""Informer memory per cached pod: 10k realistic pods through the store and its indexers.

Pods arrive as JSON bytes (as from the apiserver), are parsed with orjson, lose managedFields as the
informer drops them, and are stored under the standard indexes (namespace, owner UID, node name).
tracemalloc measures what stays allocated.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

import orjson

from kruise.kube.informer import strip_managed_fields
from kruise.kube.store import STANDARD_INDEXERS, Store

PODS = 10_000


def pod_json(i: int) -> bytes:
    owner = f"cs-{i // 50}"
    labels = {
        "app": f"web-{i // 50}",
        "apps.kruise.io/cloneset-instance-id": f"{i:05x}",
        "controller-revision-hash": f"{owner}-7d9f8c6b5",
        "pod-template-hash": "7d9f8c6b5",
        "lifecycle.apps.kruise.io/state": "Normal",
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner}-{i:05x}",
            "namespace": f"team-{i % 20}",
            "uid": f"6f1c2f3e-{i:04x}-4c1b-9a7e-{i:012x}",
            "resourceVersion": str(100_000 + i),
            "creationTimestamp": "2026-11-22T23:00:00Z",
            "labels": labels,
            "annotations": {"apps.kruise.io/inplace-update-grace": '{"revision":"x","containerImages":{}}'},
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "CloneSet",
                    "name": owner,
                    "uid": f"0a0b0c0d-{i // 50:04x}-4000-8000-000000000000",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kruise-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-22T23:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {f"f:{k}": {} for k in labels}}, "f:spec": {}},
                }
            ],
        },
        "spec": {
            "nodeName": f"node-{i % 100}",
            "containers": [
                {
                    "name": "main",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
                    "volumeMounts": [
                        {"name": "kube-api-access", "mountPath": "/var/run/secrets", "readOnly": True}
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]},
                }
            ],
        },
        "status": {
            "phase": "Running",
            "podIP": f"10.0.{i // 250}.{i % 250}",
            "hostIP": f"192.168.0.{i % 100}",
            "startTime": "2026-11-22T23:00:01Z",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-22T23:00:05Z"}
                for t in ("InPlaceUpdateReady", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "image": "nginx:1.27",
                    "imageID": "docker.io/library/nginx@sha256:" + "ab" * 32,
                    "containerID": f"containerd://{i:064x}",
                    "started": True,
                    "state": {"running": {"startedAt": "2026-11-22T23:00:03Z"}},
                }
            ],
        },
    }
    return orjson.dumps(pod)


def measure(with_indexers: bool, wire: list[bytes]) -> tuple[float, float]:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    store = Store(STANDARD_INDEXERS if with_indexers else {})
    for data in wire:
        store.upsert(strip_managed_fields(orjson.loads(data)))
    elapsed = time.perf_counter() - started
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(store) == len(wire)
    return used / len(wire), elapsed


def main() -> None:
    wire = [pod_json(i) for i in range(PODS)]
    avg_json = sum(map(len, wire)) / len(wire)
    plain, _ = measure(False, wire)
    indexed, elapsed = measure(True, wire)
    print(f"pods: {PODS}, average JSON size on the wire: {avg_json:,.0f} bytes (with managedFields)")
    print(f"store only:           {plain:,.0f} bytes/pod  ({plain * PODS / 2**20:,.1f} MiB total)")
    print(f"store + 3 indexers:   {indexed:,.0f} bytes/pod  ({indexed * PODS / 2**20:,.1f} MiB total)")
    print(f"parse+strip+index:    {PODS / elapsed:,.0f} pods/s (under tracemalloc, which slows it)")


if __name__ == "__main__":
    main()
