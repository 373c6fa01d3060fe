"""Seed 002's Advanced StatefulSet walkthrough, through `kruise sandbox up` (kruise-webhook +
kruise-manager as real processes) and the real kubectl: Parallel + ``maxUnavailable: 3`` (three pods
rebuilt at once, highest ordinals first), the in-place manifest with the InPlaceUpdateReady
readiness gate (same pods, RESTARTS 1), ``paused`` (replicas still managed), ``reserveOrdinals`` and
``scaleStrategy.maxUnavailable``; admission of the two rules the seed states; then `kubectl kruise
rollout status|pause|resume|undo` on an ``asts/<name>``.

The seed's transient tables (three pods ``ContainerCreating`` at once) are checked on the complete
pod history a ``kubectl get pods -w`` streams, not on a snapshot that could miss the moment. The
seed does not name the image it rolls to, so its revision name (web-84644dfc7d) is not asserted;
the events must name the set's own updateRevision. Its scaleStrategy example has 100 replicas; 20
(10% = 2) show the same limit on the sandbox's 3 nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from harness import Cluster, json_documents, kubectl_binary, kubectl_kruise

WEB = """
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata:
  name: web
  namespace: default
spec:
  serviceName: "nginx-headless"
  podManagementPolicy: Parallel
  replicas: 5
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 3
      # partition: 4
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx  # @
    spec:
      containers:
      - name: nginx
        image: nginx
        ports:
        - name: web
          containerPort: 80
"""

WEB_IN_PLACE = """
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata:
  name: web
  namespace: default
spec:
  serviceName: "nginx-headless"
  podManagementPolicy: Parallel
  replicas: 5
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      podUpdatePolicy: InPlaceIfPossible
      maxUnavailable: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      readinessGates:
      - conditionType: InPlaceUpdateReady
      containers:
      - name: nginx
        image: nginx
        ports:
        - name: web
          containerPort: 80
"""

Pod = dict[str, Any]


def container(image: str) -> dict:
    """The seed's container with another image (a merge patch replaces the whole list)."""
    return {"name": "nginx", "image": image, "ports": [{"name": "web", "containerPort": 80}]}


def is_ready(pod: Pod) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def image_of(pod: Pod) -> str:
    return pod["spec"]["containers"][0]["image"]


def restarts_of(pod: Pod) -> int:
    return sum(s.get("restartCount", 0) for s in (pod.get("status") or {}).get("containerStatuses") or [])


class PodWatch:
    """`kubectl get pods -l <selector> -w -o json --output-watch-events`: every change of every pod,
    in the order the API server made them, so a rollout's worst moment cannot slip between samples."""

    def __init__(self, cluster: Cluster, selector: str) -> None:
        self.cluster, self.selector = cluster, selector
        self.events: list[tuple[str, Pod]] = []
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()

    async def __aenter__(self) -> PodWatch:
        self._process = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(self.cluster.kubeconfig), "get", "pods",
            "-l", self.selector, "-w", "-o", "json", "--output-watch-events",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async for event in json_documents(self._process.stdout):
            self.events.append((event["type"], event["object"]))
            self._arrived.set()

    async def until_listed(self, count: int) -> None:
        """The initial list (one ADDED per existing pod) has arrived: the watch is established."""
        async with asyncio.timeout(30):
            while len(self.events) < count:
                self._arrived.clear()
                await self._arrived.wait()

    async def __aexit__(self, *exc: object) -> None:
        assert self._process is not None and self._reader is not None
        with contextlib.suppress(ProcessLookupError):
            self._process.terminate()
        await self._process.wait()
        await self._reader

    def snapshots(self, skip: int = 0) -> list[dict[str, Pod]]:
        """The live pods (name → pod, terminating ones excluded) after each event past the first
        ``skip`` (the initial list)."""
        pods: dict[str, Pod] = {}
        out: list[dict[str, Pod]] = []
        for i, (kind, pod) in enumerate(self.events):
            name = pod["metadata"]["name"]
            if kind == "DELETED" or pod["metadata"].get("deletionTimestamp"):
                pods.pop(name, None)
            else:
                pods[name] = pod
            if i >= skip - 1:
                out.append(dict(pods))
        return out


