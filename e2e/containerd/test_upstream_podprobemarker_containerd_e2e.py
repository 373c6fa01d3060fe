"""Upstream's PodProbeMarker e2e, Describe "PodProbeMarker" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/podprobemarker.go, tester test/e2e/framework/v1alpha1/pod_probe_marker_util.go) —
all four `It`s, translated to kubectl on real nodes (`kruise sandbox up --runtime containerd`, upstream's
e2e feature gates), one sandbox for the module.

They run here rather than on the fake-runtime sandbox because each needs what a container really does:
"exec test" turns its probes into `/bin/sh -c "failed /"`, which must exit non-zero (the fake runtime
answers every exec on a simulated container with exit 0); "test2" runs the image's `bash ./probe.sh`,
whose answer changes as the image's processes end; "tcpCheck" and "httpCheck" need nginx listening on port
80 of the pod IP. On containerd kruise-daemon execs through CRI into real containers and dials the pod's
bridge address. The images are the sandbox's stand-ins (docs/sandbox.md "Real-node images"): nginx:1.15.1
serves port 80 with busybox httpd, centos:7 is busybox (`sleep 999d`, `ps -ef`), and
openkruise/minecraft-demo:probe-v0 ends its data and gate processes 8 s and 20 s after the first probe
run, so probe.sh answers Failed, then "data", then "gate".

Upstream's probes set no timing: kruise-daemon takes unset period/thresholds as 1 (as upstream's worker
does), so each probe runs every second and reports after one outcome."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest
from harness import Cluster, until
from upstream_kit import Case, Obj, condition, upstream_case

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(900)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES: the manager flag of upstream's e2e deployment
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
)

STS = "statefulsets.v1beta1.apps.kruise.io"
PPM = "podprobemarkers.v1alpha1.apps.kruise.io"
NPP = "nodepodprobes.v1alpha1.apps.kruise.io"
FINALIZER = "kruise.io/node-pod-probe-cleanup"  # podprobemarker.PodProbeMarkerFinalizer
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
WAIT = 120.0  # upstream's 2-minute polls


# ---- the tester (pod_probe_marker_util.go) --------------------------------------------------------


def exec_probe(name: str, container: str, command: str, condition_type: str, policy: list[Obj]) -> Obj:
    return {
        "name": name,
        "containerName": container,
        "probe": {"exec": {"command": ["/bin/sh", "-c", command]}},
        "podConditionType": condition_type,
        "markerPolicy": policy,
    }


def marker(case: Case, name: str, probes: list[Obj]) -> Obj:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PodProbeMarker",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {"selector": {"matchLabels": {"app": f"probe-{case.rand}"}}, "probes": probes},
    }


HEALTHY_POLICY = [{"state": "Succeeded", "labels": {"nginx": "healthy"}}]


def new_pod_probe_markers(case: Case) -> list[Obj]:
    """`NewPodProbeMarker`: ppm-nginx (`ls /` in nginx) and ppm-main (`ps -ef` in main)."""
    nginx = exec_probe("healthy", "nginx", "ls /", "game.kruise.io/healthy", HEALTHY_POLICY)
    check_policy = [
        {"state": "Succeeded", "annotations": {DELETION_COST: "10"}},
        {"state": "Failed", "annotations": {DELETION_COST: "-10"}},
    ]
    main = exec_probe("check", "main", "ps -ef", "game.kruise.io/check", check_policy)
    return [marker(case, "ppm-nginx", [nginx]), marker(case, "ppm-main", [main])]


def port_probe_marker(case: Case, handler: Obj) -> Obj:
    """`NewPodProbeMarkerForTcpCheck` / `ForHttpCheck`: one probe `healthy` on the nginx container."""
    probe = {
        "name": "healthy",
        "containerName": "nginx",
        "probe": handler,
        "podConditionType": "game.kruise.io/healthy",
        "markerPolicy": HEALTHY_POLICY,
    }
    return marker(case, "ppm-nginx", [probe])


def statefulset(case: Case, replicas: int, containers: list[Obj]) -> Obj:
    """`NewBaseStatefulSet` / `NewStatefulSetWithProbeImg`, with the test's topology spread and replicas
    = the number of nodes."""
    labels = {"app": f"probe-{case.rand}"}
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "stateful-test", "namespace": case.ns},
        "spec": {
            "podManagementPolicy": "Parallel",
            "serviceName": "fake-service",
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": containers,
                    "topologySpreadConstraints": [
                        {
                            "labelSelector": {"matchLabels": labels},
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                        }
                    ],
                },
            },
        },
    }


BASE_CONTAINERS = [
    {"name": "nginx", "image": "nginx:1.15.1", "imagePullPolicy": "IfNotPresent"},
    {"name": "main", "image": "centos:7", "command": ["sleep", "999d"], "imagePullPolicy": "IfNotPresent"},
]
PROBE_IMG_CONTAINERS = [
    {"name": "minecraft", "image": "openkruise/minecraft-demo:probe-v0", "imagePullPolicy": "IfNotPresent"}
]


async def wait_statefulset_running(case: Case) -> None:
    """`WaitForStatefulSetRunning`: observed, and replicas = updated = ready = spec."""

    def running(sts: Obj | None) -> bool:
        if sts is None:
            return False
        status, want = sts.get("status") or {}, sts["spec"]["replicas"]
        return (
            sts["metadata"].get("generation") == status.get("observedGeneration")
            and status.get("replicas", 0) == want
            and status.get("updatedReplicas", 0) == want
            and status.get("readyReplicas", 0) == want
        )

    await case.eventually(lambda: case.get(STS, "stateful-test"), running, "statefulset running", WAIT)


async def create_statefulset(case: Case, sts: Obj) -> None:
    await case.create(sts)
    await wait_statefulset_running(case)


async def scale(case: Case, replicas: int) -> None:
    def change(sts: Obj) -> None:
        sts["spec"]["replicas"] = replicas

    await case.update(STS, "stateful-test", change)
    await wait_statefulset_running(case)


async def wait_processed(case: Case, name: str) -> None:
    """`WaitForPodProbeMarkerProcessed`: the controller saw the marker's generation."""

    def processed(ppm: Obj | None) -> bool:
        observed = ((ppm or {}).get("status") or {}).get("observedGeneration")
        return ppm is not None and ppm["metadata"].get("generation") == observed

    await case.eventually(lambda: case.get(PPM, name), processed, f"podprobemarker {name} processed", WAIT)


