"""kubectl versions of the helpers upstream's SidecarSet e2e suite builds its cases from
(`test/e2e/framework/v1alpha1/sidecarset_utils.go`): the base SidecarSet and Deployment, a whole-object
SidecarSet update retried on conflict, waits for a Deployment to run and for a SidecarSet's status.

Each case gets its own namespace and SidecarSet name (upstream: `test-sidecarset-<ns>-<random>` with
`spec.namespace: <ns>`), so cases sharing the session's sandbox never see each other's pods.

Upstream keeps a v1beta1 copy of the suite (`test/e2e/apps/v1beta1`, `framework/v1beta1`) that differs
only in the SidecarSet's shape: no `spec.namespace` (a `namespaceSelector` on `kubernetes.io/metadata.name`
scopes it instead) and `spec.customVersion` in place of the custom-version label. A `Case` carries the
API version it writes and reads SidecarSets at, so one translation serves both copies.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from harness import Cluster, until

# upstream's `imageutils.GetE2EImage(...)` images; the sandbox's fake runtime serves any image name
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"
BUSYBOX_IMAGE = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"
# upstream's InvalidImage: its pull fails (the sandbox starts with --fail-image 'invalid.registry.k8s.io/*')
INVALID_IMAGE = "invalid.registry.k8s.io/invalid/alpine:3.1"
KRUISE_NAMESPACE = "kruise-system"
# upstream's v1alpha1 suite reads and writes through the v1alpha1 client; a bare `kubectl get sidecarset`
# would return v1beta1 (the preferred version), where customVersion is a spec field, not a label
SIDECARSETS = "sidecarsets.v1alpha1.apps.kruise.io"
# the two versions upstream's suite has a copy for (parametrize ids)
API_VERSIONS = ("v1alpha1", "v1beta1")
WAIT = 120.0


@dataclass(frozen=True)
class Case:
    """One upstream `It(...)`: its namespace and the random suffix its object names share."""

    cluster: Cluster
    ns: str
    suffix: str
    # the SidecarSet API version the case writes and reads (upstream's v1alpha1 or v1beta1 copy)
    version: str = "v1alpha1"

    @property
    def sidecarsets(self) -> str:
        """The fully qualified resource: a bare `sidecarset` would be read at the preferred version."""
        return f"sidecarsets.{self.version}.apps.kruise.io"

    def sidecarset(self, metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        """A SidecarSet at the case's version, scoped to the case's namespace the way that version
        can say it: `spec.namespace` (v1alpha1) or a `namespaceSelector` (v1beta1, where upstream's
        `NewBaseSidecarSet` and every object its v1beta1 files build use the namespace-name label)."""
        scope: dict[str, Any] = (
            {"namespace": self.ns}
            if self.version == "v1alpha1"
            else {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.ns}}}
        )
        return {
            "apiVersion": f"apps.kruise.io/{self.version}",
            "kind": "SidecarSet",
            "metadata": metadata,
            "spec": {**spec, **scope},
        }

    def base_sidecarset(self) -> dict[str, Any]:
        """`NewBaseSidecarSet`: an init sidecar and two sidecars (nginx before, busybox after the app)."""
        return self.sidecarset(
            {"name": f"test-sidecarset-{self.ns}-{self.suffix}", "labels": {"app": "sidecar"}},
            {
                "initContainers": [
                    {"name": f"init-sidecar-{self.suffix}", "command": ["/bin/sh", "-c", "sleep 1"],
                     "image": BUSYBOX_IMAGE},
                ],
                "containers": [
                    {"name": f"nginx-sidecar-{self.suffix}", "image": NGINX_IMAGE,
                     "imagePullPolicy": "IfNotPresent", "command": ["tail", "-f", "/dev/null"],
                     "podInjectPolicy": "BeforeAppContainer", "shareVolumePolicy": {"type": "enabled"}},
                    {"name": f"busybox-sidecar-{self.suffix}", "image": BUSYBOX_IMAGE,
                     "command": ["/bin/sh", "-c", "sleep 10000000"], "podInjectPolicy": "AfterAppContainer"},
                ],
                "selector": {"matchLabels": {"app": "sidecarset"}},
            },
        )  # fmt: skip

    def base_deployment(self, replicas: int = 1) -> dict[str, Any]:
        """`NewBaseDeployment`: `deployment-test`, one busybox container, pods labelled app=sidecarset."""
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "deployment-test", "namespace": self.ns},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "sidecarset"}},
                "template": {
                    "metadata": {"labels": {"app": "sidecarset"}},
                    "spec": {"containers": [{"name": "main", "image": "busybox:latest",
                                             "command": ["/bin/sh", "-c", "sleep 10000000"]}]},
                },
            },
        }  # fmt: skip

    async def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        args = ["get", kind, name, "-o", "json"]
        if namespace:
            args += ["-n", namespace]
        _, out = await self.cluster.kubectl(*args)
        return json.loads(out)

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        _, out = await self.cluster.kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps(obj))
        return json.loads(out)

    async def until_injecting(self, sidecarset: dict[str, Any]) -> None:
        """Upstream sleeps a second after creating a SidecarSet so kruise-webhook's cache holds it; here a
        server-side dry run of a pod matching its selector is polled until the webhook injects into it.
        Only for a plain matchLabels selector; others are not awaited. Used by the hot-upgrade cases, whose
        pods are created right after their SidecarSet."""
        selector = (sidecarset.get("spec") or {}).get("selector") or {}
        labels = selector.get("matchLabels")
        if not labels or selector.get("matchExpressions"):
            return
        probe = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"injection-probe-{self.suffix}", "namespace": self.ns, "labels": labels},
            "spec": {"containers": [{"name": "probe", "image": "busybox:latest"}]},
        }

        async def injected() -> bool:
            code, out = await self.cluster.kubectl(
                "create", "--dry-run=server", "-f", "-", "-o", "json", stdin=json.dumps(probe), check=False
            )
            if code != 0:
                return False
            spec = json.loads(out)["spec"]
            return len(spec.get("containers") or []) + len(spec.get("initContainers") or []) > 1

        await until(injected, bool, f"SidecarSet {sidecarset['metadata']['name']} in kruise-webhook's cache")

    async def update_sidecarset(self, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """`UpdateSidecarSet`: read, change, `kubectl replace`; a conflict re-reads and re-applies."""
        last = ""
        for _ in range(5):
            current = await self.get(self.sidecarsets, name)
            change(current)
            code, out = await self.cluster.kubectl(
                "replace", "-f", "-", "-o", "json", stdin=json.dumps(current), check=False
            )
            if code == 0:
                return json.loads(out)
            last = out
            if "the object has been modified" not in out:
                break
        raise AssertionError(f"kubectl replace sidecarset {name} failed: {last}")

    async def deployment_running(self, name: str = "deployment-test") -> None:
        """`WaitForDeploymentRunning`: observed, and every replica updated and ready."""

        async def probe() -> dict[str, Any]:
            return await self.get("deployment", name, self.ns)

        def running(d: dict[str, Any]) -> bool:
            status, want = d.get("status") or {}, d["spec"]["replicas"]
            return status.get("observedGeneration") == d["metadata"]["generation"] and all(
                status.get(k) == want for k in ("updatedReplicas", "readyReplicas", "replicas")
            )

        await until(probe, running, f"deployment {self.ns}/{name} running", timeout=WAIT)

    async def create_deployment(self, deployment: dict[str, Any]) -> None:
        await self.create(deployment)
        await self.deployment_running(deployment["metadata"]["name"])

    async def sidecarset_status(
        self, name: str, matched: int, updated: int, ready: int, updated_ready: int
    ) -> None:
        """`WaitForSidecarSetUpgradeComplete`: the four counters as given, the generation observed."""

        async def probe() -> dict[str, Any]:
            return await self.get(self.sidecarsets, name)

        def done(s: dict[str, Any]) -> bool:
            status = s.get("status") or {}
            counters = [
                status.get(k, 0) for k in ("matchedPods", "updatedPods", "readyPods", "updatedReadyPods")
            ]
            return counters == [matched, updated, ready, updated_ready] and (
                s["metadata"]["generation"] == status.get("observedGeneration")
            )

        await until(
            probe, done, f"sidecarset {name} status {matched}/{updated}/{ready}/{updated_ready}", WAIT
        )

    async def reconciled(self, name: str) -> None:
        """upstream's `waitingForSidecarSetReconcile`: the controller has seen the current generation."""

        async def probe() -> dict[str, Any]:
            return await self.get(self.sidecarsets, name)

        def seen(s: dict[str, Any]) -> bool:
            return (s.get("status") or {}).get("observedGeneration") == s["metadata"]["generation"]

        await until(probe, seen, f"sidecarset {name} observed", timeout=30)

    async def pods(self, selector: str = "app=sidecarset") -> list[dict[str, Any]]:
        """`GetSelectorPods`: the active pods of the case's namespace matching `selector`."""
        _, out = await self.cluster.kubectl("get", "pods", "-n", self.ns, "-l", selector, "-o", "json")
        return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]

    async def revisions(self, sidecarset: str) -> list[dict[str, Any]]:
        """`ListControllerRevisions`, oldest first (`history.SortControllerRevisions`)."""
        _, out = await self.cluster.kubectl(
            "get", "controllerrevisions", "-n", KRUISE_NAMESPACE,
            "-l", f"kruise.io/sidecarset-name={sidecarset}", "-o", "json",
        )  # fmt: skip
        items = json.loads(out)["items"]
        return sorted(
            items, key=lambda r: (r["revision"], r["metadata"]["creationTimestamp"], r["metadata"]["name"])
        )


