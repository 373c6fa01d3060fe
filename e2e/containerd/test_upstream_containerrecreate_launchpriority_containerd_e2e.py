"""Upstream's ContainerRecreateRequest and container launch priority e2e cases that need real containers
(openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/containerrecreate.go and containerlaunchpriority.go),
translated to kubectl on real nodes (`kruise sandbox up --runtime containerd`, upstream's e2e gates).

Each of these asserts gaps that only postStart and preStop hooks running in real containers produce: a
sidecar killed 5 s after the app because the app's `postStart: sleep 5` held its readiness, a container
stopped 8 s after the request because kruise-daemon ran its `preStop: sleep 8` first, a priority-0
container started a second after the priority-10 one because of `postStart: sleep 1`. The fake runtime
runs no hooks, so the other cases of both files run there (e2e/cloneset/).

Upstream's images are the sandbox's stand-ins under the same names (docs/sandbox.md): the e2e httpd image
serves port 80 and has a `bash`, agnhost idles as its default `pause`, nginx:1.14-4 serves port 80.
All six cases share one real cluster; each works in a namespace of its own, as upstream's framework gives
every `It`."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from harness import Cluster
from upstream_kit import WEBSERVER_IMAGE, Case, Obj, condition, is_ready, upstream_case

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES: the manager flag of upstream's e2e deployment; a pod subnet
# of its own, so a real-node sandbox left running elsewhere on the machine does not refuse this one
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
    "--pod-subnet",
    "198.19.64.0/18",
)

AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.52"  # common.AgnhostImage
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"  # imageutils.Nginx
CRR = "containerrecreaterequests.v1alpha1.apps.kruise.io"
CLONESET = "clonesets.v1alpha1.apps.kruise.io"
ACTIVE = "crr.apps.kruise.io/active"
KRUISE_POD_READY = "KruisePodReady"
PRIORITY_NAME = "KRUISE_CONTAINER_PRIORITY"
PRIORITY_BARRIER = "KRUISE_CONTAINER_BARRIER"
PRIORITY_ANNOTATION = "apps.kruise.io/container-launch-priority"

SUCCEEDED = [
    {"name": "app", "phase": "Succeeded", "isKilled": True},
    {"name": "sidecar", "phase": "Succeeded", "isKilled": True},
]


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _status(pod: Obj, name: str) -> Obj:
    """`util.GetContainerStatus`."""
    return next(s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name)


def _finished_at(status: Obj) -> datetime:
    terminated = (status.get("lastState") or {}).get("terminated")
    assert terminated is not None, status
    return _time(terminated["finishedAt"])


def _hook(kind: str, *command: str) -> Obj:
    return {kind: {"exec": {"command": list(command)}}}


def _crr_containers() -> list[Obj]:
    return [{"name": "app"}, {"name": "sidecar"}]


async def _cloneset_pods(case: Case, replicas: int, containers: list[Obj]) -> list[Obj]:
    """`CreateTestCloneSetAndGetPods`: spread by preferred anti-affinity, wait until all are ready."""
    selector = {"matchLabels": {"rand": case.rand}}
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}
    await case.create({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": f"clone-foo-{case.rand}", "namespace": case.ns},
        "spec": {
            "replicas": replicas, "selector": selector,
            "template": {
                "metadata": {"labels": {"rand": case.rand}},
                "spec": {
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": term}]}},
                    "containers": containers,
                },
            },
        },
    })  # fmt: skip
    await case.eventually(
        lambda: case.must_get(CLONESET, f"clone-foo-{case.rand}"),
        lambda cs: (cs.get("status") or {}).get("readyReplicas") == replicas,
        "CloneSet readyReplicas",
        timeout=120,
    )
    return await case.list("pods", {"rand": case.rand})


async def _create_crr(case: Case, pod: Obj, index: int, **spec: Any) -> Obj:
    crr = await case.create({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": f"crr-{case.rand}-{index}", "namespace": case.ns},
        "spec": {"podName": pod["metadata"]["name"], "containers": _crr_containers(), **spec},
    })  # fmt: skip
    return crr


def _context_id(crr: Obj, index: int) -> str:
    return crr["spec"]["containers"][index]["statusContext"]["containerID"]


def _assert_contexts(crr: Obj, pod: Obj) -> None:
    assert _context_id(crr, 0) == _status(pod, "app")["containerID"]
    assert _context_id(crr, 1) == _status(pod, "sidecar")["containerID"]


async def _completed(case: Case, crr: Obj, timeout: float) -> Obj:
    return await case.eventually(
        lambda: case.must_get(CRR, crr["metadata"]["name"]),
        lambda c: (c.get("status") or {}).get("phase") == "Completed",
        "CRR Completed",
        timeout=timeout,
    )


async def _inactive(case: Case, crr: Obj) -> Obj:
    return await case.eventually(
        lambda: case.must_get(CRR, crr["metadata"]["name"]),
        lambda c: ACTIVE not in (c["metadata"].get("labels") or {}),
        "CRR active label removed",
        timeout=5,
    )


def _hooked_pair(hook: Obj) -> list[Obj]:
    return [
        {"name": "app", "image": WEBSERVER_IMAGE, "lifecycle": hook},
        {"name": "sidecar", "image": AGNHOST_IMAGE},
    ]


async def _recreate_and_check(case: Case, pod: Obj, index: int, strategy: Obj | None) -> tuple[Obj, Obj, Obj]:
    """Create the CRR for both containers, wait for completion, check both were recreated once;
    return the CRR and the two new container statuses."""
    extra = {"strategy": strategy} if strategy else {}
    crr = await _create_crr(case, pod, index, **extra)
    _assert_contexts(crr, pod)
    created = crr
    crr = await _completed(case, crr, 60)
    assert crr["status"].get("completionTime")
    assert crr["status"]["containerRecreateStates"] == SUCCEEDED
    crr = await _inactive(case, crr)

    pod = await case.must_get("pods", pod["metadata"]["name"])
    assert is_ready(pod)
    app, sidecar = _status(pod, "app"), _status(pod, "sidecar")
    assert app["containerID"] != _context_id(created, 0)
    assert sidecar["containerID"] != _context_id(created, 1)
    assert app["restartCount"] == 1
    assert sidecar["restartCount"] == 1
    return crr, app, sidecar


async def test_recreates_containers_with_post_start_hook(real_cluster: Cluster) -> None:
    """recreates containers with postStartHook"""
    async with upstream_case(real_cluster, "containerrecreaterequests") as case:
        pods = await _cloneset_pods(case, 2, _hooked_pair(_hook("postStart", "sleep", "5")))
        # upstream sleeps 3 s here; nothing below depends on it (the CRRs are created on ready pods)

        # CRR for pods[0], recreate container: app(postStartHook) and sidecar
        _, app, sidecar = await _recreate_and_check(case, pods[0], 0, None)
        # sidecar recreated not waiting for app container ready
        assert (_finished_at(sidecar) - _finished_at(app)).total_seconds() < 3

        # CRR for pods[1] with orderedRecreate
        _, app, sidecar = await _recreate_and_check(case, pods[1], 1, {"orderedRecreate": True})
        # sidecar recreated after app container ready
        assert (_finished_at(sidecar) - _finished_at(app)).total_seconds() >= 5


async def test_recreates_containers_with_pre_stop_hook(real_cluster: Cluster) -> None:
    """recreates containers with preStopHook"""
    async with upstream_case(real_cluster, "containerrecreaterequests") as case:
        pods = await _cloneset_pods(case, 3, _hooked_pair(_hook("preStop", "sleep", "8")))

        # CRR for pods[0], recreate container: app(preStopHook) and sidecar
        pod = pods[0]
        crr = await _create_crr(case, pod, 0)
        _assert_contexts(crr, pod)
        crr = await _completed(case, crr, 60)
        assert crr["status"].get("completionTime")
        crr = await _inactive(case, crr)
        assert crr["status"]["containerRecreateStates"] == SUCCEEDED

        pod = await case.eventually(
            lambda: case.must_get("pods", pods[0]["metadata"]["name"]),
            lambda p: (
                _status(p, "app")["containerID"] != _context_id(crr, 0)
                and _status(p, "sidecar")["containerID"] != _context_id(crr, 1)
            ),
            "containers recreated",
            timeout=60,
        )
        pod = await case.must_get("pods", pod["metadata"]["name"])
        assert is_ready(pod)
        app, sidecar = _status(pod, "app"), _status(pod, "sidecar")
        assert app["restartCount"] == 1
        assert sidecar["restartCount"] == 1
        # app container stopped after preStop
        assert (_finished_at(sidecar) - _time(crr["metadata"]["creationTimestamp"])).total_seconds() >= 8

        # CRR for pods[1] with activeDeadlineSeconds=3
        pod = pods[1]
        crr = await _create_crr(case, pod, 1, activeDeadlineSeconds=3)
        _assert_contexts(crr, pod)
        crr = await _completed(case, crr, 5)
        assert crr["status"].get("completionTime")
        crr = await _inactive(case, crr)
        assert crr["status"]["containerRecreateStates"] == [
            {"name": "app", "phase": "Pending"},
            {"name": "sidecar", "phase": "Pending"},
        ]
        # the app container should still be recreated
        name = pod["metadata"]["name"]
        await case.eventually(
            lambda: case.must_get("pods", name),
            lambda p: _status(p, "app")["restartCount"] == 1,
            "app restarted",
            60,
        )
        await case.eventually(lambda: case.must_get("pods", name), is_ready, "pod ready", 10)
        crr = await case.must_get(CRR, crr["metadata"]["name"])
        assert crr["status"]["containerRecreateStates"] == [
            {"name": "app", "phase": "Recreating", "isKilled": True},
            {"name": "sidecar", "phase": "Pending"},
        ]

        # CRR for pods[2] with unreadyGracePeriodSeconds
        pod = pods[2]
        name = pod["metadata"]["name"]
        strategy = {"terminationGracePeriodSeconds": 3, "unreadyGracePeriodSeconds": 1}
        crr = await _create_crr(case, pod, 2, strategy=strategy)
        # Pod not-ready and Kruise readiness condition message contains CRR
        key = f"{case.ns}/{crr['metadata']['name']}"
        message = json.dumps([{"userAgent": "ContainerRecreateRequest", "key": key}], separators=(",", ":"))
        expected = {"status": "False", "message": message}
        await case.eventually(
            lambda: case.must_get("pods", name),
            lambda p: (
                (c := condition(p, KRUISE_POD_READY)) is not None
                and {"status": c.get("status"), "message": c.get("message")} == expected
            ),
            "KruisePodReady False naming the CRR",
            timeout=2,
        )
        crr = await _completed(case, crr, 60)
        assert crr["status"]["containerRecreateStates"] == SUCCEEDED
        # Kruise readiness condition True
        await case.eventually(
            lambda: case.must_get("pods", name),
            lambda p: (condition(p, KRUISE_POD_READY) or {}).get("status") == "True",
            "KruisePodReady True",
            timeout=3,
        )
        pod = await case.eventually(lambda: case.must_get("pods", name), is_ready, "pod ready", 10)
        # app container stopped before preStop finished
        app = _status(pod, "app")
        assert (_finished_at(app) - _time(crr["metadata"]["creationTimestamp"])).total_seconds() < 8


async def test_recreates_containers_by_force(real_cluster: Cluster) -> None:
    """recreates containers by force"""
    async with upstream_case(real_cluster, "containerrecreaterequests") as case:
        pods = await _cloneset_pods(case, 2, _hooked_pair(_hook("postStart", "sleep", "5")))

        # CRR for pods[0], recreate container: app(postStartHook) and sidecar by force
        _, app, sidecar = await _recreate_and_check(case, pods[0], 0, {"forceRecreate": True})
        # sidecar recreated not waiting for app container ready
        assert (_finished_at(sidecar) - _finished_at(app)).total_seconds() < 3

        # CRR for pods[1] with orderedRecreate by force
        strategy = {"orderedRecreate": True, "forceRecreate": True}
        _, app, sidecar = await _recreate_and_check(case, pods[1], 1, strategy)
        # sidecar recreated after app container ready
        assert (_finished_at(sidecar) - _finished_at(app)).total_seconds() >= 5


# --- containerlaunchpriority.go ---


def _nginx_template(name: str) -> Obj:
    """`NewCloneSet` / `NewDeployment`'s pod template: one nginx container with env test=foo."""
    container: Obj = {"name": "nginx", "image": NGINX_IMAGE, "env": [{"name": "test", "value": "foo"}]}
    return {"metadata": {"labels": {"owner": name}}, "spec": {"containers": [container]}}


