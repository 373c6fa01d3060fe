"""In-place resource resize of CloneSet pods through `kruise sandbox up --feature-gates
InPlaceWorkloadVerticalScaling=true` (kruise-webhook, kruise-manager as real processes; the
sandbox's kubelets actuate resizes) and the real kubectl: a cpu/memory change that keeps the QoS
class resizes the running pods (same UIDs, no restart, status resources follow the spec), a direct
`kubectl patch pod --subresource=resize` works too, and a QoS-changing change recreates the pods."""

from __future__ import annotations

import json

from harness import Cluster, until

NAME = "cs-resize"
LABEL = "app=cs-resize"

BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
# Bigger everywhere (1.33 refuses a memory limit decrease unless memory's resizePolicy restarts).
BURSTABLE_BIGGER = {
    "requests": {"cpu": "150m", "memory": "96Mi"},
    "limits": {"cpu": "300m", "memory": "192Mi"},
}
# requests == limits: the QoS class moves from Burstable to Guaranteed.
GUARANTEED = {"requests": {"cpu": "300m", "memory": "192Mi"}, "limits": {"cpu": "300m", "memory": "192Mi"}}


def container(resources: dict) -> dict:
    """The whole container as the user writes it (a merge patch replaces the containers list)."""
    return {
        "name": "nginx",
        "image": "nginx:alpine",
        "imagePullPolicy": "IfNotPresent",
        "resources": resources,
    }


CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": NAME, "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": NAME}},
        "updateStrategy": {"type": "InPlaceIfPossible"},
        "template": {
            "metadata": {"labels": {"app": NAME}},
            "spec": {"containers": [container(BURSTABLE)]},
        },
    },
}


async def live_pods(cluster: Cluster) -> dict[str, dict]:
    """name -> pod, for the CloneSet's pods not being deleted."""
    _, out = await cluster.kubectl("get", "pods", "-l", LABEL, "-o", "json")
    items = json.loads(out)["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


async def jsonpath(cluster: Cluster, kind: str, name: str, path: str) -> str:
    _, out = await cluster.kubectl("get", kind, name, "-o", f"jsonpath={path}")
    return out


async def resources_of(cluster: Cluster, pod: str) -> tuple[dict, dict]:
    """(spec resources, status.containerStatuses[0].resources) of the pod's container, as kubectl
    prints them with -o jsonpath."""
    spec = await jsonpath(cluster, "pod", pod, "{.spec.containers[0].resources}")
    status = await jsonpath(cluster, "pod", pod, "{.status.containerStatuses[0].resources}")
    return json.loads(spec or "{}"), json.loads(status or "{}")


async def wait_rolled_out(cluster: Cluster) -> dict:
    """Waits for the CloneSet to observe its generation and count 2 updated, ready pods; returns it."""
    _, out = await cluster.kubectl("get", "clone", NAME, "-o", "json")
    generation = json.loads(out)["metadata"]["generation"]
    for path, value in (
        (".status.observedGeneration", generation),
        (".status.updatedReplicas", 2),
        (".status.readyReplicas", 2),
        (".status.updatedReadyReplicas", 2),
    ):
        await cluster.kubectl("wait", f"clone/{NAME}", f"--for=jsonpath={{{path}}}={value}", "--timeout=90s")
    _, out = await cluster.kubectl("get", "clone", NAME, "-o", "json")
    return json.loads(out)


def resize_settled(pod: dict, want: dict) -> bool:
    """The kubelet has applied ``want``: spec and status resources equal it, no resize condition."""
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    conditions = {c["type"] for c in status.get("conditions") or []}
    return (
        pod["spec"]["containers"][0].get("resources") == want
        and bool(statuses)
        and statuses[0].get("resources") == want
        and not conditions & {"PodResizeInProgress", "PodResizePending"}
        and (pod["metadata"].get("labels") or {}).get("lifecycle.apps.kruise.io/state", "Normal") == "Normal"
    )


async def patch_template(cluster: Cluster, resources: dict) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [container(resources)]}}}}
    await cluster.kubectl("patch", "clone", NAME, "--type", "merge", "-p", json.dumps(patch))


async def clone_row(cluster: Cluster) -> dict[str, str]:
    _, table = await cluster.kubectl("get", "clone", NAME)
    header, row = table.strip().splitlines()
    return dict(zip(header.split(), row.split(), strict=True))