@contextlib.asynccontextmanager
async def upstream_case(cluster: Cluster, version: str = "v1alpha1") -> AsyncIterator[Case]:
    """A fresh namespace; afterwards (upstream's AfterEach) its SidecarSets and the namespace go."""
    suffix = secrets.token_hex(3)[:5]
    case = Case(cluster, f"e2e-sidecarset-{suffix}", suffix, version)
    await cluster.kubectl("create", "namespace", case.ns)
    try:
        yield case
    finally:
        _, names = await cluster.kubectl("get", "sidecarsets", "-o", "name", check=False)
        for name in names.split():
            if name.startswith(f"sidecarset.apps.kruise.io/test-sidecarset-{case.ns}-"):
                await cluster.kubectl("delete", name, "--ignore-not-found", "--wait=true", check=False)
        await cluster.kubectl(
            "delete", "namespace", case.ns, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False
        )


def hash_record(pod: dict[str, Any], sidecarset: str) -> dict[str, Any]:
    """The pod's `kruise.io/sidecarset-hash` entry for `sidecarset`."""
    return json.loads(pod["metadata"]["annotations"]["kruise.io/sidecarset-hash"])[sidecarset]


async def pulls_failing(case: Case, image: str, count: int) -> None:
    """`count` pods hold a container waiting on a failed pull of `image`: the rollout's half-way state
    comes from the unpullable image (as upstream's InvalidImage on kind), not from a passing moment."""

    def pulling(status: dict[str, Any]) -> bool:
        waiting = (status.get("state") or {}).get("waiting") or {}
        return status.get("image") == image and waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff")

    def failing(pods: list[dict[str, Any]]) -> bool:
        statuses = [(p.get("status") or {}).get("containerStatuses") or [] for p in pods]
        return sum(1 for pod in statuses if any(pulling(s) for s in pod)) == count

    await until(case.pods, failing, f"{count} pod(s) failing to pull {image}", timeout=WAIT)
