"""The simulated kubelet: pod lifecycle, readiness gates, in-place restarts, ConfigMap blocking."""

from __future__ import annotations

import ipaddress

from simulator_testkit import Cluster, condition, container, is_ready, pod_manifest

from kruise.sandbox.cri import ExecResult
from kruise.sandbox.simulator.client import STRATEGIC_PATCH, ApiError, resource_path

POD = resource_path("v1", "pods", "default")


def phase(value):
    return lambda pod: (pod.get("status") or {}).get("phase") == value


async def test_pod_runs_with_full_status_and_events(cluster: Cluster):
    await cluster.create(pod_manifest("web", {"name": "nginx", "image": "nginx:1.25"}))
    pod = await cluster.wait_for("pods", "web", is_ready)
    status = pod["status"]
    node = pod["spec"]["nodeName"]
    index = int(node.split("-")[1])
    assert status["phase"] == "Running"
    addresses = cluster.simulator.addresses  # slot 0 (127.244.x.y, 127.18.0.N) unless another sandbox has it
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(addresses.pod_cidr(index))
    assert status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["hostIP"] == addresses.node_ip(index)
    assert status["startTime"]
    types = {c["type"]: c["status"] for c in status["conditions"]}
    assert types == {
        "PodReadyToStartContainers": "True",
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
        "PodScheduled": "True",
    }
    nginx = container(pod, "nginx")
    assert nginx["containerID"].startswith("containerd://")
    assert nginx["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert nginx["image"] == "docker.io/library/nginx:1.25"
    assert nginx["started"] is True and nginx["ready"] is True and nginx["restartCount"] == 0
    assert "running" in nginx["state"]
    await cluster.wait_event("web", "Started")
    reasons = {e["reason"] for e in await cluster.events_for("web")}
    assert {"Scheduled", "Pulling", "Pulled", "Created", "Started"} <= reasons
    runtime = cluster.simulator.runtimes[node]
    assert runtime.container(nginx["containerID"].removeprefix("containerd://")).name == "nginx"


async def test_pod_ips_are_unique(cluster: Cluster):
    for i in range(6):
        await cluster.create(pod_manifest(f"ip-{i}"))
    pods = await cluster.wait_list(
        "pods",
        lambda items: sum(1 for p in items if p["metadata"]["name"].startswith("ip-") and is_ready(p)) == 6,
    )
    ips = [p["status"]["podIP"] for p in pods if p["metadata"]["name"].startswith("ip-")]
    assert len(set(ips)) == 6


async def test_readiness_gate_holds_ready_until_its_condition_is_true(cluster: Cluster):
    await cluster.create(pod_manifest("gated", readinessGates=[{"conditionType": "example.com/feature"}]))

    def gate_blocked(pod):
        ready = condition(pod, "Ready")
        return phase("Running")(pod) and ready is not None and ready.get("reason") == "ReadinessGatesNotReady"

    pod = await cluster.wait_for("pods", "gated", gate_blocked)
    assert condition(pod, "Ready")["message"] == (
        'corresponding condition of pod readiness gate "example.com/feature" does not exist.'
    )
    assert condition(pod, "ContainersReady")["status"] == "True"
    gate = {"type": "example.com/feature", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    await cluster.client.patch(
        resource_path("v1", "pods", "default", "gated", "status"),
        {"status": {"conditions": [gate]}},
        STRATEGIC_PATCH,
    )
    pod = await cluster.wait_for("pods", "gated", is_ready)
    assert condition(pod, "example.com/feature")["status"] == "True"


async def test_in_place_image_change_restarts_only_that_container(cluster: Cluster):
    containers = [
        {"name": "app", "image": "nginx:1.25"},
        {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "999d"]},
    ]
    await cluster.create(pod_manifest("inplace", *containers))
    before = await cluster.wait_for("pods", "inplace", is_ready)
    patch = {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
    await cluster.client.patch(resource_path("v1", "pods", "default", "inplace"), patch, STRATEGIC_PATCH)
    after = await cluster.wait_for(
        "pods", "inplace", lambda p: container(p, "app")["restartCount"] == 1 and is_ready(p)
    )
    old_app, new_app = container(before, "app"), container(after, "app")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["status"]["podIP"] == before["status"]["podIP"]
    assert new_app["containerID"] != old_app["containerID"]
    assert new_app["imageID"] != old_app["imageID"]
    assert new_app["image"] == "docker.io/library/nginx:1.27"
    assert container(after, "sidecar")["containerID"] == container(before, "sidecar")["containerID"]
    assert container(after, "sidecar")["restartCount"] == 0
    killing = await cluster.wait_event("inplace", "Killing")
    assert killing["message"] == "Container app definition changed, will be restarted"
    assert killing["involvedObject"]["fieldPath"] == "spec.containers{app}"


async def test_missing_configmap_key_blocks_container_until_it_appears(cluster: Cluster):
    barrier = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x-barrier", "namespace": "default"},
    }
    await cluster.create(barrier, "configmaps")
    env = [
        {
            "name": "KRUISE_CONTAINER_PRIORITY",
            "valueFrom": {"configMapKeyRef": {"name": "x-barrier", "key": "p_100"}},
        }
    ]
    await cluster.create(
        pod_manifest(
            "blocked",
            {"name": "first", "image": "nginx:1.25"},
            {"name": "waiter", "image": "nginx:1.25", "env": env},
        )
    )

    def waiting(pod):
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        waiter = next((c for c in statuses if c["name"] == "waiter"), None)
        return waiter is not None and "waiting" in waiter["state"] and container(pod, "first").get("started")

    pod = await cluster.wait_for("pods", "blocked", waiting)
    state = container(pod, "waiter")["state"]["waiting"]
    assert state == {
        "reason": "CreateContainerConfigError",
        "message": "couldn't find key p_100 in ConfigMap default/x-barrier",
    }
    assert not is_ready(pod)
    await cluster.client.patch(
        resource_path("v1", "configmaps", "default", "x-barrier"), {"data": {"p_100": "true"}}
    )
    pod = await cluster.wait_for("pods", "blocked", is_ready)
    assert container(pod, "waiter")["restartCount"] == 0


async def test_run_to_completion_pods_succeed_or_fail(cluster: Cluster):
    await cluster.create(
        pod_manifest("ok", restartPolicy="Never", annotations={"sandbox.kruise.io/run-seconds": "1"})
    )
    await cluster.create(
        pod_manifest(
            "bad",
            restartPolicy="Never",
            annotations={"sandbox.kruise.io/run-seconds": "1", "sandbox.kruise.io/exit-code": "3"},
        )
    )
    ok = await cluster.wait_for("pods", "ok", phase("Succeeded"))
    assert container(ok, "main")["state"]["terminated"]["reason"] == "Completed"
    assert condition(ok, "Ready")["reason"] == "PodCompleted"
    bad = await cluster.wait_for("pods", "bad", phase("Failed"))
    terminated = container(bad, "main")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")


async def test_init_containers_then_native_sidecar_then_containers(cluster: Cluster):
    inits = [
        {"name": "setup", "image": "busybox:1.36"},
        {"name": "proxy", "image": "envoyproxy/envoy:v1.30", "restartPolicy": "Always"},
    ]
    await cluster.create(pod_manifest("layered", initContainers=inits))
    pod = await cluster.wait_for("pods", "layered", is_ready)
    init_statuses = {c["name"]: c for c in pod["status"]["initContainerStatuses"]}
    assert init_statuses["setup"]["state"]["terminated"]["reason"] == "Completed"
    assert "running" in init_statuses["proxy"]["state"]
    assert condition(pod, "Initialized")["status"] == "True"


async def test_native_sidecar_image_change_restarts_it_but_not_a_finished_init_container(cluster: Cluster):
    """kube-apiserver lets pod updates change `spec.initContainers[*].image`; the kubelet restarts a
    restartable init container whose spec changed and ignores the change on one that has completed."""
    inits = [
        {"name": "setup", "image": "busybox:1.36"},
        {"name": "proxy", "image": "envoyproxy/envoy:v1.30", "restartPolicy": "Always"},
    ]
    await cluster.create(pod_manifest("residecar", initContainers=inits))
    before = await cluster.wait_for("pods", "residecar", is_ready)
    patch = {
        "spec": {
            "initContainers": [
                {"name": "setup", "image": "busybox:1.37"},
                {"name": "proxy", "image": "envoyproxy/envoy:v1.31"},
            ]
        }
    }
    await cluster.client.patch(resource_path("v1", "pods", "default", "residecar"), patch, STRATEGIC_PATCH)

    def statuses(p):
        return {s["name"]: s for s in p["status"]["initContainerStatuses"]}

    after = await cluster.wait_for(
        "pods", "residecar", lambda p: statuses(p)["proxy"]["restartCount"] == 1 and is_ready(p)
    )
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    proxy = statuses(after)["proxy"]
    assert proxy["image"] == "docker.io/envoyproxy/envoy:v1.31" and "running" in proxy["state"]
    assert proxy["containerID"] != statuses(before)["proxy"]["containerID"]
    assert statuses(after)["setup"]["restartCount"] == 0
    assert statuses(after)["setup"]["containerID"] == statuses(before)["setup"]["containerID"]
    assert container(after, "main")["restartCount"] == 0
    killing = await cluster.wait_event("residecar", "Killing")
    assert killing["message"] == "Container proxy definition changed, will be restarted"
    assert killing["involvedObject"]["fieldPath"] == "spec.initContainers{proxy}"


async def test_graceful_deletion_finishes_the_pod(cluster: Cluster):
    await cluster.create(pod_manifest("doomed"))
    pod = await cluster.wait_for("pods", "doomed", is_ready)
    runtime = cluster.simulator.runtimes[pod["spec"]["nodeName"]]
    await cluster.client.delete(resource_path("v1", "pods", "default", "doomed"))
    await cluster.wait_list("pods", lambda items: all(p["metadata"]["name"] != "doomed" for p in items))
    killing = await cluster.wait_event("doomed", "Killing")
    assert killing["message"] == "Stopping container main"
    try:
        await cluster.client.get(resource_path("v1", "pods", "default", "doomed"))
    except ApiError as error:
        assert error.not_found
    assert not [c for c in runtime.list_containers() if c.labels.get("io.kubernetes.pod.name") == "doomed"]


async def test_readiness_probe_delay_holds_ready_then_releases(cluster: Cluster):
    probe = {"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 30}
    await cluster.create(
        pod_manifest("slow", {"name": "main", "image": "nginx:1.25", "readinessProbe": probe})
    )

    def running_unready(pod):
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("started") and not statuses[0]["ready"]

    pod = await cluster.wait_for("pods", "slow", running_unready)
    assert condition(pod, "ContainersReady")["message"] == "containers with unready status: [main]"
    await cluster.wait_for("pods", "slow", is_ready)


async def test_crashing_container_backs_off_like_the_kubelet(cluster: Cluster):
    crashing = pod_manifest(
        "crashy",
        restartPolicy="OnFailure",
        annotations={"sandbox.kruise.io/run-seconds": "1", "sandbox.kruise.io/exit-code": "2"},
    )
    await cluster.create(crashing)

    def backing_off(pod):
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0]["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"

    pod = await cluster.wait_for("pods", "crashy", backing_off)
    main = container(pod, "main")
    assert main["state"]["waiting"]["message"].startswith("back-off ")
    assert "restarting failed container=main pod=crashy_default(" in main["state"]["waiting"]["message"]
    assert main["lastState"]["terminated"]["exitCode"] == 2
    assert pod["status"]["phase"] == "Running"
    backoff = await cluster.wait_event("crashy", "BackOff")
    assert backoff["type"] == "Warning"
    await cluster.wait_for("pods", "crashy", lambda p: container(p, "main")["restartCount"] >= 2)


async def test_exec_probes_drive_readiness_and_liveness_restarts(cluster: Cluster):
    verdicts = {"ready": True, "alive": True}

    def handler(container, cmd):
        return ExecResult(exit_code=0 if verdicts[cmd[0]] else 1, stdout=f"{cmd[0]}?".encode())

    for runtime in cluster.simulator.runtimes.values():
        runtime.exec_handler = handler
    probes = {
        "readinessProbe": {"exec": {"command": ["ready"]}, "periodSeconds": 1, "failureThreshold": 1},
        "livenessProbe": {"exec": {"command": ["alive"]}, "periodSeconds": 1, "failureThreshold": 2},
    }
    await cluster.create(pod_manifest("probed", {"name": "main", "image": "nginx:1.25", **probes}))
    await cluster.wait_for("pods", "probed", is_ready)
    verdicts["ready"] = False
    pod = await cluster.wait_for("pods", "probed", lambda p: not is_ready(p))
    assert container(pod, "main")["restartCount"] == 0
    verdicts["ready"] = True
    await cluster.wait_for("pods", "probed", is_ready)
    verdicts["alive"] = False
    pod = await cluster.wait_for("pods", "probed", lambda p: container(p, "main")["restartCount"] >= 1)
    assert container(pod, "main")["lastState"]["terminated"]["exitCode"] == 137
    verdicts["alive"] = True
    await cluster.wait_event("probed", "Unhealthy")
    messages = {e["message"] for e in await cluster.events_for("probed")}
    assert "Readiness probe failed: ready?" in messages
    assert "Container main failed liveness probe, will be restarted" in messages


async def test_startup_probe_holds_started_until_it_succeeds(cluster: Cluster):
    verdict = {"ok": False}
    for runtime in cluster.simulator.runtimes.values():
        runtime.exec_handler = lambda container, cmd: ExecResult(exit_code=0 if verdict["ok"] else 1)
    startup = {"exec": {"command": ["started"]}, "periodSeconds": 1, "failureThreshold": 1000}
    await cluster.create(
        pod_manifest("booting", {"name": "main", "image": "nginx:1.25", "startupProbe": startup})
    )

    def running_not_started(pod):
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and "running" in statuses[0]["state"] and statuses[0]["started"] is False

    pod = await cluster.wait_for("pods", "booting", running_not_started)
    assert not is_ready(pod)
    verdict["ok"] = True
    pod = await cluster.wait_for("pods", "booting", is_ready)
    assert container(pod, "main")["started"] is True