def _new_cloneset(case: Case, name: str, replicas: int) -> Obj:
    template = _nginx_template(name)
    template["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "200m", "memory": "200Mi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    }
    return {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"owner": name}},
                 "template": template, "updateStrategy": {}},
    }  # fmt: skip


def _reader(name: str, env: list[Obj], post_start: bool) -> Obj:
    """The extra webserver container blocked reading its stdin."""
    container: Obj = {
        "name": name, "image": WEBSERVER_IMAGE, "command": ["/bin/bash", "-c", "read -p wait"],
        "stdin": True, "env": env,
    }  # fmt: skip
    if post_start:
        container["lifecycle"] = _hook("postStart", "/bin/sh", "-c", "sleep 1")
    return container


def _spread(workload: Obj) -> None:
    workload["spec"]["template"]["spec"]["topologySpreadConstraints"] = [{
        "labelSelector": workload["spec"]["selector"], "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
    }]  # fmt: skip


async def _node_count(case: Case) -> int:
    """`ListRealNodesWithFake(nil)`: one pod per node."""
    _, out = await case.cluster.kubectl("get", "nodes", "-o", "json")
    return len(json.loads(out)["items"])


async def _ready_pods(case: Case, resource: str, workload: Obj, replicas: int) -> list[Obj]:
    name = workload["metadata"]["name"]
    await case.eventually(
        lambda: case.must_get(resource, name),
        lambda w: (w.get("status") or {}).get("readyReplicas") == replicas,
        f"{resource} {name} readyReplicas",
        timeout=150,
    )
    return await case.list("pods", workload["spec"]["selector"]["matchLabels"])


