"""What upstream's Advanced StatefulSet e2e (test/e2e/apps/v1beta1/statefulset.go) builds on, over kubectl:
`NewStatefulSet` / `NewStatefulSetPVC` / `CreateServiceSpec` of test/e2e/framework, and the
`StatefulSetTester` waits (`WaitForState`, `WaitForStatus`, `WaitForRunningAndReady`, the status-count
waits, `WaitForPVCState`) as polls with a deadline. Upstream's storage classes `allow-volume-expansion`
and `disallow-volume-expansion` (tools/hack/csi-driver-host-path, on the hostpath CSI driver) are made
on the sandbox's own provisioner, which provisions, binds and expands claims the same way."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from harness import Cluster
from upstream_kit import Case, Obj, is_ready

STS = "statefulsets.v1beta1.apps.kruise.io"
# imageutils.Nginx / imageutils.NginxNew (apps2.NginxImage / apps2.NewNginxImage upstream)
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"
REVISION_LABEL = "controller-revision-hash"
SPECIFIED_DELETE = "apps.kruise.io/specified-delete"
# StatefulSetTimeout is 10 minutes upstream; kind's pods start in seconds, the sandbox's faster
STS_WAIT = 300.0

CAN_EXPAND_SC = "allow-volume-expansion"
CANNOT_EXPAND_SC = "disallow-volume-expansion"
SANDBOX_PROVISIONER = "sandbox.kruise.io/volumes"
DEFAULT_CLASS = "standard"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

_ORDINAL = re.compile(r"-(\d+)$")


def storage_class(name: str, expandable: bool) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": SANDBOX_PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": expandable,
    }


async def ensure_expansion_classes(cluster: Cluster) -> None:
    """Upstream's suite expects both classes on the cluster (its BeforeEach fails without them); they are
    cluster-wide, so every case of the session shares them (`kubectl apply` keeps that idempotent)."""
    for sc in (storage_class(CAN_EXPAND_SC, True), storage_class(CANNOT_EXPAND_SC, False)):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(sc))


async def ensure_default_class(cluster: Cluster) -> None:
    """kind's default class `standard` (the sandbox has none of its own): upstream's claim templates name
    no class, and its `SkipIfNoDefaultStorageClass` looks for one."""
    sc = storage_class(DEFAULT_CLASS, False)
    sc["metadata"]["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(sc))


def headless_service(name: str, selector: dict[str, str]) -> Obj:
    """`CreateServiceSpec(name, "", true, selector)`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "selector": dict(selector),
            "ports": [{"port": 80, "name": "http", "protocol": "TCP"}],
            "clusterIP": "None",
        },
    }


def new_statefulset_pvc(name: str) -> Obj:
    """`NewStatefulSetPVC`: ReadWriteOnce, a request of one byte, no class."""
    return {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1"}}},
    }


def new_statefulset(
    name: str,
    ns: str,
    service: str,
    replicas: int,
    stateful_mounts: list[Obj],
    pod_mounts: list[Obj],
    labels: dict[str, str],
) -> Obj:
    """`NewStatefulSet`: nginx; `stateful_mounts` backed by claim templates, `pod_mounts` by host paths."""
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "replicas": replicas,
            "template": {
                "metadata": {"labels": dict(labels), "annotations": {}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": NGINX_IMAGE,
                            "volumeMounts": [*stateful_mounts, *pod_mounts],
                            "imagePullPolicy": "IfNotPresent",
                            "resources": {
                                "requests": {"cpu": "200m", "memory": "200Mi"},
                                "limits": {"cpu": "1", "memory": "1Gi"},
                            },
                        }
                    ],
                    "volumes": [
                        {"name": m["name"], "hostPath": {"path": f"/tmp/{m['name']}"}} for m in pod_mounts
                    ],
                },
            },
            "updateStrategy": {"type": "RollingUpdate"},
            "volumeClaimTemplates": [new_statefulset_pvc(m["name"]) for m in stateful_mounts],
            "serviceName": service,
        },
    }


def ordinal(pod: Obj) -> int:
    match = _ORDINAL.search(pod["metadata"]["name"])
    return int(match.group(1)) if match else -1


