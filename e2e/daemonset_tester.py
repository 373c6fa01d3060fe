"""kubectl versions of the helpers upstream's Advanced DaemonSet e2e cases are built from
(`test/e2e/framework/v1alpha1/daemonset_util.go`): the base DaemonSet, where its pods must run, node
labels the cases set, and the checks on old vs new pods. Reads and writes go through
`daemonsets.v1alpha1.apps.kruise.io` (on API set 1.9 stored at v1beta1, served at v1alpha1 too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from upstream_kit import Case, Obj, controlled_by, is_ready, tolerates

API_VERSIONS = ("v1alpha1", "v1beta1")
LABEL_PREFIX = "daemonset-"
NAME_LABEL = LABEL_PREFIX + "name"
COLOR_LABEL = LABEL_PREFIX + "color"
REVISION_HASH = "controller-revision-hash"
LIFECYCLE_STATE = "lifecycle.apps.kruise.io/state"
RETRY_TIMEOUT = 300.0  # DaemonSetRetryTimeout


def daemonset_resource(version: str) -> str:
    """The fully qualified resource: a bare `daemonset` would be apps/v1's, or kubectl's preferred version."""
    return f"daemonsets.{version}.apps.kruise.io"


def update_revision_field(version: str) -> str:
    """The status field naming the update revision's hash: v1beta1 renamed v1alpha1's `daemonSetHash`."""
    return "daemonSetHash" if version == "v1alpha1" else "updateRevision"


def new_daemonset(
    case: Case, name: str, label: dict[str, str], image: str, strategy: Obj, version: str
) -> Obj:
    """`NewDaemonSet`: one busybox-named container sleeping, host network, tolerating every taint."""
    return {
        "apiVersion": f"apps.kruise.io/{version}",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "burstReplicas": 50,
            "selector": {"matchLabels": dict(label)},
            "template": {
                "metadata": {"labels": dict(label)},
                "spec": {
                    "containers": [
                        {"name": "busybox", "image": image, "command": ["/bin/sh", "-c", "sleep 10000000"]}
                    ],
                    "hostNetwork": True,
                    "tolerations": [{"operator": "Exists"}],
                    "terminationGracePeriodSeconds": 3,
                },
            },
            "updateStrategy": dict(strategy),
        },
    }


def can_schedule_on(node: Obj, ds: Obj) -> bool:
    """`CanScheduleOnNode`: the daemon pod's node selector matches and every NoSchedule/NoExecute taint
    is tolerated (the cases use no node affinity)."""
    spec = ds["spec"]["template"]["spec"]
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    taints = [
        t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") != "PreferNoSchedule"
    ]
    return all(tolerates(spec.get("tolerations") or [], t) for t in taints)


def is_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """`podutil.IsPodAvailable`: ready, and for at least minReadySeconds."""
    if not is_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    since = datetime.fromisoformat(ready["lastTransitionTime"].replace("Z", "+00:00"))
    return (now - since).total_seconds() > min_ready_seconds


def target_node(pod: Obj) -> str | None:
    """`daemonutil.GetTargetNodeName`: the bound node, else the node the daemon pod's affinity pins."""
    if (pod.get("spec") or {}).get("nodeName"):
        return pod["spec"]["nodeName"]
    required = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return field["values"][0]
    return None


def has_readiness_gate(pod: Obj) -> bool:
    """`daemonset.ContainsReadinessGate`: the pod carries kruise's InPlaceUpdateReady gate."""
    return any(
        g.get("conditionType") == "InPlaceUpdateReady" for g in pod["spec"].get("readinessGates") or []
    )


def lifecycle_state(pod: Obj) -> str:
    return (pod["metadata"].get("labels") or {}).get(LIFECYCLE_STATE, "")


