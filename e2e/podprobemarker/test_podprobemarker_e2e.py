"""PodProbeMarker through `kruise sandbox up` (kruise-webhook, kruise-manager and a kruise-daemon per
node as real processes) and the real kubectl.

A CloneSet `game-server` and a PodProbeMarker in the shape of upstream's doc example: an `exec` probe
`Idle` (run by kruise-daemon through its node's CRI ExecSync, which the sandbox's fake runtime answers
with exit 0) and a `tcpSocket` probe `Serving` on the named port `http` (kruise-daemon really dials
the pod IP). `kubectl get pod -o json` shows the Succeeded policy of Idle and the condition
`game.io/idle`; `kubectl get nodepodprobes` shows one object per node holding the pods' probes.

Simulated containers run no process, so nothing listens on a pod's IP and `Serving` starts Failed.
The sandbox's pod IPs are loopback addresses of this machine, so the test plays the container's server:
it listens on one pod's IP and port, the marker flips that pod (and only it) to `serving=true`, then it
closes the port and the marker flips back to the Failed policy. Deleting the marker takes its probes
out of every NodePodProbe and releases the finalizer. A second scenario follows a marker through
scale-out, scale-in, the removal of one of its probes and a pod relabelled out of its selector."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from harness import Cluster, until

NS = "default"
PORT = 8080
CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "game-server", "namespace": NS},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "game-server"}},
        "template": {
            "metadata": {"labels": {"app": "game-server"}},
            "spec": {
                "containers": [
                    {
                        "name": "game-server",
                        "image": "nginx:alpine",
                        "ports": [{"name": "http", "containerPort": PORT}],
                    }
                ]
            },
        },
    },
}

PROBE_MARKER = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "PodProbeMarker",
    "metadata": {"name": "game-server-probe", "namespace": NS},
    "spec": {
        "selector": {"matchLabels": {"app": "game-server"}},
        "probes": [
            {
                "name": "Idle",
                "containerName": "game-server",
                "probe": {
                    "exec": {"command": ["/home/game/idle.sh"]},
                    "initialDelaySeconds": 1,
                    "timeoutSeconds": 3,
                    "periodSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "markerPolicy": [
                    {
                        "state": "Succeeded",
                        "labels": {"gameserver-idle": "true"},
                        "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"},
                    },
                    {
                        "state": "Failed",
                        "labels": {"gameserver-idle": "false"},
                        "annotations": {"controller.kubernetes.io/pod-deletion-cost": "10"},
                    },
                ],
                "podConditionType": "game.io/idle",
            },
            {
                "name": "Serving",
                "containerName": "game-server",
                "probe": {
                    "tcpSocket": {"port": "http"},
                    "timeoutSeconds": 1,
                    "periodSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 2,
                },
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"gameserver-serving": "true"}},
                    {"state": "Failed", "labels": {"gameserver-serving": "false"}},
                ],
                "podConditionType": "game.io/serving",
            },
        ],
    },
}


async def get_json(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def game_pods(cluster: Cluster) -> list[dict]:
    return (await get_json(cluster, "pods", "-n", NS, "-l", "app=game-server"))["items"]


def condition(pod: dict, kind: str) -> dict | None:
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == kind), None)


def marked(pod: dict, idle: str, serving: str) -> bool:
    """Both probes' policies and conditions written: Idle Succeeded, Serving as ``serving``."""
    labels = pod["metadata"].get("labels") or {}
    idle_condition, serving_condition = condition(pod, "game.io/idle"), condition(pod, "game.io/serving")
    return (
        labels.get("gameserver-idle") == idle
        and labels.get("gameserver-serving") == serving
        and idle_condition is not None
        and idle_condition["status"] == ("True" if idle == "true" else "False")
        and serving_condition is not None
        and serving_condition["status"] == ("True" if serving == "true" else "False")
    )


@contextlib.asynccontextmanager
async def listening(ip: str, port: int) -> AsyncIterator[None]:
    """A TCP server on the pod's IP and port, standing in for the container's process."""

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(accept, ip, port)
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()


def probe_names(npp: dict) -> dict[str, list[str]]:
    """pod name → the probe names a NodePodProbe's spec holds for it."""
    return {
        entry["name"]: [probe["name"] for probe in entry.get("probes") or []]
        for entry in (npp.get("spec") or {}).get("podProbes") or []
    }