def sort_stateful_pods(pods: list[Obj]) -> list[Obj]:
    """`SortStatefulPods`: by ordinal."""
    return sorted(pods, key=ordinal)


def volume_template_name(pvc_name: str, set_name: str) -> str | None:
    """`GetVolumeTemplateName`: the claim template a claim `<template>-<set>-<ordinal>` came from."""
    at = pvc_name.find(set_name)
    return pvc_name[: at - 1] if at > 0 else None


def status(sts: Obj) -> dict[str, Any]:
    return sts.get("status") or {}


def observed(sts: Obj, generation: int) -> bool:
    return int(status(sts).get("observedGeneration") or 0) >= generation


class StatefulSetTester:
    """`v1beta1.StatefulSetTester` for one case's namespace."""

    def __init__(self, case: Case) -> None:
        self.case = case

    async def get(self, name: str) -> Obj:
        return await self.case.must_get(STS, name)

    async def create(self, sts: Obj) -> Obj:
        return await self.case.create(sts)

    async def pods(self, sts: Obj) -> list[Obj]:
        """`GetPodList`: the pods the set's selector matches."""
        return await self.case.list("pods", sts["spec"]["selector"]["matchLabels"])

    async def pvcs(self, sts: Obj) -> list[Obj]:
        """`GetPVCList`: the claims the set's selector matches."""
        return await self.case.list("persistentvolumeclaims", sts["spec"]["selector"]["matchLabels"])

    async def wait_for_state(
        self, sts: Obj, until: Callable[[Obj, list[Obj]], bool], what: str, timeout: float = STS_WAIT
    ) -> tuple[Obj, list[Obj]]:
        """`WaitForState`: poll the set and its pods until `until(set, pods)`; returns that read."""

        async def probe() -> tuple[Obj, list[Obj]]:
            current = await self.get(sts["metadata"]["name"])
            return current, await self.pods(current)

        return await self.case.eventually(probe, lambda read: until(*read), what, timeout)

    async def wait_for_status(self, sts: Obj) -> Obj:
        """`WaitForStatus`: the controller has observed the set's generation."""
        generation = int(sts["metadata"].get("generation") or 0)
        current, _ = await self.wait_for_state(
            sts, lambda s, _: observed(s, generation), f"observedGeneration >= {generation}"
        )
        return current

    async def wait_for_running_and_ready(self, count: int, sts: Obj) -> list[Obj]:
        """`WaitForRunningAndReady`: exactly `count` pods, every one Running and Ready (more is a
        failure upstream, not a reason to wait)."""

        async def probe() -> list[Obj]:
            pods = await self.pods(sts)
            assert len(pods) <= count, f"too many pods scheduled, expected {count} got {len(pods)}"
            return pods

        def done(pods: list[Obj]) -> bool:
            return len(pods) == count and all(
                (p.get("status") or {}).get("phase") == "Running" and is_ready(p) for p in pods
            )

        return await self.case.eventually(probe, done, f"{count} pods running and ready", STS_WAIT)

    async def wait_for_pod_ready(self, sts: Obj, pod_name: str) -> tuple[Obj, list[Obj]]:
        """`WaitForPodReady`: the pod exists and is Ready."""

        def ready(_: Obj, pods: list[Obj]) -> bool:
            return any(p["metadata"]["name"] == pod_name and is_ready(p) for p in pods)

        return await self.wait_for_state(sts, ready, f"pod {pod_name} ready")

    async def wait_for_pod_not_ready(self, sts: Obj, pod_name: str) -> tuple[Obj, list[Obj]]:
        """`WaitForPodNotReady`: the pod exists and is not Ready."""

        def not_ready(_: Obj, pods: list[Obj]) -> bool:
            return any(p["metadata"]["name"] == pod_name and not is_ready(p) for p in pods)

        return await self.wait_for_state(sts, not_ready, f"pod {pod_name} not ready")

    async def wait_for_rolling_update(self, sts: Obj) -> tuple[Obj, list[Obj]]:
        """`WaitForRollingUpdate`: every pod exists and the set's current revision caught up with its
        update revision. Returns the set and its pods sorted by ordinal."""
        assert sts["spec"]["updateStrategy"]["type"] == "RollingUpdate", sts["spec"]["updateStrategy"]

        def done(current: Obj, pods: list[Obj]) -> bool:
            return len(pods) >= int(current["spec"]["replicas"]) and status(current).get(
                "updateRevision"
            ) == status(current).get("currentRevision")

        current, pods = await self.wait_for_state(sts, done, "rolling update complete")
        return current, sort_stateful_pods(pods)

    async def _wait_for_count(self, sts: Obj, what: str, count: Callable[[Obj], bool]) -> Obj:
        generation = int(sts["metadata"].get("generation") or 0)

        async def probe() -> Obj:
            return await self.get(sts["metadata"]["name"])

        return await self.case.eventually(
            probe, lambda s: observed(s, generation) and count(s), what, STS_WAIT
        )

    async def wait_for_status_replicas(self, sts: Obj, expected: int) -> Obj:
        """`WaitForStatusReplicas`."""
        return await self._wait_for_count(
            sts, f"status.replicas {expected}", lambda s: int(status(s).get("replicas") or 0) == expected
        )

    async def wait_for_status_ready_replicas(self, sts: Obj, expected: int) -> Obj:
        """`WaitForStatusReadyReplicas`."""
        return await self._wait_for_count(
            sts,
            f"status.readyReplicas {expected}",
            lambda s: int(status(s).get("readyReplicas") or 0) == expected,
        )

    async def wait_for_status_pvc_ready_replicas(self, sts: Obj, expected: int) -> Obj:
        """`WaitForStatusPVCReadyReplicas`: every entry of `status.volumeClaims` counts `expected`
        compatible and compatible-ready replicas."""

        def compatible(s: Obj) -> bool:
            return all(
                int(t.get("compatibleReplicas") or 0) == expected
                and int(t.get("compatibleReadyReplicas") or 0) == expected
                for t in status(s).get("volumeClaims") or []
            )

        return await self._wait_for_count(sts, f"volumeClaims compatible(ready) {expected}", compatible)

    async def wait_for_pvc_state(
        self, sts: Obj, until: Callable[[Obj, list[Obj]], bool], what: str
    ) -> tuple[Obj, list[Obj]]:
        """`WaitForPVCState`: poll the set and its claims until `until(set, claims)`."""

        async def probe() -> tuple[Obj, list[Obj]]:
            current = await self.get(sts["metadata"]["name"])
            return current, await self.pvcs(current)

        return await self.case.eventually(probe, lambda read: until(*read), what, STS_WAIT)

    async def update_with_retries(self, name: str, change: Callable[[Obj], None]) -> Obj:
        """`UpdateStatefulSetWithRetries`: read, change, replace; a conflict re-reads."""
        return await self.case.update(STS, name, change)

    async def try_update(self, name: str, change: Callable[[Obj], None]) -> tuple[bool, str]:
        """An update that may be refused: (accepted, kubectl's output). A conflict re-reads and re-applies,
        as `updateStatefulSetWithRetries`; any other refusal is the answer (upstream retries it for a
        minute and gets the same refusal each time)."""
        out = ""
        for _ in range(10):
            current = await self.get(name)
            change(current)
            code, out = await self.case.kubectl(
                "replace", "-f", "-", "-o", "json", stdin=json.dumps(current), check=False
            )
            if code == 0:
                return True, out
            if "the object has been modified" not in out:
                return False, out
        return False, out