def unavailable(snapshot: dict[str, Pod], names: list[str]) -> list[str]:
    """The expected pod names that are missing, terminating or not Ready in ``snapshot``."""
    return [n for n in names if n not in snapshot or not is_ready(snapshot[n])]


async def get_sts(cluster: Cluster, name: str = "web") -> dict:
    _, out = await cluster.kubectl("get", "asts", name, "-o", "json")
    return json.loads(out)


async def live_pods(cluster: Cluster, app: str = "nginx") -> dict[str, Pod]:
    _, out = await cluster.kubectl("get", "pods", "-l", f"app={app}", "-o", "json")
    items = json.loads(out)["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


async def patch_spec(cluster: Cluster, patch: dict, name: str = "web") -> None:
    await cluster.kubectl("patch", "asts", name, "--type=merge", "-p", json.dumps({"spec": patch}))


async def wait_status(cluster: Cluster, name: str = "web", **expected: Any) -> dict:
    """The spec observed, then each status field at its value (kubectl wait, 90 s each)."""
    generation = (await get_sts(cluster, name))["metadata"]["generation"]
    for field, value in {"observedGeneration": generation, **expected}.items():
        await cluster.kubectl(
            "wait", f"asts/{name}", f"--for=jsonpath={{.status.{field}}}={value}", "--timeout=90s"
        )
    return await get_sts(cluster, name)


async def wait_pod_names(cluster: Cluster, names: list[str], app: str = "nginx") -> dict[str, Pod]:
    """Polls (kubectl, 90 s deadline) until exactly ``names`` exist (none terminating), all Ready."""
    async with asyncio.timeout(90):
        while True:
            _, out = await cluster.kubectl("get", "pods", "-l", f"app={app}", "-o", "json")
            pods = {p["metadata"]["name"]: p for p in json.loads(out)["items"]}
            settled = not any(p["metadata"].get("deletionTimestamp") for p in pods.values())
            if settled and sorted(pods) == sorted(names) and all(map(is_ready, pods.values())):
                return pods
            await asyncio.sleep(0.2)


async def sts_events(cluster: Cluster, name: str = "web") -> list[tuple[str, str, str]]:
    _, out = await cluster.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json"
    )
    return [
        (e["type"], e["reason"], e["message"])
        for e in json.loads(out)["items"]
        if e["involvedObject"].get("kind") == "StatefulSet"
    ]


async def wait_events(cluster: Cluster, reason: str, count: int, name: str = "web") -> list[tuple[str, str]]:
    """(type, message) of the set's ``reason`` events once ``count`` have been recorded (events
    reach the API a little after the writes they report; 30 s deadline)."""
    async with asyncio.timeout(30):
        while True:
            found = [(t, m) for t, r, m in await sts_events(cluster, name) if r == reason]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.2)


async def pods_table(cluster: Cluster, app: str = "nginx") -> list[list[str]]:
    _, out = await cluster.kubectl("get", "pods", "-l", f"app={app}")
    lines = out.strip().splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    return [line.split() for line in lines[1:]]


WEB_PODS = [f"web-{i}" for i in range(5)]


@pytest.fixture(autouse=True)
async def _leave_no_sets_behind(kruise_sandbox: Cluster):
    """The sandbox is shared by every e2e module, and the seed's pods carry the common `app: nginx`: delete
    this module's sets and wait for their pods, so later modules count only their own."""
    yield
    await kruise_sandbox.kubectl(
        "delete", "asts", "web", "big", "--ignore-not-found", "--wait=true", check=False
    )
    pods = [f"pod/web-{i}" for i in range(8)]
    await kruise_sandbox.kubectl("wait", *pods, "--for=delete", "--timeout=90s", check=False)