class DaemonSetTester:
    """`DaemonSetTester` over kubectl, bound to one case's namespace and one API version."""

    def __init__(self, case: Case, version: str) -> None:
        assert version in API_VERSIONS, version
        self.case = case
        self.version = version
        self.resource = daemonset_resource(version)

    def new_daemonset(self, name: str, label: dict[str, str], image: str, strategy: Obj) -> Obj:
        return new_daemonset(self.case, name, label, image, strategy, self.version)

    async def create(self, ds: Obj) -> Obj:
        return await self.case.create(ds)

    async def get(self, name: str) -> Obj:
        return await self.case.must_get(self.resource, name)

    async def update(self, name: str, change: Callable[[Obj], None]) -> Obj:
        return await self.case.update(self.resource, name, change)

    async def patch(self, name: str, kind: str, patch: Obj) -> Obj:
        return await self.case.patch(self.resource, name, kind, patch)

    async def delete(self, name: str) -> None:
        await self.case.kubectl("delete", self.resource, name, "--ignore-not-found", "--wait=false")

    async def nodes(self) -> list[Obj]:
        _, out = await self.case.cluster.kubectl("get", "nodes", "-o", "json")
        return json.loads(out)["items"]

    async def ready_schedulable_nodes(self) -> list[str]:
        """`GetReadySchedulableNodesOrDie`: Ready, not cordoned, untainted."""
        names = []
        for node in await self.nodes():
            ready = next((c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), None)
            if node["spec"].get("unschedulable") or not ready or ready["status"] != "True":
                continue
            if any(t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints") or []):
                continue
            names.append(node["metadata"]["name"])
        assert names, "no ready, schedulable nodes"
        return sorted(names)

    async def schedulable_nodes(self, ds: Obj) -> list[str]:
        return [n["metadata"]["name"] for n in await self.nodes() if can_schedule_on(n, ds)]

    async def daemon_pods_on(self, ds: Obj, node_names: list[str]) -> bool:
        """`CheckDaemonPodOnNodes`: one available pod of `ds` on each of `node_names`, none elsewhere."""
        now = datetime.now(UTC)
        counts: dict[str, int] = {}
        for pod in await self.case.list("pods"):
            if not controlled_by(pod, ds["metadata"]["uid"]) or pod["metadata"].get("deletionTimestamp"):
                continue
            if is_available(pod, ds["spec"].get("minReadySeconds") or 0, now):
                node = pod["spec"].get("nodeName", "")
                counts[node] = counts.get(node, 0) + 1
        if any(counts.get(n, 0) > 1 for n in node_names):
            return False
        return len(counts) == len(node_names) and all(n in counts for n in node_names)

    async def running_on_all_nodes(self, ds: Obj) -> bool:
        """`CheckRunningOnAllNodes`."""
        return await self.daemon_pods_on(ds, await self.schedulable_nodes(ds))

    async def running_on_no_nodes(self, ds: Obj) -> bool:
        return await self.daemon_pods_on(ds, [])

    async def wait_running_on_all_nodes(self, ds: Obj, what: str) -> None:
        await self.case.eventually(lambda: self.running_on_all_nodes(ds), bool, what, timeout=RETRY_TIMEOUT)

    async def check_status(self, name: str) -> None:
        """`CheckDaemonStatus`: desired equals scheduled or ready."""
        status = (await self.get(name)).get("status") or {}
        desired = status.get("desiredNumberScheduled", 0)
        scheduled, ready = status.get("currentNumberScheduled", 0), status.get("numberReady", 0)
        assert desired in (scheduled, ready), (
            f"Error in daemon status. DesiredScheduled: {desired}, CurrentScheduled: {scheduled}, "
            f"Ready: {ready}"
        )

    async def ready(self, name: str) -> bool:
        """`CheckDaemonReady`: every desired pod updated, and scheduled or ready."""
        status = (await self.get(name)).get("status") or {}
        desired = status.get("desiredNumberScheduled", 0)
        if desired != status.get("updatedNumberScheduled", 0):
            return False
        return desired == status.get("currentNumberScheduled", 0) or desired == status.get("numberReady", 0)

    async def set_node_labels(self, node: str, labels: dict[str, str]) -> Obj:
        """`SetDaemonSetNodeLabels`: the node's `daemonset-*` labels become exactly `labels`."""
        _, out = await self.case.cluster.kubectl("get", "node", node, "-o", "json")
        current = {k for k in json.loads(out)["metadata"].get("labels") or {} if k.startswith(LABEL_PREFIX)}
        patch: dict[str, str | None] = dict.fromkeys(current - labels.keys())
        patch.update(labels)
        _, out = await self.case.cluster.kubectl(
            "patch",
            "node",
            node,
            "--type",
            "merge",
            "-p",
            json.dumps({"metadata": {"labels": patch}}),
            "-o",
            "json",
        )
        updated = json.loads(out)
        daemon_labels = {k: v for k, v in updated["metadata"]["labels"].items() if k.startswith(LABEL_PREFIX)}
        assert daemon_labels == labels, f"Could not set daemon set test labels as expected: {daemon_labels}"
        return updated

    async def pods(self, label: dict[str, str]) -> list[Obj]:
        """`ListDaemonPods`: the namespace's pods with `label`, deleting ones included."""
        return await self.case.list("pods", label)

    async def nodes_to_pods(self, label: dict[str, str]) -> dict[str, list[Obj]]:
        """`GetNodesToDaemonPods`."""
        grouped: dict[str, list[Obj]] = {}
        for pod in await self.pods(label):
            node = target_node(pod)
            if node is not None:
                grouped.setdefault(node, []).append(pod)
        return grouped

    async def pods_have_image(self, label: dict[str, str], image: str) -> bool:
        """`GetNewPodsToCheckImage`: every container status reports `image` (compared by its last path
        segment, as upstream does)."""
        want = image.rsplit("/", 1)[-1]
        for pod in await self.pods(label):
            for status in (pod.get("status") or {}).get("containerStatuses") or []:
                if status.get("image", "").rsplit("/", 1)[-1] != want:
                    return False
        return True


def pods_not_recreated(old: list[Obj], new: list[Obj]) -> bool:
    """`CheckPodHasNotRecreate`: every new pod's name is an old pod's name."""
    names = {p["metadata"]["name"] for p in old}
    return all(p["metadata"]["name"] in names for p in new)


def pod_names(pods: list[Obj]) -> list[str]:
    """`SortPodNames`."""
    return sorted({p["metadata"]["name"] for p in pods})