async def set_pod_specified_delete(case: Case, name: str) -> None:
    """`setPodSpecifiedDelete`: label the pod `apps.kruise.io/specified-delete: "true"`."""
    await case.patch("pod", name, "strategic", {"metadata": {"labels": {SPECIFIED_DELETE: "true"}}})


def revision_of(pod: Obj) -> str | None:
    return pod["metadata"].get("labels", {}).get(REVISION_LABEL)


async def wait_for_partitioned_rolling_update(sst: StatefulSetTester, sts: Obj) -> tuple[Obj, list[Obj]]:
    """`WaitForPartitionedRollingUpdate`: every pod exists, and those at or above the partition carry
    the update revision (with no partition left, the set's current revision has caught up too).
    Returns the set and its pods sorted by ordinal."""
    assert sts["spec"]["updateStrategy"]["type"] == "RollingUpdate", sts["spec"]["updateStrategy"]
    assert (sts["spec"]["updateStrategy"].get("rollingUpdate") or {}).get("partition") is not None

    def done(current: Obj, pods: list[Obj]) -> bool:
        partition = int(current["spec"]["updateStrategy"]["rollingUpdate"]["partition"])
        replicas = int(current["spec"]["replicas"])
        pods = sort_stateful_pods(pods)
        if len(pods) < replicas:
            return False
        update = status(current).get("updateRevision")
        if partition <= 0 and update != status(current).get("currentRevision"):
            return False
        return all(revision_of(pods[i]) == update for i in range(replicas - 1, partition - 1, -1))

    current, pods = await sst.wait_for_state(sts, done, "partitioned rolling update")
    return current, sort_stateful_pods(pods)