async def test_seed_002_advanced_statefulset_walkthrough(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    manifest = tmp_path / "web.yaml"
    manifest.write_text(WEB)

    # Create: `kubectl get asts` DESIRED/CURRENT/UPDATED/READY 5, pods web-0..web-4 Running.
    await cluster.kubectl("apply", "-f", str(manifest))
    await wait_status(cluster, replicas=5, currentReplicas=5, updatedReplicas=5, readyReplicas=5)
    _, table = await cluster.kubectl("get", "asts", "web")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "UPDATED", "READY", "AGE"]
    assert row.split()[:5] == ["web", "5", "5", "5", "5"]
    rows = await pods_table(cluster)
    assert [r[:4] for r in rows] == [[name, "1/1", "Running", "0"] for name in WEB_PODS]
    first = await live_pods(cluster)
    created = {m for _, reason, m in await sts_events(cluster) if reason == "SuccessfulCreate"}
    assert created == {f"create Pod {name} in StatefulSet web successful" for name in WEB_PODS}

    # A new image with maxUnavailable 3 (ReCreate): web-4, web-3, web-2 are rebuilt together while
    # web-0 and web-1 keep serving the old image; never more than 3 pods are down.
    async with PodWatch(cluster, "app=nginx") as watch:
        await watch.until_listed(5)
        await patch_spec(cluster, {"template": {"spec": {"containers": [container("nginx:1.25")]}}})
        sts = await wait_status(cluster, updatedReplicas=5, readyReplicas=5, currentReplicas=5)
    history = watch.snapshots(skip=5)
    worst = max(len(unavailable(s, WEB_PODS)) for s in history)
    assert worst == 3
    widest = next(s for s in history if len(unavailable(s, WEB_PODS)) == 3)
    assert unavailable(widest, WEB_PODS) == ["web-2", "web-3", "web-4"]
    for name in ("web-0", "web-1"):
        assert is_ready(widest[name]) and image_of(widest[name]) == "nginx"
    rows = await pods_table(cluster)
    assert [r[:4] for r in rows] == [[name, "1/1", "Running", "0"] for name in WEB_PODS]
    second = await live_pods(cluster)
    for name, pod in second.items():
        assert image_of(pod) == "nginx:1.25"
        assert pod["metadata"]["uid"] != first[name]["metadata"]["uid"]
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]

    # The seed's in-place manifest (readiness gate + InPlaceIfPossible), then a new image: the same
    # five pods, each container restarted once, three at a time from web-4 down. The set is created
    # afresh with it: the 25 Normal events so far are client-go's spam-filter burst for one object
    # (as in upstream's recorder), so on the old object the in-place events would be dropped.
    await cluster.kubectl("delete", "asts", "web", "--wait=true")
    await cluster.kubectl("wait", "pods", "-l", "app=nginx", "--for=delete", "--timeout=90s")
    manifest.write_text(WEB_IN_PLACE)
    await cluster.kubectl("apply", "-f", str(manifest))
    await wait_status(cluster, updatedReplicas=5, readyReplicas=5, currentReplicas=5)
    before = await live_pods(cluster)
    for pod in before.values():
        assert {"conditionType": "InPlaceUpdateReady"} in pod["spec"]["readinessGates"]
    async with PodWatch(cluster, "app=nginx") as watch:
        await watch.until_listed(5)
        await patch_spec(cluster, {"template": {"spec": {"containers": [container("nginx:1.25")]}}})
        sts = await wait_status(cluster, updatedReplicas=5, readyReplicas=5, currentReplicas=5)
    history = watch.snapshots(skip=5)
    assert max(len(unavailable(s, WEB_PODS)) for s in history) == 3
    widest = next(s for s in history if len(unavailable(s, WEB_PODS)) == 3)
    assert unavailable(widest, WEB_PODS) == ["web-2", "web-3", "web-4"]
    after = await live_pods(cluster)
    assert {n: p["metadata"]["uid"] for n, p in after.items()} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }
    rows = await pods_table(cluster)
    assert [r[:4] for r in rows] == [[name, "1/1", "Running", "1"] for name in WEB_PODS]
    for pod in after.values():
        assert image_of(pod) == "nginx:1.25" and restarts_of(pod) == 1
    revision = sts["status"]["updateRevision"]
    expected = sorted(f"successfully update pod {n} in-place(revision {revision})" for n in WEB_PODS)
    in_place = await wait_events(cluster, "SuccessfulUpdatePodInPlace", len(WEB_PODS))
    assert sorted(m for t, m in in_place if t == "Normal") == expected
    _, described = await cluster.kubectl("describe", "asts", "web")
    assert "statefulset-controller" in described
    for name in ("web-4", "web-3", "web-2"):
        assert f"successfully update pod {name} in-place(revision {revision})" in described

    # paused: a new image moves no pod, but replicas are still managed (web-5 is created, at the
    # update revision as upstream creates every new ordinal at or above the partition); resumed,
    # the rest follow.
    await patch_spec(
        cluster,
        {
            "updateStrategy": {"rollingUpdate": {"paused": True}},
            "template": {"spec": {"containers": [container("nginx:1.26")]}},
        },
    )
    sts = await wait_status(cluster, updatedReplicas=0, readyReplicas=5)
    assert sts["status"]["updateRevision"] != revision
    assert {n: image_of(p) for n, p in (await live_pods(cluster)).items()} == dict.fromkeys(
        WEB_PODS, "nginx:1.25"
    )
    await patch_spec(cluster, {"replicas": 6})
    await wait_status(cluster, replicas=6, readyReplicas=6, updatedReplicas=1)
    paused = await live_pods(cluster)
    assert image_of(paused["web-5"]) == "nginx:1.26"
    assert all(image_of(paused[n]) == "nginx:1.25" for n in WEB_PODS)
    await patch_spec(cluster, {"updateStrategy": {"rollingUpdate": {"paused": False}}})
    await wait_status(cluster, updatedReplicas=6, readyReplicas=6, currentReplicas=6)
    assert {image_of(p) for p in (await live_pods(cluster)).values()} == {"nginx:1.26"}

    # reserveOrdinals: replicas 4 with [1] runs [0,2,3,4]; appending 3 moves web-3 to web-5
    # ([0,2,4,5]); with replicas 3 as well, web-3's slot is just dropped ([0,2,4]).
    await patch_spec(cluster, {"replicas": 4, "reserveOrdinals": [1]})
    await wait_status(cluster, replicas=4, readyReplicas=4)
    await wait_pod_names(cluster, ["web-0", "web-2", "web-3", "web-4"])
    kept = await live_pods(cluster)
    await patch_spec(cluster, {"reserveOrdinals": [1, 3]})
    await wait_status(cluster, replicas=4, readyReplicas=4)
    moved = await wait_pod_names(cluster, ["web-0", "web-2", "web-4", "web-5"])
    for name in ("web-0", "web-2", "web-4"):
        assert moved[name]["metadata"]["uid"] == kept[name]["metadata"]["uid"]
    await patch_spec(cluster, {"replicas": 3})
    await wait_status(cluster, replicas=3, readyReplicas=3)
    await wait_pod_names(cluster, ["web-0", "web-2", "web-4"])
    rows = await pods_table(cluster)
    assert [r[0] for r in rows] == ["web-0", "web-2", "web-4"]


