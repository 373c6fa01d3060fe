"""What every translation of an upstream e2e file needs, whatever its kind: a namespace per `It` (upstream's
`NewDefaultFramework`), kubectl reads and whole-object updates of one resource, and gomega's `Eventually`
/ `Consistently` as polls with a deadline. The per-kind testers (e2e/daemonset, e2e/broadcastjob,
e2e/advancedcronjob) add the objects and checks of upstream's `<kind>_util.go` on top.

Resources are named fully qualified (`daemonsets.v1alpha1.apps.kruise.io`): upstream's v1alpha1 suites
speak v1alpha1 through its clientset, and a bare `kubectl get daemonset` would mean apps/v1 (or, for
kinds served at v1beta1 too, kubectl's preferred version)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import string
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from harness import Cluster, until

T = TypeVar("T")
Obj = dict[str, Any]

# upstream's `imageutils.GetE2EImage(...)` images (test/e2e/framework/common/types.go); the sandbox's
# fake runtime serves any image name
WEBSERVER_IMAGE = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
NEW_WEBSERVER_IMAGE = "registry.k8s.io/e2e-test-images/httpd:2.4.39-4"
BUSYBOX_IMAGE = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"

WAIT = 120.0


def rand_string(n: int = 10) -> str:
    """`rand.String(n)` of apimachinery: lower-case letters and digits, valid in any object name."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))


def controlled_by(obj: Obj, uid: str) -> bool:
    """`metav1.IsControlledBy`: the controller owner reference names `uid`."""
    return any(
        ref.get("controller") and ref.get("uid") == uid
        for ref in obj["metadata"].get("ownerReferences") or []
    )


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    """`Toleration.ToleratesTaint` for any of `tolerations`."""
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol["key"] == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def condition(obj: Obj, kind: str) -> Obj | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return None


def is_ready(pod: Obj) -> bool:
    """`podutil.IsPodReady`."""
    ready = condition(pod, "Ready")
    return bool(ready and ready.get("status") == "True")


@dataclass(frozen=True)
class Case:
    """One upstream `It(...)`: its namespace and the random string its object names share."""

    cluster: Cluster
    ns: str
    rand: str

    async def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[int, str]:
        """kubectl in the case's namespace."""
        return await self.cluster.kubectl(*args, "-n", self.ns, stdin=stdin, check=check)

    async def create(self, obj: Obj) -> Obj:
        _, out = await self.kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps(obj))
        return json.loads(out)

    async def get(self, resource: str, name: str) -> Obj | None:
        """The object, or None when it is not found (any other failure fails the case)."""
        code, out = await self.kubectl("get", resource, name, "-o", "json", check=False)
        if code != 0:
            assert "NotFound" in out, out
            return None
        return json.loads(out)

    async def must_get(self, resource: str, name: str) -> Obj:
        obj = await self.get(resource, name)
        assert obj is not None, f"{resource} {self.ns}/{name} not found"
        return obj

    async def list(self, resource: str, selector: dict[str, str] | None = None) -> list[Obj]:
        args = ["get", resource, "-o", "json"]
        if selector:
            args += ["-l", ",".join(f"{k}={v}" for k, v in selector.items())]
        _, out = await self.kubectl(*args)
        return json.loads(out)["items"]

    async def update(self, resource: str, name: str, change: Callable[[Obj], None]) -> Obj:
        """Upstream's `Update<Kind>`: read, change, `kubectl replace`; a conflict re-reads and re-applies
        (client-go's `RetryOnConflict`)."""
        last = ""
        for _ in range(10):
            current = await self.must_get(resource, name)
            change(current)
            code, out = await self.kubectl(
                "replace", "-f", "-", "-o", "json", stdin=json.dumps(current), check=False
            )
            if code == 0:
                return json.loads(out)
            last = out
            if "the object has been modified" not in out:
                break
        raise AssertionError(f"kubectl replace {resource} {name} failed: {last}")

    async def patch(self, resource: str, name: str, kind: str, patch: Obj) -> Obj:
        _, out = await self.kubectl(
            "patch", resource, name, "--type", kind, "-p", json.dumps(patch), "-o", "json"
        )
        return json.loads(out)

    async def eventually(
        self, probe: Callable[[], Awaitable[T]], done: Callable[[T], object], what: str, timeout: float = WAIT
    ) -> T:
        """gomega `Eventually(probe).Should(...)` / `wait.PollUntilContextTimeout`: poll until `done`."""
        return await until(probe, done, what, timeout=timeout)

    async def consistently(
        self, probe: Callable[[], Awaitable[T]], holds: Callable[[T], object], what: str, duration: float
    ) -> T:
        """gomega `Consistently(probe, duration)`: every read in the window holds; returns the last."""
        loop = asyncio.get_running_loop()
        end = loop.time() + duration
        reads = 0
        while True:
            value = await probe()
            reads += 1
            assert holds(value), f"{what}: broken after {reads} reads: {value!r}"
            if loop.time() >= end:
                return value
            await asyncio.sleep(0.5)


@contextlib.asynccontextmanager
async def upstream_case(cluster: Cluster, framework: str) -> AsyncIterator[Case]:
    """A fresh namespace, as upstream's `NewDefaultFramework(framework)` gives every `It`; afterwards it
    goes (with everything in it)."""
    rand = rand_string()
    case = Case(cluster, f"e2e-{framework}-{rand[:6]}", rand)
    await cluster.kubectl("create", "namespace", case.ns)
    try:
        yield case
    except AssertionError as failure:
        # upstream's AfterEach `DumpDebugInfo` on a failed spec: the namespace's pods as they ended
        _, pods = await case.kubectl("get", "pods", "-o", "wide", "--show-labels", check=False)
        _, phases = await case.kubectl(
            "get", "pods", "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase,"
            "NODE:.spec.nodeName,DELETING:.metadata.deletionTimestamp", check=False,
        )  # fmt: skip
        _, workloads = await case.kubectl(
            "get", "uniteddeployments.apps.kruise.io,clonesets.apps.kruise.io,statefulsets.apps.kruise.io,"
            "daemonsets.apps.kruise.io,deployments.apps,statefulsets.apps", "-o", "wide", check=False,
        )  # fmt: skip
        _, events = await case.kubectl("get", "events", "--sort-by=.lastTimestamp", check=False)
        last_events = "\n".join(events.splitlines()[-40:])
        failure.add_note(f"pods in {case.ns}:\n{pods}\n{phases}\n{workloads}\nlast events:\n{last_events}")
        raise
    finally:
        await cluster.kubectl(
            "delete", "namespace", case.ns, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False
        )
