"""Upstream's EphemeralJob e2e (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/ephemeraljob.go, helpers
from framework/v1alpha1/ephemeraljob_utils.go), translated to kubectl on the AllAlpha sandbox: same
objects, same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here.

The sandbox's kubelet runs a simulated ephemeral container for the seconds its `sleep N` asks, divided
by the node's speed, so `sleep 3` ends in a fraction of a second; a command busybox lacks fails its start
and `ls <missing>` exits 1, as on a node (docs/sandbox.md, "What a simulated image's command does"). The
job's deadlines and TTL are kruise-manager's and run on the real clock, as upstream's do."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from harness import Cluster
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, is_ready, upstream_case

EPHEMERALJOB = "ephemeraljobs.v1alpha1.apps.kruise.io"
CLONESET = "clonesets.v1alpha1.apps.kruise.io"
CRR = "containerrecreaterequests.v1alpha1.apps.kruise.io"
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"
RUN_NGINX = {"matchLabels": {"run": "nginx"}}


def debugger(command: list[str], name: str = "debugger") -> Obj:
    return {
        "targetContainerName": "nginx",
        "name": name,
        "image": BUSYBOX_IMAGE,
        "command": command,
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
    }


async def create_test_deployment(case: Case, replicas: int, containers: list[Obj]) -> None:
    """`CreateTestDeployment`: pods labelled run=nginx, spread by preferred anti-affinity, all ready."""
    name = "foo-" + case.rand
    labels = {"rand": case.rand}
    await case.create({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {**labels, "run": "nginx"}},
                "spec": {
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100,
                        "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": labels}},
                    }]}},
                    "containers": containers,
                },
            },
        },
    })  # fmt: skip
    await case.eventually(
        lambda: case.must_get("deployments.apps", name),
        lambda d: (d.get("status") or {}).get("readyReplicas", 0) == replicas,
        f"deployment {name} with {replicas} ready replicas",
        timeout=300,
    )


async def create_ephemeral_job(case: Case, job: Obj) -> Obj:
    """`CreateEphemeralJob` / `CreateTestEphemeralJob`: create, then read it back."""
    job["metadata"]["namespace"] = case.ns
    created = await case.create(job)
    return await case.eventually(
        lambda: case.get(EPHEMERALJOB, created["metadata"]["name"]),
        lambda j: j is not None,
        "ephemeraljob created",
    )


def new_ephemeral_job(name: str, replicas: int, parallelism: int, containers: list[Obj]) -> Obj:
    """The object of upstream's `CreateTestEphemeralJob(randStr, ...)` (named job-<randStr>)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": "job-" + name},
        "spec": {
            "selector": RUN_NGINX,
            "replicas": replicas,
            "parallelism": parallelism,
            "template": {"ephemeralContainers": containers},
        },
    }


async def job_status(case: Case, name: str, field: str) -> Any:
    return ((await case.must_get(EPHEMERALJOB, name)).get("status") or {}).get(field, 0)


async def ejob_status_is(case: Case, name: str, field: str, want: Any, timeout: float = 120) -> None:
    async def probe() -> Any:
        return await job_status(case, name, field)

    await case.eventually(
        probe, lambda v: v == want, f"ephemeraljob {name} status.{field} == {want!r}", timeout
    )


async def ephemeral_statuses(case: Case) -> int:
    """How many ephemeral statuses the first pod of `GetPodsByEjob` (every pod in the namespace) has."""
    pods = await case.list("pods")
    assert pods, "failed to get target pods"
    return len((pods[0].get("status") or {}).get("ephemeralContainerStatuses") or [])