async def test_pods_marked_by_exec_and_tcp_probes_and_unmarked_on_failure(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(CLONESET))
    await cluster.kubectl(
        "wait", "cloneset/game-server", "--for=jsonpath={.status.readyReplicas}=2", "--timeout=90s"
    )
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(PROBE_MARKER))

    # Idle's exec succeeds through ExecSync; Serving's port has no listener yet.
    pods = await until(
        lambda: game_pods(cluster),
        lambda seen: len(seen) == 2 and all(marked(p, "true", "false") for p in seen),
        "both pods marked idle=true, serving=false",
        timeout=90,
    )
    for pod in pods:
        annotations = pod["metadata"]["annotations"]
        assert annotations["controller.kubernetes.io/pod-deletion-cost"] == "-10"
        serving = condition(pod, "game.io/serving")
        assert serving is not None
        assert serving["message"] == f"dial tcp {pod['status']['podIP']}:{PORT}: connect: connection refused"

    ppm = await get_json(cluster, "podprobemarker", "game-server-probe", "-n", NS)
    assert ppm["metadata"]["finalizers"] == ["kruise.io/node-pod-probe-cleanup"]
    assert ppm["status"]["matchedPods"] == 2

    # One NodePodProbe per node; each pod's entry on its node carries both probes, the named port
    # resolved to the container's number.
    _, table = await cluster.kubectl("get", "nodepodprobes")
    _, nodes = await cluster.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")
    assert sorted(line.split()[0] for line in table.strip().splitlines()[1:]) == sorted(nodes.split())
    for pod in pods:
        npp = await get_json(cluster, "nodepodprobe", pod["spec"]["nodeName"])
        assert probe_names(npp)[pod["metadata"]["name"]] == [
            "game-server-probe#Idle",
            "game-server-probe#Serving",
        ]
        entry = next(e for e in npp["spec"]["podProbes"] if e["name"] == pod["metadata"]["name"])
        assert entry["uid"] == pod["metadata"]["uid"]
        assert entry["IP"] == pod["status"]["podIP"]
        assert entry["probes"][1]["probe"]["tcpSocket"]["port"] == PORT
        reported = next(s for s in npp["status"]["podProbeStatuses"] if s["name"] == pod["metadata"]["name"])
        states = {s["name"]: s["state"] for s in reported["probeStates"]}
        assert states == {"game-server-probe#Idle": "Succeeded", "game-server-probe#Serving": "Failed"}

    # The container starts serving on one pod: that pod flips, the other stays Failed.
    target, other = sorted(pods, key=lambda p: p["metadata"]["name"])
    target_name = target["metadata"]["name"]
    async with listening(target["status"]["podIP"], PORT):
        flipped = await until(
            lambda: get_json(cluster, "pod", target_name, "-n", NS),
            lambda pod: marked(pod, "true", "true"),
            f"{target_name} marked serving=true",
            timeout=60,
        )
        serving = condition(flipped, "game.io/serving")
        assert serving is not None and serving["status"] == "True"
        unchanged = await get_json(cluster, "pod", other["metadata"]["name"], "-n", NS)
        assert marked(unchanged, "true", "false")

    # The port closes: after failureThreshold failures the Failed policy replaces the Succeeded one.
    await until(
        lambda: get_json(cluster, "pod", target_name, "-n", NS),
        lambda pod: marked(pod, "true", "false"),
        f"{target_name} back to serving=false once its port closed",
        timeout=60,
    )

    # Deleting the marker removes its probes from every NodePodProbe, then the marker goes.
    await cluster.kubectl("delete", "podprobemarker", "game-server-probe", "-n", NS, "--timeout=60s")

    async def all_probes() -> list[dict[str, list[str]]]:
        return [probe_names(npp) for npp in (await get_json(cluster, "nodepodprobes"))["items"]]

    await until(all_probes, lambda seen: all(not names for names in seen), "no probes left in NodePodProbes")
    code, out = await cluster.kubectl("get", "podprobemarker", "game-server-probe", "-n", NS, check=False)
    assert code != 0 and "NotFound" in out
    # What the marker wrote stays on the pods, as upstream.
    after = await get_json(cluster, "pod", target_name, "-n", NS)
    assert (after["metadata"].get("labels") or {}).get("gameserver-idle") == "true"


