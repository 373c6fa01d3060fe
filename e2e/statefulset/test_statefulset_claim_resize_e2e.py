"""Advanced StatefulSet claims resized with the rollout, end to end: `kruise sandbox up
--feature-gates StatefulSetAutoResizePVCGate=true` (kruise-webhook and kruise-manager as real
processes over HTTPS), the simulator's `volumes` controller as the provisioner, resizer and kubelet
file-system expansion, and the real kubectl.

A StorageClass of the sandbox's provisioner that allows expansion, a 3-replica set whose claim
template asks 1Gi of it under ``volumeClaimUpdateStrategy: OnPodRollingUpdate``; growing the
template to 2Gi together with an image change grows every claim (``status.capacity`` 2Gi once the
volume and the file system are expanded), each annotated ``apps.kruise.io/owned-by-asts``, with a
``SuccessfulResize`` event, and replaces the pods highest ordinal first, each only after its claim
was resized.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from harness import Cluster, json_documents, kubectl_binary, until

NAME = "claims"
LABEL = f"app={NAME}"
CLASS = "sandbox-expandable"
OWNED_BY = "apps.kruise.io/owned-by-asts"
REPLICAS = 3
CLAIMS = [f"data-{NAME}-{n}" for n in range(REPLICAS)]

STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": CLASS},
    "provisioner": "sandbox.kruise.io/volumes",
    "allowVolumeExpansion": True,
}

STATEFULSET = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": NAME, "namespace": "default"},
    "spec": {
        "replicas": REPLICAS,
        "serviceName": NAME,
        "selector": {"matchLabels": {"app": NAME}},
        "volumeClaimUpdateStrategy": {"type": "OnPodRollingUpdate"},
        "template": {
            "metadata": {"labels": {"app": NAME}},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:alpine",
                        "volumeMounts": [{"name": "data", "mountPath": "/usr/share/nginx/html"}],
                    }
                ]
            },
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": CLASS,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    },
}

GROW_AND_ROLL = [
    {"op": "replace", "path": "/spec/volumeClaimTemplates/0/spec/resources/requests/storage", "value": "2Gi"},
    {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.27"},
]


class Watch:
    """`kubectl get <kind> -l <selector> -w -o json --output-watch-events`: every change of the set's
    pods (or claims) in the order the API server made them, so the order of the replacements is read
    from the stream rather than guessed from samples. Across two streams, the objects'
    ``resourceVersion`` orders the writes (the sandbox, like etcd, has one counter for all kinds)."""

    def __init__(self, cluster: Cluster, kind: str, listed: int) -> None:
        self.cluster, self.kind, self.listed = cluster, kind, listed
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Watch:
        self._process = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(self.cluster.kubeconfig), "get", self.kind,
            "-l", LABEL, "-w", "-o", "json", "--output-watch-events",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self._reader = asyncio.create_task(self._read())
        # the initial list (one ADDED per existing object) says the watch is established
        await until(self._count, lambda n: n >= self.listed, f"the {self.kind} watch's initial list")
        return self

    async def _count(self) -> int:
        return len(self.events)

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async for event in json_documents(self._process.stdout):
            self.events.append((event["type"], event["object"]))

    async def __aexit__(self, *exc: object) -> None:
        assert self._process is not None and self._reader is not None
        with contextlib.suppress(ProcessLookupError):
            self._process.terminate()
        await self._process.wait()
        await self._reader

    def first(self, name: str, holds: Callable[[str, dict[str, Any]], object]) -> int:
        """The resourceVersion of the first event of ``name`` for which ``holds(type, object)``."""
        for kind, obj in self.events:
            if obj["metadata"]["name"] == name and holds(kind, obj):
                return int(obj["metadata"]["resourceVersion"])
        raise AssertionError(f"no {self.kind} event of {name} as expected in {len(self.events)} events")


def removed(uid: str) -> Callable[[str, dict[str, Any]], bool]:
    """The pod of this uid starts terminating (or is deleted)."""
    return lambda kind, pod: (
        pod["metadata"]["uid"] == uid
        and (kind == "DELETED" or bool(pod["metadata"].get("deletionTimestamp")))
    )


def expanded(_: str, claim: dict[str, Any]) -> bool:
    """The volume is 2Gi: only the node's file-system resize left, or done."""
    status = claim.get("status") or {}
    pending = any(c.get("type") == "FileSystemResizePending" for c in status.get("conditions") or [])
    return pending or (status.get("capacity") or {}).get("storage") == "2Gi"


def asked_for_2gi(_: str, claim: dict[str, Any]) -> bool:
    return claim["spec"]["resources"]["requests"]["storage"] == "2Gi"


async def claims(cluster: Cluster) -> dict[str, dict[str, Any]]:
    _, out = await cluster.kubectl("get", "pvc", "-o", "json")
    return {c["metadata"]["name"]: c for c in json.loads(out)["items"] if c["metadata"]["name"] in CLAIMS}


async def live_pods(cluster: Cluster) -> dict[str, dict[str, Any]]:
    _, out = await cluster.kubectl("get", "pods", "-l", LABEL, "-o", "json")
    return {
        p["metadata"]["name"]: p
        for p in json.loads(out)["items"]
        if not p["metadata"].get("deletionTimestamp")
    }