def _started(pod: Obj, name: str) -> datetime:
    return _time(_status(pod, name)["state"]["running"]["startedAt"])


def _assert_priority_barriers(pod: Obj) -> None:
    barrier = {"name": f"{pod['metadata']['name']}-barrier"}
    first, second = pod["spec"]["containers"][0], pod["spec"]["containers"][1]
    assert first["env"][1]["name"] == PRIORITY_BARRIER
    assert first["env"][1]["valueFrom"]["configMapKeyRef"] == {**barrier, "key": "p_0"}
    assert second["env"][2]["name"] == PRIORITY_BARRIER
    assert second["env"][2]["valueFrom"]["configMapKeyRef"] == {**barrier, "key": "p_10"}
    # the priority-10 container started strictly earlier
    assert _started(pod, first["name"]) > _started(pod, second["name"])


PRIORITY_ENV = [{"name": PRIORITY_NAME, "value": "10"}, {"name": "test", "value": "foo"}]


async def test_container_priority_created_by_cloneset(real_cluster: Cluster) -> None:
    """container priority created by CloneSet"""
    async with upstream_case(real_cluster, "containerpriority") as case:
        replicas = await _node_count(case)
        cs = _new_cloneset(case, f"clone-{case.rand}", replicas)
        cs["spec"]["template"]["spec"]["containers"].append(_reader("c2", PRIORITY_ENV, post_start=True))
        _spread(cs)
        cs = await case.create(cs)
        pods = await _ready_pods(case, CLONESET, cs, replicas)
        for pod in pods:
            _assert_priority_barriers(pod)