def scaled(name: str, replicas: int) -> dict:
    body = json.loads(json.dumps(CLONESET))
    body["metadata"]["name"] = name
    body["spec"]["replicas"] = replicas
    body["spec"]["selector"]["matchLabels"]["app"] = name
    body["spec"]["template"]["metadata"]["labels"]["app"] = name
    return body


def marker_for(app: str, probes: list[str]) -> dict:
    body = json.loads(json.dumps(PROBE_MARKER))
    body["metadata"]["name"] = f"{app}-probe"
    body["spec"]["selector"]["matchLabels"]["app"] = app
    body["spec"]["probes"] = [p for p in body["spec"]["probes"] if p["name"] in probes]
    return body


async def entries(cluster: Cluster, marker: str) -> dict[str, list[str]]:
    """pod name → that marker's probes, over every NodePodProbe."""
    found: dict[str, list[str]] = {}
    for npp in (await get_json(cluster, "nodepodprobes"))["items"]:
        for pod, names in probe_names(npp).items():
            mine = [n for n in names if n.startswith(f"{marker}#")]
            if mine:
                found[pod] = mine
    return found


async def test_probes_follow_scaling_and_marker_edits(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    app, marker = "lobby", "lobby-probe"
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(scaled(app, 1)))
    await cluster.kubectl(
        "wait", f"cloneset/{app}", "--for=jsonpath={.status.readyReplicas}=1", "--timeout=90s"
    )
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(marker_for(app, ["Idle", "Serving"])))
    both = [f"{marker}#Idle", f"{marker}#Serving"]
    await until(
        lambda: entries(cluster, marker), lambda seen: list(seen.values()) == [both], "one pod probed"
    )

    # Scaling up: the new pods are probed and marked too.
    await cluster.kubectl("scale", f"cloneset/{app}", "--replicas=3")
    await cluster.kubectl(
        "wait", f"cloneset/{app}", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=90s"
    )

    async def app_pods() -> list[dict]:
        return (await get_json(cluster, "pods", "-n", NS, "-l", f"app={app}"))["items"]

    pods = await until(
        app_pods,
        lambda seen: len(seen) == 3 and all(marked(p, "true", "false") for p in seen),
        "three pods marked",
        timeout=60,
    )
    seen = await entries(cluster, marker)
    assert sorted(seen) == sorted(p["metadata"]["name"] for p in pods)
    await cluster.kubectl(
        "wait", f"podprobemarker/{marker}", "--for=jsonpath={.status.matchedPods}=3", "--timeout=30s"
    )

    # The marker loses its Serving probe: it leaves every entry (spec and reported status).
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(marker_for(app, ["Idle"])))
    await until(
        lambda: entries(cluster, marker),
        lambda seen: len(seen) == 3 and all(names == [f"{marker}#Idle"] for names in seen.values()),
        "Serving taken out of the NodePodProbes",
    )

    async def reported() -> set[str]:
        names: set[str] = set()
        for npp in (await get_json(cluster, "nodepodprobes"))["items"]:
            for status in (npp.get("status") or {}).get("podProbeStatuses") or []:
                names.update(
                    s["name"] for s in status.get("probeStates") or [] if s["name"].startswith(marker)
                )
        return names

    await until(reported, lambda names: names == {f"{marker}#Idle"}, "only Idle reported")

    # Scaling down: the deleted pods' entries go. A pod relabelled out of the selector leaves too
    # (the CloneSet releases it and creates a replacement, which is probed instead).
    await cluster.kubectl("scale", f"cloneset/{app}", "--replicas=2")
    await until(
        lambda: entries(cluster, marker), lambda seen: len(seen) == 2, "two pods probed after scale-in"
    )
    released = sorted(await entries(cluster, marker))[0]
    await cluster.kubectl("label", "pod", released, "-n", NS, f"app={app}-released", "--overwrite")
    seen = await until(
        lambda: entries(cluster, marker),
        lambda seen: released not in seen and len(seen) == 2,
        "relabelled pod no longer probed, its replacement probed",
    )
    _, names = await cluster.kubectl(
        "get", "pods", "-n", NS, "-l", f"app={app}", "-o", "jsonpath={.items[*].metadata.name}"
    )
    assert sorted(seen) == sorted(names.split())