BIG = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "big", "namespace": "default"},
    "spec": {
        "serviceName": "big",
        "podManagementPolicy": "Parallel",
        "replicas": 20,
        "scaleStrategy": {"maxUnavailable": "10%"},
        "selector": {"matchLabels": {"app": "big"}},
        "template": {
            "metadata": {"labels": {"app": "big"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
        },
    },
}


async def test_scale_strategy_max_unavailable_caps_unready_new_pods(kruise_sandbox: Cluster):
    """scaleStrategy.maxUnavailable 10% of 20 = 2: never more than two created pods not yet Ready."""
    cluster = kruise_sandbox
    names = [f"big-{i}" for i in range(20)]
    # A pod outside the set's selector but inside the watch's: its ADDED event says the watch is up.
    sentinel = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big-sentinel", "namespace": "default", "labels": {"app": "big-sentinel"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
    }
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(sentinel))
    async with PodWatch(cluster, "app in (big, big-sentinel)") as watch:
        await watch.until_listed(1)
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(BIG))
        await wait_status(cluster, "big", replicas=20, readyReplicas=20, availableReplicas=20)
    await cluster.kubectl("delete", "pod", "big-sentinel", "--wait=false")
    history = [{n: p for n, p in s.items() if n != "big-sentinel"} for s in watch.snapshots(skip=1)]
    unready = [sum(not is_ready(p) for p in s.values()) for s in history]
    assert max(unready) == 2
    assert sorted(history[-1]) == sorted(names)


