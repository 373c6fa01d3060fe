"""kubectl versions of the helpers upstream's CloneSet e2e suite builds its cases from
(`test/e2e/framework/v1alpha1/cloneset_util.go`): the base CloneSet, a whole-object update retried on
conflict, the CloneSet's pods and PVCs, and its Progressing condition without its timestamps.

Every read and write names `clonesets.v1alpha1.apps.kruise.io`: upstream's tester speaks v1alpha1, and
kubectl's preferred version would be v1beta1 (where e.g. `updateStrategy.type` is spelled differently).
Each case gets its own namespace (upstream's framework: one per `It`), so cases sharing the session's
sandbox never see each other's pods. It sits beside upstream_kit.py, not in e2e/cloneset/, because the
real-node modules (e2e/containerd/) build their CloneSet cases from it too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from harness import Cluster, until

T = TypeVar("T")

# upstream's `imageutils.GetE2EImage(...)` images; the fake runtime serves any image name, real nodes
# run the stand-ins of the same names (docs/sandbox.md)
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"
REDIS_IMAGE = "registry.k8s.io/e2e-test-images/redis:5.0.5-3"
BUSYBOX_IMAGE = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"
HTTPD_IMAGE = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
# `imageConfig.SetRegistry("docker.io/library")` + SetVersion("alpine" / "mainline-alpine")
NGINX_ALPINE = "docker.io/library/nginx:alpine"
NGINX_MAINLINE_ALPINE = "docker.io/library/nginx:mainline-alpine"

CLONESET = "clonesets.v1alpha1.apps.kruise.io"
WAIT = 120.0
TEN_MINUTES = 600
MAX_INT32 = 2**31 - 1

LIFECYCLE_STATE = "lifecycle.apps.kruise.io/state"
INSTANCE_ID = "apps.kruise.io/cloneset-instance-id"
REVISION_HASH = "controller-revision-hash"


def new_cloneset(
    namespace: str, name: str, replicas: int, update_strategy: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`NewCloneSet` (framework cloneset_util.go): one nginx container with an env and requests/limits,
    selector owner=<name>."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"owner": name}},
            "template": {
                "metadata": {"labels": {"owner": name}},
                "spec": {"containers": [{
                    "name": "nginx", "image": NGINX_IMAGE, "env": [{"name": "test", "value": "foo"}],
                    "resources": {"requests": {"cpu": "200m", "memory": "200Mi"},
                                  "limits": {"cpu": "1", "memory": "1Gi"}},
                }]},
            },
            "updateStrategy": dict(update_strategy or {}),
        },
    }  # fmt: skip


def condition(status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": "Progressing", "status": status, "reason": reason, "message": message}


AVAILABLE = condition("True", "CloneSetAvailable", "CloneSet is available")
UPDATED = condition("True", "CloneSetUpdated", "CloneSet is progressing")
PAUSED = condition("True", "CloneSetPaused", "CloneSet is paused")
PARTITION_AVAILABLE = condition(
    "True", "ProgressPartitionAvailable", "CloneSet has been paused due to partition ready"
)


def deadline_exceeded(revision: str) -> dict[str, str]:
    return condition(
        "False", "ProgressDeadlineExceeded", f"CloneSet revision {revision} has timed out progressing"
    )


def equal_to_revision_hash(pod: dict[str, Any], revision: str) -> bool:
    """upstream `utils.EqualToRevisionHash("", pod, hash)`: the same hash, or the same short hash."""
    label = pod["metadata"].get("labels", {}).get(REVISION_HASH, "")
    return label == revision or label.rsplit("-", 1)[-1] == revision.rsplit("-", 1)[-1]


def container_status(pod: dict[str, Any], name: str) -> dict[str, Any]:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status["name"] == name:
            return status
    raise AssertionError(f"pod {pod['metadata']['name']} has no status for container {name}")


@dataclass(frozen=True)
class Case:
    """One upstream `It(...)`: its namespace and the random string its object names share."""

    cluster: Cluster
    ns: str
    rand: str

    def new_cloneset(
        self, name: str, replicas: int, update_strategy: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return new_cloneset(self.ns, name, replicas, update_strategy)

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        _, out = await self.cluster.kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps(obj))
        return json.loads(out)

    async def get(self, name: str) -> dict[str, Any]:
        _, out = await self.cluster.kubectl("get", CLONESET, name, "-n", self.ns, "-o", "json")
        return json.loads(out)

    async def status(self, name: str, field: str) -> Any:
        return ((await self.get(name)).get("status") or {}).get(field, 0)

    async def update(self, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """`UpdateCloneSet`: read, change, `kubectl replace`; a conflict re-reads and re-applies."""
        last = ""
        for _ in range(10):
            current = await self.get(name)
            change(current)
            code, out = await self.cluster.kubectl(
                "replace", "-f", "-", "-o", "json", stdin=json.dumps(current), check=False
            )
            if code == 0:
                return json.loads(out)
            last = out
            if "the object has been modified" not in out:
                break
        raise AssertionError(f"kubectl replace cloneset {name} failed: {last}")

    async def pods(self, name: str) -> list[dict[str, Any]]:
        """`ListPodsForCloneSet`: the namespace's pods controlled by `name`, not being deleted, by name."""
        _, out = await self.cluster.kubectl("get", "pods", "-n", self.ns, "-o", "json")
        pods = [
            p
            for p in json.loads(out)["items"]
            if not p["metadata"].get("deletionTimestamp")
            and any(
                ref.get("controller") and ref["name"] == name
                for ref in p["metadata"].get("ownerReferences") or []
            )
        ]
        return sorted(pods, key=lambda p: p["metadata"]["name"])

    async def pod(self, name: str) -> dict[str, Any] | None:
        code, out = await self.cluster.kubectl("get", "pod", name, "-n", self.ns, "-o", "json", check=False)
        if code != 0:
            assert "NotFound" in out, out
            return None
        return json.loads(out)

    async def pvcs(self) -> list[dict[str, Any]]:
        """`ListPVCForCloneSet`: the namespace's claims not being deleted, by name."""
        _, out = await self.cluster.kubectl("get", "pvc", "-n", self.ns, "-o", "json")
        items = [c for c in json.loads(out)["items"] if not c["metadata"].get("deletionTimestamp")]
        return sorted(items, key=lambda c: c["metadata"]["name"])

    async def progressing(self, name: str) -> dict[str, str] | None:
        """`GetCloneSetProgressingConditionWithoutTime`."""
        for cond in ((await self.get(name)).get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Progressing":
                return {k: cond.get(k, "") for k in ("type", "status", "reason", "message")}
        return None

    async def eventually(
        self, probe: Callable[[], Awaitable[T]], expected: Any, what: str, timeout: float = WAIT
    ) -> T:
        """gomega `Eventually(probe).Should(Equal(expected))`."""
        return await until(probe, lambda v: v == expected, what, timeout=timeout)

    async def eventually_progressing(self, name: str, expected: Any, timeout: float = WAIT) -> None:
        await self.eventually(lambda: self.progressing(name), expected, f"{name} Progressing", timeout)

    async def eventually_status(self, name: str, field: str, expected: Any, timeout: float = WAIT) -> None:
        await self.eventually(lambda: self.status(name, field), expected, f"{name} status.{field}", timeout)

    async def generation_observed(self, name: str, timeout: float = 30.0) -> dict[str, Any]:
        """ "Wait for CloneSet generation consistent"."""

        def seen(cs: dict[str, Any]) -> bool:
            return (cs.get("status") or {}).get("observedGeneration") == cs["metadata"]["generation"]

        return await until(lambda: self.get(name), seen, f"{name} generation observed", timeout=timeout)

    async def created_and_available(self, cs: dict[str, Any], replicas: int) -> str:
        """The opening of upstream's update cases: created, Progressing=Updated, replicas satisfied and
        ready, then Progressing=Available; returns the CloneSet's name."""
        created = await self.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == cs["spec"]["updateStrategy"]["type"]
        await self.eventually_progressing(name, UPDATED)
        await self.eventually_status(name, "replicas", replicas)
        await self.eventually_status(name, "readyReplicas", replicas)
        await self.eventually_progressing(name, AVAILABLE)
        return name

    async def updated_and_available(self, name: str, replicas: int, timeout: float = 180) -> None:
        """After an update: Progressing=Updated, generation observed, all updated and ready, Available."""
        await self.eventually_progressing(name, UPDATED)
        await self.generation_observed(name)
        await self.eventually_status(name, "updatedReadyReplicas", replicas, timeout=timeout)
        await self.eventually_progressing(name, AVAILABLE)

    async def consistently(
        self, probe: Callable[[], Awaitable[T]], expected: Any, what: str, duration: float
    ) -> None:
        """gomega `Consistently(probe, duration).Should(Equal(expected))`: every read in the window."""
        loop = asyncio.get_running_loop()
        end = loop.time() + duration
        reads = 0
        while reads == 0 or loop.time() < end:
            value = await probe()
            reads += 1
            assert value == expected, f"{what}: {value!r} != {expected!r} after {reads} reads"
            await asyncio.sleep(0.5)

    async def kubectl(self, *args: str, stdin: str | None = None) -> str:
        _, out = await self.cluster.kubectl(*args, "-n", self.ns, stdin=stdin)
        return out


@contextlib.asynccontextmanager
async def upstream_case(cluster: Cluster) -> AsyncIterator[Case]:
    """A fresh namespace (upstream's `NewDefaultFramework("clonesets")`); afterwards it goes."""
    rand = secrets.token_hex(5)
    case = Case(cluster, f"e2e-clonesets-{rand[:6]}", rand)
    await cluster.kubectl("create", "namespace", case.ns)
    try:
        yield case
    finally:
        await cluster.kubectl(
            "delete", "namespace", case.ns, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False
        )