async def capacity(cluster: Cluster, claim: str) -> str:
    _, out = await cluster.kubectl("get", "pvc", claim, "-o", "jsonpath={.status.capacity.storage}")
    return out


async def wait_status(cluster: Cluster, **expected: Any) -> dict[str, Any]:
    """The spec observed, then each status field at its value (kubectl wait, 90 s each)."""
    _, out = await cluster.kubectl("get", "asts", NAME, "-o", "json")
    generation = json.loads(out)["metadata"]["generation"]
    for field, value in {"observedGeneration": generation, **expected}.items():
        await cluster.kubectl(
            "wait", f"asts/{NAME}", f"--for=jsonpath={{.status.{field}}}={value}", "--timeout=90s"
        )
    _, out = await cluster.kubectl("get", "asts", NAME, "-o", "json")
    return json.loads(out)


async def resize_events(cluster: Cluster) -> list[str]:
    _, out = await cluster.kubectl(
        "get",
        "events",
        "--field-selector",
        f"involvedObject.name={NAME},reason=SuccessfulResize",
        "-o",
        "json",
    )
    return sorted(e["message"] for e in json.loads(out)["items"])


async def test_rollout_grows_claims_highest_ordinal_first(kruise_sandbox_gated: Cluster):
    cluster = kruise_sandbox_gated
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(STORAGE_CLASS))
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(STATEFULSET))
    sts = await wait_status(cluster, readyReplicas=REPLICAS, availableReplicas=REPLICAS)
    first_revision = sts["status"]["updateRevision"]
    bound = await until(
        lambda: claims(cluster),
        lambda found: (
            sorted(found) == CLAIMS and all(c["status"].get("phase") == "Bound" for c in found.values())
        ),
        "the 3 claims Bound",
    )
    for name, claim in bound.items():
        assert claim["status"]["capacity"] == {"storage": "1Gi"}, name
        assert claim["spec"]["volumeName"] == f"pvc-{claim['metadata']['uid']}"
        assert OWNED_BY not in (claim["metadata"].get("annotations") or {})
    before = await live_pods(cluster)
    uids = {name: pod["metadata"]["uid"] for name, pod in before.items()}
    assert sorted(uids) == [f"{NAME}-{n}" for n in range(REPLICAS)]

    async with Watch(cluster, "pods", REPLICAS) as pods, Watch(cluster, "pvc", REPLICAS) as pvcs:
        await cluster.kubectl("patch", "asts", NAME, "--type=json", "-p", json.dumps(GROW_AND_ROLL))
        sts = await wait_status(
            cluster,
            updatedReplicas=REPLICAS,
            updatedReadyReplicas=REPLICAS,
            readyReplicas=REPLICAS,
            availableReplicas=REPLICAS,
        )
        # every claim grown: what `kubectl get pvc` prints as its capacity
        for claim in CLAIMS:
            await until(lambda c=claim: capacity(cluster, c), lambda cap: cap == "2Gi", f"{claim} at 2Gi")
    # highest ordinal first; each claim grown (and its volume expanded) before its pod goes, and
    # the next claim touched only after the pod above it went
    removals = {n: pods.first(f"{NAME}-{n}", removed(uids[f"{NAME}-{n}"])) for n in range(REPLICAS)}
    assert removals[2] < removals[1] < removals[0], removals
    for n in range(REPLICAS):
        asked, done = pvcs.first(f"data-{NAME}-{n}", asked_for_2gi), pvcs.first(f"data-{NAME}-{n}", expanded)
        assert asked < done < removals[n], (n, asked, done, removals)
        if n < REPLICAS - 1:
            assert removals[n + 1] < asked, (n, asked, removals)

    revision = sts["status"]["updateRevision"]
    assert revision != first_revision
    assert sts["status"]["currentRevision"] == revision
    assert sts["status"]["volumeClaims"] == [
        {"volumeClaimName": "data", "compatibleReplicas": REPLICAS, "compatibleReadyReplicas": REPLICAS}
    ]
    after = await live_pods(cluster)
    for name, pod in after.items():
        assert pod["metadata"]["uid"] != uids[name]
        assert pod["metadata"]["labels"]["controller-revision-hash"] == revision
        assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    for name, claim in (await claims(cluster)).items():
        assert claim["metadata"]["annotations"][OWNED_BY] == NAME, name
        assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
        assert claim["status"]["phase"] == "Bound"
        assert not claim["status"].get("conditions"), claim["status"]
    assert await until(
        lambda: resize_events(cluster),
        lambda messages: len(messages) == REPLICAS,
        "a SuccessfulResize event per claim",
    ) == [
        f"resize Claim data-{NAME}-{n} Pod {NAME}-{n} in StatefulSet {NAME} success" for n in range(REPLICAS)
    ]

    _, table = await cluster.kubectl("get", "asts", NAME)
    header, row = table.strip().splitlines()
    columns = dict(zip(header.split(), row.split(), strict=True))
    assert (columns["DESIRED"], columns["CURRENT"], columns["UPDATED"], columns["READY"]) == (
        "3",
        "3",
        "3",
        "3",
    )

    await cluster.kubectl("delete", "asts", NAME, "--wait=true", "--timeout=60s")
    await cluster.kubectl("delete", "pvc", *CLAIMS, "--wait=true", "--timeout=60s")
    await cluster.kubectl("delete", "storageclass", CLASS)