async def create_in_place_cloneset(case: Case) -> Obj:
    """The CloneSet of the "Create Ephemeral Container" context: `NewCloneSet` (in-place if possible)
    with nginx labelled run=nginx, created and waited for until its one pod is ready."""
    name = "clone-" + case.rand
    cs = await case.create({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"owner": name}},
            "template": {
                "metadata": {"labels": {"owner": name, "run": "nginx"}},
                "spec": {"containers": [{
                    "name": "nginx", "image": NGINX_IMAGE, "env": [{"name": "test", "value": "foo"}],
                    "resources": {"requests": {"cpu": "200m", "memory": "200Mi"},
                                  "limits": {"cpu": "1", "memory": "1Gi"}},
                }]},
            },
            "updateStrategy": {"type": "InPlaceIfPossible"},
        },
    })  # fmt: skip
    assert cs["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
    # Wait for replicas satisfied
    await case.eventually(
        lambda: case.must_get(CLONESET, name),
        lambda c: (c.get("status") or {}).get("replicas") == 1,
        "status.replicas == 1",
        timeout=3,
    )
    # Wait for all pods ready
    return await case.eventually(
        lambda: case.must_get(CLONESET, name),
        lambda c: (c.get("status") or {}).get("readyReplicas") == 1,
        "status.readyReplicas == 1",
    )


async def cloneset_pods(case: Case, cs: Obj) -> list[Obj]:
    """`ListPodsForCloneSet`: the pods the CloneSet controls."""
    uid = cs["metadata"]["uid"]
    return [
        p
        for p in await case.list("pods", {"owner": cs["metadata"]["name"]})
        if any(
            r.get("controller") and r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or []
        )
    ]


async def test_create_ephemeral_running_succeed_job(kruise_sandbox_all_gates: Cluster):
    """create ephemeral running succeed job"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(case, 5, [{"name": "nginx", "image": NGINX_IMAGE}])
        job = await create_ephemeral_job(case, new_ephemeral_job(case.rand, 4, 1, [debugger(["sleep", "3"])]))
        await ejob_status_is(case, job["metadata"]["name"], "succeeded", 4)


async def test_create_ephemeral_running_err_command_job(kruise_sandbox_all_gates: Cluster):
    """create ephemeral running err command job

    busybox has no `sdkfjk`: the sandbox's runtime fails the start as runc does (exit 128, StartError),
    so every one of the ten debuggers counts as failed."""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(
            case, 10, [{"name": "nginx", "image": NGINX_IMAGE, "imagePullPolicy": "IfNotPresent"}]
        )
        job = await create_ephemeral_job(case, new_ephemeral_job(case.rand, 10, 10, [debugger(["sdkfjk"])]))
        await ejob_status_is(case, job["metadata"]["name"], "failed", 10)


async def test_create_ephemeral_running_active_deadline_seconds(kruise_sandbox_all_gates: Cluster):
    """create ephemeral running activeDeadlineSeconds"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(
            case, 1, [{"name": "nginx", "image": NGINX_IMAGE, "imagePullPolicy": "IfNotPresent"}]
        )
        job = new_ephemeral_job(case.rand, 1, 1, [debugger(["sleep", "9999"])])
        job["spec"]["activeDeadlineSeconds"] = 20
        job = await create_ephemeral_job(case, job)
        await ejob_status_is(case, job["metadata"]["name"], "phase", "Failed")


async def test_create_ephemeral_running_error_exit_job(kruise_sandbox_all_gates: Cluster):
    """create ephemeral running error exit job

    busybox's `ls sdfewasf` exits 1 (no such file): every one of the ten debuggers counts as failed."""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(
            case, 10, [{"name": "nginx", "image": NGINX_IMAGE, "imagePullPolicy": "IfNotPresent"}]
        )
        job = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand, 10, 10, [debugger(["ls", "sdfewasf"])])
        )
        await ejob_status_is(case, job["metadata"]["name"], "failed", 10)