BAD = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "bad", "namespace": "default"},
    "spec": {
        "serviceName": "bad",
        "replicas": 2,
        "selector": {"matchLabels": {"app": "bad"}},
        "template": {
            "metadata": {"labels": {"app": "bad"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
        },
    },
}


async def test_admission_rejects_what_the_seed_forbids(kruise_sandbox: Cluster):
    """maxUnavailable needs Parallel; in-place needs the InPlaceUpdateReady readiness gate —
    rejected by kruise-webhook with upstream's field errors."""
    cluster = kruise_sandbox
    ordered = json.loads(json.dumps(BAD))
    ordered["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}
    code, out = await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(ordered), check=False)
    assert code != 0
    assert "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: " in out
    assert "can only work with Parallel PodManagementPolicyType" in out

    gateless = json.loads(json.dumps(BAD))
    gateless["spec"]["podManagementPolicy"] = "Parallel"
    gateless["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 3},
    }
    code, out = await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(gateless), check=False)
    assert code != 0
    assert "spec.template.spec.readinessGates: Invalid value: " in out
    assert "must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible" in out
    code, out = await cluster.kubectl("get", "asts", "bad", check=False)
    assert code != 0 and "NotFound" in out


DB = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "default"},
    "spec": {
        "serviceName": "db",
        "replicas": 3,
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "nginx:1.25"}]},
        },
    },
}


async def db_images(cluster: Cluster) -> set[str]:
    return {image_of(p) for p in (await live_pods(cluster, "db")).values()}


async def test_kubectl_kruise_rollout_on_an_advanced_statefulset(kruise_sandbox: Cluster):
    """`asts/<name>` through rollout status, pause, set image, resume, history and undo, with the
    real controller."""
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(DB))
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "asts/db")
    first = (await get_sts(cluster, "db"))["status"]["updateRevision"]
    assert out.endswith(f"Advanced StatefulSet rolling update complete 3 pods at revision {first}...\n")
    assert await db_images(cluster) == {"nginx:1.25"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "pause", "asts/db")
    assert out == "statefulset.apps.kruise.io/db paused\n"
    await kubectl_kruise(cluster, "set", "image", "asts/db", "db=nginx:1.26")
    sts = await wait_status(cluster, "db", updatedReplicas=0)
    assert sts["status"]["updateRevision"] != first
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "asts/db", "--watch=false")
    assert out == "Waiting for partitioned roll out to finish: 0 out of 3 new pods have been updated...\n"
    assert await db_images(cluster) == {"nginx:1.25"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "resume", "asts/db")
    assert out == "statefulset.apps.kruise.io/db resumed\n"
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "asts/db")
    second = sts["status"]["updateRevision"]
    assert out.endswith(f"Advanced StatefulSet rolling update complete 3 pods at revision {second}...\n")
    assert await db_images(cluster) == {"nginx:1.26"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "history", "asts/db")
    assert out.splitlines()[1:4] == ["REVISION  CHANGE-CAUSE", "1         <none>", "2         <none>"]
    _, out, _ = await kubectl_kruise(cluster, "rollout", "undo", "asts/db")
    assert out == "statefulset.apps.kruise.io/db rolled back\n"
    await wait_status(cluster, "db", updatedReplicas=3, readyReplicas=3, currentReplicas=3)
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "asts/db")
    assert out.endswith(f"Advanced StatefulSet rolling update complete 3 pods at revision {first}...\n")
    assert await db_images(cluster) == {"nginx:1.25"}