async def specified_delete_pod(
    case: Case, sst: StatefulSetTester, ss: Obj, pods: list[Obj], idx: int
) -> tuple[Obj, list[Obj]]:
    """`specifiedDeletePod` of upstream's `testWithSpecifiedDeleted`: label the pod at `idx` (by
    ordinal) for deletion, wait for a new pod of that name and for it to be Ready; returns the set and
    its pods, sorted."""
    pods = sort_stateful_pods(pods)
    old_uid = pods[idx]["metadata"]["uid"]
    name = pods[idx]["metadata"]["name"]
    await set_pod_specified_delete(case, name)
    ss = await sst.wait_for_status(ss)

    def replaced(_: Obj, current: list[Obj]) -> bool:
        return any(p["metadata"]["name"] == name and p["metadata"]["uid"] != old_uid for p in current)

    ss, _ = await sst.wait_for_state(ss, replaced, f"pod {name} replaced")
    await sst.wait_for_pod_ready(ss, name)
    return ss, sort_stateful_pods(await sst.pods(ss))


async def with_specified_deleted(
    case: Case, sst: StatefulSetTester, ss: Obj, change: Callable[[Obj], None] | None = None
) -> Obj:
    """Upstream's `testWithSpecifiedDeleted`: 4 replicas; specified-delete pod 1; update the image with
    partition 2 (and `change`); specified-delete pods 2 and 1; pods at or above the partition end on the
    update revision, those below on the current one."""
    ss["spec"]["replicas"] = 4
    ss = await sst.create(ss)
    await sst.wait_for_running_and_ready(4, ss)
    ss = await sst.wait_for_status(ss)
    current_revision = ss["status"]["currentRevision"]
    update_revision = ss["status"]["updateRevision"]
    assert current_revision == update_revision, (
        f"StatefulSet {case.ns}/{ss['metadata']['name']} created with update revision {update_revision} "
        f"not equal to current revision {current_revision}"
    )
    pods = await sst.pods(ss)
    for pod in pods:
        assert pod["metadata"]["labels"][REVISION_LABEL] == current_revision, pod["metadata"]
    ss, pods = await specified_delete_pod(case, sst, ss, pods, 1)

    old_image = ss["spec"]["template"]["spec"]["containers"][0]["image"]
    assert old_image != NEW_NGINX_IMAGE, "Incorrect test setup: should update to a different image"
    partition = 2

    def update(update: Obj) -> None:
        update["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
        update["spec"]["updateStrategy"]["rollingUpdate"] = {"partition": partition}
        if change is not None:
            change(update)

    ss = await sst.update_with_retries(ss["metadata"]["name"], update)
    ss, pods = await specified_delete_pod(case, sst, ss, pods, 2)

    # Creating a new revision
    ss = await sst.wait_for_status(ss)
    current_revision = ss["status"]["currentRevision"]
    update_revision = ss["status"]["updateRevision"]
    assert current_revision != update_revision, (
        "Current revision should not equal update revision during rolling update"
    )
    ss, pods = await specified_delete_pod(case, sst, ss, pods, 1)
    for i, pod in enumerate(pods):
        want = update_revision if i >= partition else current_revision
        got = pod["metadata"]["labels"][REVISION_LABEL]
        assert got == want, f"Pod {case.ns}/{pod['metadata']['name']} revision {got} is not {want}"
    return ss


def set_image(image: str) -> Callable[[Obj], None]:
    def change(update: Obj) -> None:
        update["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return change