async def test_create_two_ephemeral_running_job(kruise_sandbox_all_gates: Cluster):
    """create two ephemeral running job"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(
            case, 1, [{"name": "nginx", "image": NGINX_IMAGE, "imagePullPolicy": "IfNotPresent"}]
        )
        await create_ephemeral_job(
            case, new_ephemeral_job(case.rand + "2", 1, 1, [debugger(["sleep", "3000"])])
        )
        await create_ephemeral_job(
            case, new_ephemeral_job("222222", 1, 1, [debugger(["sleep", "30"], name="debugger2")])
        )
        await case.eventually(
            lambda: ephemeral_statuses(case), lambda n: n == 2, "2 ephemeral container statuses"
        )


async def test_create_ephemeral_running_two_job_but_to_one_target(kruise_sandbox_all_gates: Cluster):
    """create ephemeral running two job, but to one target"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(
            case, 1, [{"name": "nginx", "image": NGINX_IMAGE, "imagePullPolicy": "IfNotPresent"}]
        )
        job1 = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand + "1", 1, 1, [debugger(["sleep", "3000"])])
        )
        await ejob_status_is(case, job1["metadata"]["name"], "running", 1, timeout=180)
        await case.eventually(
            lambda: ephemeral_statuses(case), lambda n: n == 1, "1 ephemeral container status", 60
        )
        job2 = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand + "2", 1, 1, [debugger(["sleep", "3000"])])
        )
        # Check whether ephemeral container can updated (not possible yet)
        await ejob_status_is(case, job2["metadata"]["name"], "matches", 0)


async def test_check_ttl(kruise_sandbox_all_gates: Cluster):
    """check ttl"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        await create_test_deployment(case, 1, [{"name": "nginx", "image": NGINX_IMAGE}])
        job = new_ephemeral_job(case.rand, 1, 1, [debugger(["sleep", "3"])])
        job["spec"]["ttlSecondsAfterFinished"] = 5
        job["spec"]["activeDeadlineSeconds"] = 5
        job = await create_ephemeral_job(case, job)
        name = job["metadata"]["name"]
        assert await case.get(EPHEMERALJOB, name) is not None
        # upstream sleeps 20 s and then expects the job gone: a poll with the same deadline
        await case.eventually(
            lambda: case.get(EPHEMERALJOB, name), lambda j: j is None, f"{name} deleted", 20
        )


async def test_ephemeral_container_in_in_place_update(kruise_sandbox_all_gates: Cluster):
    """test ephemeral container in in-place-update"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        cs = await create_in_place_cloneset(case)
        job = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand, 1, 1, [debugger(["sleep", "99999"])])
        )
        # Check the status of container
        await ejob_status_is(case, job["metadata"]["name"], "running", 1, timeout=60)
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        # upstream polls the pod it already read; it must carry the ephemeral status already
        statuses = (pods[0].get("status") or {}).get("ephemeralContainerStatuses") or []
        assert len(statuses) == 1
        old_uid, old_ephemeral = pods[0]["metadata"]["uid"], statuses[0]

        # Update image to new nginx
        def new_image(obj: Obj) -> None:
            obj["metadata"].setdefault("annotations", {})
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE

        await case.update(CLONESET, cs["metadata"]["name"], new_image)
        # Wait for CloneSet generation consistent
        await case.eventually(
            lambda: case.must_get(CLONESET, cs["metadata"]["name"]),
            lambda c: c["metadata"]["generation"] == (c.get("status") or {}).get("observedGeneration"),
            "observedGeneration == generation",
            timeout=10,
        )
        # Wait for all pods updated and ready
        await case.eventually(
            lambda: case.must_get(CLONESET, cs["metadata"]["name"]),
            lambda c: (c.get("status") or {}).get("updatedReadyReplicas") == 1,
            "status.updatedReadyReplicas == 1",
        )
        # Verify the ephemeral containerID not changed
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        new_main = pods[0]["status"]["containerStatuses"][0]
        assert pods[0]["metadata"]["uid"] == old_uid
        assert new_main.get("containerID") != old_ephemeral.get("containerID")