async def wait_deleted(case: Case, name: str) -> None:
    await case.eventually(lambda: case.get(PPM, name), lambda ppm: ppm is None, f"{name} deleted", WAIT)


async def active_pods(case: Case) -> list[Obj]:
    """`ListActivePods`: scheduled pods not terminal and not deleting."""
    return [
        pod
        for pod in await case.list("pods")
        if pod["spec"].get("nodeName")
        and pod["status"].get("phase") not in ("Succeeded", "Failed")
        and not pod["metadata"].get("deletionTimestamp")
    ]


async def wait_pods(case: Case, what: str, holds: Callable[[Obj], bool]) -> list[Obj]:
    """`WaitForPodLabeled` / `WaitForPodAnnotated`: every active pod holds."""
    return await case.eventually(
        lambda: active_pods(case), lambda pods: all(holds(p) for p in pods), what, WAIT
    )


def label(pod: Obj, key: str) -> str:
    return (pod["metadata"].get("labels") or {}).get(key, "")


def annotation(pod: Obj, key: str) -> str:
    return (pod["metadata"].get("annotations") or {}).get(key, "")


def status_of(pod: Obj, condition_type: str) -> str | None:
    found = condition(pod, condition_type)
    return None if found is None else found.get("status")


async def node_pod_probes(cluster: Cluster) -> list[Obj]:
    _, out = await cluster.kubectl("get", NPP, "-o", "json")
    return json.loads(out)["items"]


async def assert_probes_only_for(case: Case, pods: list[Obj]) -> None:
    """Every NodePodProbe entry of the case's namespace is one of `pods` (upstream's validPods check)."""
    valid = {pod["metadata"]["uid"] for pod in pods}
    for npp in await node_pod_probes(case.cluster):
        for entry in (npp.get("spec") or {}).get("podProbes") or []:
            if entry.get("namespace") == case.ns:
                assert entry.get("uid") in valid, (npp["metadata"]["name"], entry, valid)


async def assert_probed_on_own_node(case: Case, pods: list[Obj]) -> None:
    """Each pod has an entry in the NodePodProbe named after its node."""
    for pod in pods:
        _, out = await case.cluster.kubectl("get", NPP, pod["spec"]["nodeName"], "-o", "json")
        entries = (json.loads(out).get("spec") or {}).get("podProbes") or []
        assert any(e.get("uid") == pod["metadata"]["uid"] for e in entries), (
            pod["metadata"]["name"],
            entries,
        )


async def assert_no_probes_left(case: Case) -> None:
    for npp in await node_pod_probes(case.cluster):
        for entry in (npp.get("spec") or {}).get("podProbes") or []:
            assert entry.get("namespace") != case.ns, (npp["metadata"]["name"], entry)