async def test_container_priority_created_by_deployment(real_cluster: Cluster) -> None:
    """container priority created by Deployment"""
    async with upstream_case(real_cluster, "containerpriority") as case:
        replicas = await _node_count(case)
        name = f"deploy-{case.rand}"
        dp: Obj = {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": case.ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"owner": name}},
                     "template": _nginx_template(name)},
        }  # fmt: skip
        dp["spec"]["template"]["spec"]["containers"].append(_reader("c2", PRIORITY_ENV, post_start=True))
        _spread(dp)
        dp = await case.create(dp)
        pods = await _ready_pods(case, "deployments.v1.apps", dp, replicas)
        for pod in pods:
            _assert_priority_barriers(pod)


async def test_run_with_priority_annotation_set(real_cluster: Cluster) -> None:
    """run with priorityAnnotation set"""
    async with upstream_case(real_cluster, "containerpriority") as case:
        replicas = await _node_count(case)
        cs = _new_cloneset(case, f"clone-{case.rand}", replicas)
        containers = cs["spec"]["template"]["spec"]["containers"]
        containers[0]["lifecycle"] = _hook("postStart", "/bin/sh", "-c", "sleep 1")
        containers.append(_reader("c2", [{"name": "test", "value": "foo"}], post_start=True))
        containers.append(_reader("c3", [{"name": "test", "value": "foo"}], post_start=False))
        _spread(cs)
        cs["spec"]["template"]["metadata"]["annotations"] = {PRIORITY_ANNOTATION: "Ordered"}
        cs = await case.create(cs)
        pods = await _ready_pods(case, CLONESET, cs, replicas)
        for pod in pods:
            names = [c["name"] for c in pod["spec"]["containers"]]
            assert [len(c["env"]) for c in pod["spec"]["containers"]] == [2, 2, 2]
            first, second, third = (_started(pod, n) for n in names)
            assert first <= second and second <= third