async def test_cloneset_resources_resized_in_place(kruise_sandbox_gated: Cluster):
    cluster = kruise_sandbox_gated
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(CLONESET))
    first_revision = (await wait_rolled_out(cluster))["status"]["updateRevision"]
    before = await until(
        lambda: live_pods(cluster),
        lambda pods: len(pods) == 2 and all(resize_settled(p, BURSTABLE) for p in pods.values()),
        "2 running pods with the Burstable resources",
    )
    uids = {name: p["metadata"]["uid"] for name, p in before.items()}
    assert {p["status"]["qosClass"] for p in before.values()} == {"Burstable"}

    # cpu/memory change, still Burstable: resized in place.
    await patch_template(cluster, BURSTABLE_BIGGER)
    cs = await wait_rolled_out(cluster)
    assert cs["status"]["updateRevision"] != first_revision
    after = await until(
        lambda: live_pods(cluster),
        lambda pods: len(pods) == 2 and all(resize_settled(p, BURSTABLE_BIGGER) for p in pods.values()),
        "both pods resized to the bigger Burstable resources",
    )
    assert {name: p["metadata"]["uid"] for name, p in after.items()} == uids
    for name, pod in after.items():
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
        assert pod["status"]["qosClass"] == "Burstable"
        assert pod["metadata"]["labels"]["controller-revision-hash"] == cs["status"]["updateRevision"]
        state = json.loads(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
        assert state["revision"] == cs["status"]["updateRevision"]
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == "True" and conditions["Ready"] == "True"
        # What kubectl prints: the spec's resources and the container status's, both the new values.
        spec, status = await resources_of(cluster, name)
        assert spec == BURSTABLE_BIGGER and status == BURSTABLE_BIGGER
        restarts = await jsonpath(cluster, "pod", name, "{.status.containerStatuses[0].restartCount}")
        assert restarts == "0"
    _, events = await cluster.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={NAME}", "-o", "json"
    )
    in_place = {
        e["message"] for e in json.loads(events)["items"] if e["reason"] == "SuccessfulUpdatePodInPlace"
    }
    revision = cs["status"]["updateRevision"]
    assert in_place == {f"successfully update pod {name} in-place(revision {revision})" for name in after}
    row = await clone_row(cluster)
    assert (row["DESIRED"], row["UPDATED"], row["UPDATED_READY"], row["READY"], row["TOTAL"]) == (
        "2", "2", "2", "2", "2",
    )  # fmt: skip

    # A direct resize of one pod through kubectl's resize subresource (cpu request only; Burstable).
    target = sorted(after)[0]
    direct = {"requests": {"cpu": "120m", "memory": "96Mi"}, "limits": BURSTABLE_BIGGER["limits"]}
    resize = {"spec": {"containers": [{"name": "nginx", "resources": {"requests": {"cpu": "120m"}}}]}}
    await cluster.kubectl("patch", "pod", target, "--subresource=resize", "-p", json.dumps(resize))
    resized = await until(
        lambda: live_pods(cluster),
        lambda pods: target in pods and resize_settled(pods[target], direct),
        f"pod {target} resized to cpu request 120m by kubectl patch --subresource=resize",
    )
    assert resized[target]["metadata"]["uid"] == uids[target]
    assert resized[target]["status"]["containerStatuses"][0]["restartCount"] == 0
    assert await resources_of(cluster, target) == (direct, direct)

    # requests == limits: the QoS class would change (Burstable -> Guaranteed), so the pods are recreated.
    await patch_template(cluster, GUARANTEED)
    cs = await wait_rolled_out(cluster)
    recreated = await until(
        lambda: live_pods(cluster),
        lambda pods: (
            len(pods) == 2
            and not set(p["metadata"]["uid"] for p in pods.values()) & set(uids.values())
            and all(resize_settled(p, GUARANTEED) for p in pods.values())
        ),
        "2 new pods with the Guaranteed resources",
    )
    for pod in recreated.values():
        assert pod["status"]["qosClass"] == "Guaranteed"
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
        assert pod["metadata"]["labels"]["controller-revision-hash"] == cs["status"]["updateRevision"]
    row = await clone_row(cluster)
    assert (row["UPDATED"], row["READY"], row["TOTAL"]) == ("2", "2", "2")

    await cluster.kubectl("delete", "clone", NAME, "--wait=true", "--timeout=60s")