async def node_count(cluster: Cluster) -> int:
    """Upstream's first steps: the nodes, and one NodePodProbe per node."""
    _, out = await cluster.kubectl("get", "nodes", "-o", "name")
    nodes = len(out.split())
    assert nodes > 0
    assert len(await node_pod_probes(cluster)) == nodes
    return nodes


async def create_marker(case: Case, ppm: Obj) -> None:
    await case.create(ppm)
    await wait_processed(case, ppm["metadata"]["name"])


async def set_handler(case: Case, name: str, handler: Obj) -> None:
    """Replace the first probe's handler (upstream sets `Probe.Exec` / `Probe.TCPSocket` and updates)."""

    def change(ppm: Obj) -> None:
        probe = ppm["spec"]["probes"][0]["probe"]
        for kind in ("exec", "tcpSocket", "httpGet"):
            probe.pop(kind, None)
        probe.update(copy.deepcopy(handler))

    await case.update(PPM, name, change)
    await wait_processed(case, name)


def healthy(pod: Obj) -> bool:
    return label(pod, "nginx") == "healthy"


# ---- the cases -------------------------------------------------------------------------------------


async def test_pod_probe_marker_exec_test(real_cluster: Cluster):
    """It("pod probe marker exec test")."""
    async with upstream_case(real_cluster, "podprobemarkers") as case:
        nodes = await node_count(real_cluster)
        await create_statefulset(case, statefulset(case, nodes, BASE_CONTAINERS))

        ppm1, ppm2 = new_pod_probe_markers(case)
        await create_marker(case, ppm1)
        assert FINALIZER in (await case.must_get(PPM, "ppm-nginx"))["metadata"].get("finalizers", [])

        # wait for pods becomes healthy for the first time
        await wait_pods(case, "pods labelled nginx=healthy", healthy)
        pods = await active_pods(case)
        assert len(pods) == nodes
        await assert_probed_on_own_node(case, pods)
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert condition(pod, "game.kruise.io/check") is None
        await assert_probes_only_for(case, pods)

        # create the other marker
        await create_marker(case, ppm2)
        await wait_pods(
            case, "pods annotated deletion-cost 10", lambda p: annotation(p, DELETION_COST) == "10"
        )
        await wait_pods(case, "pods labelled nginx=healthy", healthy)
        pods = await active_pods(case)
        assert len(pods) == nodes
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert annotation(pod, DELETION_COST) == "10"
            assert status_of(pod, "game.kruise.io/check") == "True"

        # update both markers so that their probes always fail
        await set_handler(case, "ppm-nginx", {"exec": {"command": ["/bin/sh", "-c", "failed /"]}})
        await set_handler(case, "ppm-main", {"exec": {"command": ["/bin/sh", "-c", "failed -ef"]}})
        await wait_pods(case, "pods lose nginx=healthy", lambda p: label(p, "nginx") == "")
        await wait_pods(
            case, "pods annotated deletion-cost -10", lambda p: annotation(p, DELETION_COST) == "-10"
        )
        pods = await active_pods(case)
        assert len(pods) == nodes
        for pod in pods:
            assert label(pod, "nginx") == ""
            assert status_of(pod, "game.kruise.io/healthy") == "False"
            assert annotation(pod, DELETION_COST) == "-10"
            assert status_of(pod, "game.kruise.io/check") == "False"

        # ppm-nginx back to success, then scale down to one pod
        await set_handler(case, "ppm-nginx", {"exec": {"command": ["/bin/sh", "-c", "ls /"]}})
        await scale(case, 1)
        await wait_pods(case, "pods labelled nginx=healthy again", healthy)
        pods = await active_pods(case)
        assert len(pods) == 1
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert annotation(pod, DELETION_COST) == "-10"
            assert status_of(pod, "game.kruise.io/check") == "False"
        await assert_probes_only_for(case, pods)

        # scale up
        await scale(case, nodes)
        await wait_pods(case, "new pods labelled nginx=healthy", healthy)
        await wait_pods(
            case, "new pods annotated deletion-cost -10", lambda p: annotation(p, DELETION_COST) == "-10"
        )
        pods = await active_pods(case)
        assert len(pods) == nodes
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert annotation(pod, DELETION_COST) == "-10"
            assert status_of(pod, "game.kruise.io/check") == "False"
        await assert_probes_only_for(case, pods)

        # delete the markers: their probes leave every NodePodProbe
        for ppm in (ppm1, ppm2):
            await case.kubectl("delete", PPM, ppm["metadata"]["name"], "--wait=false")
        for ppm in (ppm1, ppm2):
            await wait_deleted(case, ppm["metadata"]["name"])
        await assert_no_probes_left(case)