async def test_ephemeral_container_impact_main_container(kruise_sandbox_all_gates: Cluster):
    """test ephemeral container impact main container"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        cs = await create_in_place_cloneset(case)
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        old_uid, old_main = pods[0]["metadata"]["uid"], pods[0]["status"]["containerStatuses"][0]

        job = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand, 1, 1, [debugger(["sleep", "99999"])])
        )
        # Check the status of container
        await ejob_status_is(case, job["metadata"]["name"], "running", 1, timeout=60)
        # Verify the main containerID not changed after ephemeral inject
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        assert pods[0]["metadata"]["uid"] == old_uid
        assert pods[0]["status"]["containerStatuses"][0]["containerID"] == old_main["containerID"]


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def test_ephemeral_container_in_crr(kruise_sandbox_all_gates: Cluster):
    """test ephemeral container in crr"""
    async with upstream_case(kruise_sandbox_all_gates, "ehpemeraljobs") as case:
        cs = await create_in_place_cloneset(case)
        job = await create_ephemeral_job(
            case, new_ephemeral_job(case.rand, 1, 1, [debugger(["sleep", "99999"])])
        )
        # Check the status of container
        await ejob_status_is(case, job["metadata"]["name"], "running", 1)
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        # upstream polls the pod it already read; it must carry the ephemeral status already
        statuses = (pods[0].get("status") or {}).get("ephemeralContainerStatuses") or []
        assert len(statuses) == 1
        old_uid, old_ephemeral = pods[0]["metadata"]["uid"], statuses[0]

        # Create CRR for pods[0], recreate container: app
        pod = pods[0]
        crr = await case.create({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": f"crr-{case.rand}-0", "namespace": case.ns},
            "spec": {"podName": pod["metadata"]["name"], "containers": [{"name": "nginx"}],
                     "strategy": {"minStartedSeconds": 5}, "ttlSecondsAfterFinished": 99999},
        })  # fmt: skip
        # wait webhook: the labels are on the object create returned
        labels = crr["metadata"]["labels"]
        assert labels["crr.apps.kruise.io/pod-uid"] == pod["metadata"]["uid"]
        assert labels["crr.apps.kruise.io/node-name"] == pod["spec"]["nodeName"]
        assert labels["crr.apps.kruise.io/active"] == "true"
        assert crr["spec"]["strategy"]["failurePolicy"] == "Fail"
        old_main = crr["spec"]["containers"][0]["statusContext"]["containerID"]
        assert old_main == pod["status"]["containerStatuses"][0]["containerID"]

        # Wait CRR recreate completion
        name = crr["metadata"]["name"]
        crr = await case.eventually(
            lambda: case.must_get(CRR, name),
            lambda c: (c.get("status") or {}).get("phase") == "Completed",
            "CRR Completed",
            timeout=70,
        )
        assert crr["status"].get("completionTime")
        crr = await case.eventually(
            lambda: case.must_get(CRR, name),
            lambda c: c["metadata"].get("labels", {}).get("crr.apps.kruise.io/active", "") == "",
            "CRR no longer active",
            timeout=5,
        )
        assert crr["status"]["containerRecreateStates"] == [
            {"name": "nginx", "phase": "Succeeded", "isKilled": True}
        ]

        # Check Pod containers recreated and started for minStartedSeconds
        pod = await case.must_get("pods", pod["metadata"]["name"])
        assert is_ready(pod)
        main = pod["status"]["containerStatuses"][0]
        assert main["containerID"] != old_main
        assert main["restartCount"] == 1
        started = _time(main["state"]["running"]["startedAt"])
        assert (_time(crr["status"]["completionTime"]) - started).total_seconds() > 4

        # Verify the ephemeral containerID not changed
        pods = await cloneset_pods(case, cs)
        assert len(pods) == 1
        assert pods[0]["metadata"]["uid"] == old_uid
        assert pods[0]["status"]["containerStatuses"][0]["containerID"] != old_ephemeral["containerID"]