async def test_pod_probe_marker_test2(real_cluster: Cluster):
    """It("pod probe marker test2"): `bash ./probe.sh` fails first, then succeeds saying "data", then
    "gate" — each phase on every pod at once, within upstream's 10 s / 20 s / 20 s polls."""
    async with upstream_case(real_cluster, "podprobemarkers") as case:
        nodes = await node_count(real_cluster)
        await create_statefulset(case, statefulset(case, nodes, PROBE_IMG_CONTAINERS))
        probe = {
            "name": "healthy",
            "containerName": "minecraft",
            "probe": {"exec": {"command": ["bash", "./probe.sh"]}},
            "podConditionType": "game.kruise.io/healthy",
        }
        await case.create(marker(case, "ppm-minecraft", [probe]))

        def every_pod(status: str, message: str) -> Callable[[list[Obj]], bool]:
            def holds(pods: list[Obj]) -> bool:
                assert len(pods) == nodes or status == "False", f"{len(pods)} pods for {nodes} nodes"
                return len(pods) == nodes and all(
                    (c := condition(p, "game.kruise.io/healthy")) is not None
                    and c.get("status") == status
                    and message in (c.get("message") or "")
                    for p in pods
                )

            return holds

        await until(lambda: active_pods(case), every_pod("False", ""), "probe.sh fails on every pod", 10)
        await until(lambda: active_pods(case), every_pod("True", "data"), "probe.sh says data", 20)
        await until(lambda: active_pods(case), every_pod("True", "gate"), "probe.sh says gate", 20)


async def test_pod_probe_marker_tcp_check_test(real_cluster: Cluster):
    """It("pod probe marker tcpCheck test") (Context "PodProbeMarker with tcpCheck functionality")."""
    async with upstream_case(real_cluster, "podprobemarkers") as case:
        nodes = await node_count(real_cluster)
        await create_statefulset(case, statefulset(case, nodes, BASE_CONTAINERS))
        ppm = port_probe_marker(case, {"tcpSocket": {"port": 80}})
        await create_marker(case, ppm)
        assert FINALIZER in (await case.must_get(PPM, "ppm-nginx"))["metadata"].get("finalizers", [])

        await wait_pods(case, "pods labelled nginx=healthy", healthy)
        pods = await active_pods(case)
        await assert_probed_on_own_node(case, pods)
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert condition(pod, "game.kruise.io/check") is None
        await assert_probes_only_for(case, pods)

        # tcp port check 80 -> 8081: nothing listens there
        await set_handler(case, "ppm-nginx", {"tcpSocket": {"port": 8081}})
        await wait_pods(case, "pods lose nginx=healthy", lambda p: label(p, "nginx") == "")
        for pod in await active_pods(case):
            assert label(pod, "nginx") == ""
            assert status_of(pod, "game.kruise.io/healthy") == "False"

        # back to 80, scale down
        await set_handler(case, "ppm-nginx", {"tcpSocket": {"port": 80}})
        await scale(case, 1)
        await wait_pods(case, "pods labelled nginx=healthy again", healthy)
        pods = await active_pods(case)
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
        await assert_probes_only_for(case, pods)

        # scale up
        await scale(case, nodes)
        await wait_pods(case, "new pods labelled nginx=healthy", healthy)
        pods = await active_pods(case)
        assert len(pods) == nodes
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
        await assert_probes_only_for(case, pods)

        await case.kubectl("delete", PPM, "ppm-nginx", "--wait=false")
        await wait_deleted(case, "ppm-nginx")
        await assert_no_probes_left(case)


async def test_pod_probe_marker_http_check_test(real_cluster: Cluster):
    """It("pod probe marker httpCheck test") (Context "PodProbeMarker with httpCheck functionality")."""
    async with upstream_case(real_cluster, "podprobemarkers") as case:
        nodes = await node_count(real_cluster)
        await create_statefulset(case, statefulset(case, nodes, BASE_CONTAINERS))
        ppm = port_probe_marker(case, {"httpGet": {"path": "/", "scheme": "HTTP", "port": 80}})
        await create_marker(case, ppm)
        assert FINALIZER in (await case.must_get(PPM, "ppm-nginx"))["metadata"].get("finalizers", [])

        await wait_pods(case, "pods labelled nginx=healthy", healthy)
        pods = await active_pods(case)
        assert len(pods) == nodes
        await assert_probed_on_own_node(case, pods)
        for pod in pods:
            assert label(pod, "nginx") == "healthy"
            assert status_of(pod, "game.kruise.io/healthy") == "True"
            assert condition(pod, "game.kruise.io/check") is None
        await assert_probes_only_for(case, pods)
