"""Upstream's in-place vertical scaling cases with two containers and launch priorities (openkruise/kruise
v1.9.0 test/e2e/apps/v1alpha1/inplace_vpa.go, the last three `It`s of testWithResizePolicy), translated
to kubectl on real nodes (`kruise sandbox up --runtime containerd`, upstream's e2e gates).

They need real containers: two assert that nginx was stopped at least 10 s after the new redis started,
which only redis's `postStart: sleep 10` held in real time produces, and one needs a container that
really exits (redis becomes busybox with no command and crash-loops). The fake runtime runs no hooks and
its containers never exit on their own, so the other CloneSet cases of the file run there
(e2e/inplacevpa/), whose builders and checks these reuse. The resize itself reaches containerd: the
real-node kubelet applies a NotRequired resize to the running container with CRI
UpdateContainerResources (tests/integration/realnode checks the container's cgroup).

Each `It` is one test parametrized over upstream's four resizePolicy contexts (ids as there); all twelve
share one real cluster, each in a namespace of its own as upstream's framework gives every `It`.
Upstream's images are the sandbox's stand-ins under the same names (docs/sandbox.md).

The context "Basic StatefulSet functionality [StatefulSetBasic]" runs here too: its rolls are held by
breaking nginx's HTTP readiness probe through `kubectl exec` (moving index.html away), which only real
containers serve; it shares this module's cluster (the same gates as e2e/containerd's StatefulSet module)
rather than starting one of its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from harness import Cluster
from statefulset.statefulset_tester import (
    ensure_default_class,
    headless_service,
    new_statefulset,
    revision_of,
)
from statefulset_exec import ExecStatefulSetTester, rollback_with_update_fn_test
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, upstream_case

from e2e.inplacevpa.test_upstream_inplace_vpa_e2e import (
    NEW_NGINX_IMAGE,
    NEW_RESOURCE,
    OLD_RESOURCE,
    POLICIES,
    check_pod_resource,
    cloneset_pods,
    created_with_one_ready_pod,
    new_cloneset,
    pod_resource,
    update_clone,
    wait_cloneset_updated_and_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES (InPlaceWorkloadVerticalScaling is alpha: AllAlpha turns it
# on); a pod subnet of its own, so a real-node sandbox left running elsewhere does not refuse this one
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
    "--pod-subnet",
    "198.19.128.0/18",
)

REDIS_IMAGE = "registry.k8s.io/e2e-test-images/redis:5.0.5-3"  # apps2.RedisImage
PRIORITY_ENV = {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}  # appspub.ContainerLaunchPriorityEnvName
IN_PLACE_STATE = "apps.kruise.io/inplace-update-state"  # appspub.InPlaceUpdateStateKey
CONFIG_FIELD = "metadata.annotations['config']"
CRASH_WAIT = 60.0  # upstream's Eventually for the crash-looping redis


def _redis(*, command: list[str] | None = None, extra_env: list[Obj] | None = None) -> Obj:
    """The second container: priority 10, held by `postStart: sleep 10` before it counts as started."""
    container: Obj = {
        "name": "redis",
        "image": REDIS_IMAGE,
        "env": [dict(PRIORITY_ENV), *(extra_env or [])],
        "lifecycle": {"postStart": {"exec": {"command": ["sleep", "10"]}}},
    }
    if command:
        container["command"] = command
    return container


def _status(pod: Obj, name: str) -> Obj:
    """`util.GetContainerStatus`."""
    return next(s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name)


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _not_before_ten_seconds_after(stopped: datetime, started: datetime) -> bool:
    """Upstream's `stopped.After(started + 10s)`, strict as upstream's: status times are whole seconds,
    and the real-node kubelet acts on a container that turned ready at its next relist (about a second,
    `sandbox/simulator/pleg.py`, as a real kubelet's PLEG), so the stop reads more than 10 s after."""
    return stopped > started + timedelta(seconds=10)


def _first_container_id(pod: Obj) -> str:
    """`pods[0].Status.ContainerStatuses[0].ContainerID` (statuses sorted by name: nginx)."""
    return pod["status"]["containerStatuses"][0]["containerID"]


def _in_place_state(pod: Obj) -> Obj:
    raw = (pod["metadata"].get("annotations") or {}).get(IN_PLACE_STATE)
    assert raw, f"pod {pod['metadata']['name']} has no {IN_PLACE_STATE}"
    return json.loads(raw)


def _batches(state: Obj) -> list[list[str]]:
    return [batch["containers"] for batch in state.get("containerBatchesRecord") or []]


async def _only_pod(case: Case, name: str) -> Obj:
    pods = await cloneset_pods(case, name)
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return pods[0]


async def _update_nginx_and_redis_images(
    case: Case, redis: Obj, resize_policy: list[Obj] | None
) -> tuple[str, Obj, dict[str, Obj]]:
    """The first two `It`s' start: a one-pod CloneSet of nginx (`resize_policy`, when the `It` sets one) and
    `redis`, 3 s of grace; once its pod is ready, nginx to the new image and resources, redis to busybox.
    Returns the set's name, the old pod and its resources."""
    cs = new_cloneset(case, f"clone-{case.rand}", 1)
    spec = cs["spec"]["template"]["spec"]
    if resize_policy is not None:
        spec["containers"][0]["resizePolicy"] = resize_policy
    spec["containers"].append(redis)
    spec["terminationGracePeriodSeconds"] = 3
    name, old_pod = await created_with_one_ready_pod(case, cs)

    def images_and_resource(template: Obj) -> None:
        containers = template["spec"]["containers"]
        containers[0]["image"], containers[1]["image"] = NEW_NGINX_IMAGE, BUSYBOX_IMAGE
        containers[0]["resources"] = json.loads(json.dumps(NEW_RESOURCE))

    await update_clone(case, name, images_and_resource, False)
    return name, old_pod, pod_resource(old_pod)


@pytest.mark.parametrize("resize_policy", POLICIES)
async def test_in_place_update_two_container_image_resource_with_priorities_successfully(
    real_cluster: Cluster, resize_policy: list[Obj]
) -> None:
    """in-place update two container image, resource with priorities successfully

    Context "CloneSet Updating with inplace resource"."""
    async with upstream_case(real_cluster, "inplace-vpa") as case:
        redis = _redis(command=["sleep", "999"])
        name, old_pod, old_resource = await _update_nginx_and_redis_images(case, redis, resize_policy)
        await wait_cloneset_updated_and_ready(case, name, _first_container_id(old_pod))

        # Verify two containers have all updated in-place
        pod = await _only_pod(case, name)
        nginx, redis = _status(pod, "nginx"), _status(pod, "redis")
        # (upstream leaves nginx's restartCount unchecked: 1.32+ resizes and updates the image apart)
        assert redis["restartCount"] == 1

        # Verify nginx should be stopped after new redis has started 10s
        finished = _time(nginx["lastState"]["terminated"]["finishedAt"])
        started = _time(redis["state"]["running"]["startedAt"])
        assert _not_before_ten_seconds_after(finished, started), f"nginx {finished}, redis {started}"

        # Verify in-place update state in two batches
        assert _batches(_in_place_state(pod)) == [["redis"], ["nginx"]]
        assert check_pod_resource([pod], old_resource, ["redis"]), json.dumps(pod, indent=1)


@pytest.mark.parametrize("resize_policy", POLICIES)
async def test_in_place_update_two_container_image_resource_with_priorities_should_not_update_the_next_when_the_previous_one_failed(  # noqa: E501
    real_cluster: Cluster, resize_policy: list[Obj]
) -> None:
    """in-place update two container image, resource with priorities, should not update the next when the previous one failed

    Context "CloneSet Updating with inplace resource" (upstream sets no resizePolicy in this one, so the
    four contexts run the same spec)."""  # noqa: E501
    async with upstream_case(real_cluster, "inplace-vpa") as case:
        # Update images of nginx and redis
        name, _, old_resource = await _update_nginx_and_redis_images(case, _redis(), None)

        # Wait for redis failed to start: busybox with no command runs `sh`, which exits at once
        await case.eventually(
            lambda: _only_pod(case, name),
            lambda p: (_status(p, "redis").get("lastState") or {}).get("terminated") is not None,
            "redis terminated once",
            timeout=CRASH_WAIT,
        )
        pod = await case.eventually(
            lambda: _only_pod(case, name),
            lambda p: (_status(p, "redis").get("state") or {}).get("waiting") is not None,
            "redis waiting (back-off)",
            timeout=CRASH_WAIT,
        )
        assert _status(pod, "nginx")["restartCount"] == 0

        # Verify in-place update state only one batch and remain next
        state = _in_place_state(pod)
        assert _batches(state) == [["redis"]]
        assert state.get("nextContainerImages") == {"nginx": NEW_NGINX_IMAGE}
        assert not check_pod_resource([pod], old_resource, ["redis"]), json.dumps(pod, indent=1)


@pytest.mark.parametrize("resize_policy", POLICIES)
async def test_in_place_update_two_container_image_resource_and_env_from_metadata_with_priorities(
    real_cluster: Cluster, resize_policy: list[Obj]
) -> None:
    """in-place update two container image, resource and env from metadata with priorities

    Context "CloneSet Updating with inplace resource"."""
    async with upstream_case(real_cluster, "inplace-vpa") as case:
        cs = new_cloneset(case, f"clone-{case.rand}", 1)
        cs["spec"]["template"]["metadata"]["annotations"] = {"config": "foo"}
        spec = cs["spec"]["template"]["spec"]
        spec["containers"][0]["resizePolicy"] = resize_policy
        config = {"name": "CONFIG", "valueFrom": {"fieldRef": {"fieldPath": CONFIG_FIELD}}}
        spec["containers"].append(_redis(extra_env=[config]))
        name, old_pod = await created_with_one_ready_pod(case, cs)
        old_resource = pod_resource(old_pod)

        # Update nginx image and config annotation
        def image_annotation_and_resource(template: Obj) -> None:
            template["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
            template["metadata"]["annotations"]["config"] = "bar"
            template["spec"]["containers"][0]["resources"] = json.loads(json.dumps(NEW_RESOURCE))

        await update_clone(case, name, image_annotation_and_resource, False)
        await wait_cloneset_updated_and_ready(case, name, _first_container_id(old_pod))

        # Verify two containers have all updated in-place
        pod = await _only_pod(case, name)
        nginx, redis = _status(pod, "nginx"), _status(pod, "redis")
        assert redis["restartCount"] == 1

        # Verify nginx should be stopped after new redis has started (upstream falls back to nginx's
        # own start when it has no last termination, openkruise/kruise#1925)
        terminated = (nginx.get("lastState") or {}).get("terminated")
        stopped = _time(terminated["finishedAt"] if terminated else nginx["state"]["running"]["startedAt"])
        started = _time(redis["state"]["running"]["startedAt"])
        assert _not_before_ten_seconds_after(stopped, started), f"nginx stop {stopped}, redis start {started}"

        # Verify in-place update state in two batches
        assert _batches(_in_place_state(pod)) == [["redis"], ["nginx"]]
        assert check_pod_resource([pod], old_resource, ["redis"]), json.dumps(pod, indent=1)


# context "Basic StatefulSet functionality [StatefulSetBasic]"
SS_LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"
STATEFUL_MOUNTS = [{"name": "datadir", "mountPath": "/data/"}]
POD_MOUNTS = [{"name": "home", "mountPath": "/home"}]
LABEL_KEY = "label-k2"
LABEL_ENV = {"name": "test-env", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{LABEL_KEY}']"}}}


def _in_place_if_possible(ss: Obj) -> None:
    """The `It`s' strategy: `InPlaceIfPossible` with the `InPlaceUpdateReady` readiness gate."""
    ss["spec"]["updateStrategy"]["rollingUpdate"] = {"podUpdatePolicy": "InPlaceIfPossible"}
    ss["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]


def _resources(resources: Obj) -> Callable[[Obj], None]:
    def change(update: Obj) -> None:
        update["spec"]["template"]["spec"]["containers"][0]["resources"] = json.loads(json.dumps(resources))

    return change


async def _rolling_updates_including_resources(case: Case, ss: Obj) -> None:
    """The context's `testfn`: nginx gets `test-env` from the template label `label-k2: hello`, then
    `rollbackWithUpdateFnTest` rolls its resources from oldResource to newResource and back.

    Upstream's update and rollback functions also write `label-k2` ("test", then "hello" again), but into
    `testfn`'s own copy of the set (the one it created from, or a `WaitForStatus` read), never into the
    object the retrying update sends; so the label, and the env from it, stay "hello" and only the
    resources roll, in place. The same happens here: only the resources change. Upstream's per-pod
    `diff.ObjectDiff` of the resources asserts nothing; here the pods' resources must be the roll's."""
    container = ss["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).append(dict(LABEL_ENV))
    ss["spec"]["template"]["metadata"].setdefault("labels", {})[LABEL_KEY] = "hello"
    old_image = container["image"]

    def on(resources: Obj) -> Callable[[list[Obj], str], None]:
        def validate(pods: list[Obj], revision: str) -> None:  # baseValidFn and the resources
            for pod in pods:
                name, nginx = pod["metadata"]["name"], pod["spec"]["containers"][0]
                assert nginx["image"] == old_image, f"Pod {name} has image {nginx['image']} not {old_image}"
                assert revision_of(pod) == revision, f"Pod {name} revision is not {revision}"
                assert nginx["resources"] == resources, f"Pod {name} resources {nginx['resources']}"
                assert pod["metadata"]["labels"][LABEL_KEY] == "hello", pod["metadata"]["labels"]

        return validate

    await rollback_with_update_fn_test(
        ExecStatefulSetTester(case),
        ss,
        _resources(NEW_RESOURCE),
        _resources(OLD_RESOURCE),
        on(NEW_RESOURCE),
        on(OLD_RESOURCE),
    )


async def test_should_perform_rolling_updates_including_resources_and_roll_backs_with_pvcs(
    real_cluster: Cluster,
) -> None:
    """should perform rolling updates(including resources) and roll backs with pvcs

    Context "Basic StatefulSet functionality [StatefulSetBasic]": its BeforeEach's set (2 replicas, the
    `datadir` claim template, the `home` host path) and headless service."""
    async with upstream_case(real_cluster, "inplace-vpa") as case:
        await ensure_default_class(case.cluster)  # the claim template names no class (kind's default)
        ss = new_statefulset("ss", case.ns, HEADLESS_SVC, 2, STATEFUL_MOUNTS, POD_MOUNTS, SS_LABELS)
        await case.create(headless_service(HEADLESS_SVC, SS_LABELS))
        # Creating a new StatefulSet
        _in_place_if_possible(ss)
        await _rolling_updates_including_resources(case, ss)


async def test_should_perform_rolling_updates_including_resources_and_roll_backs(
    real_cluster: Cluster,
) -> None:
    """should perform rolling updates(including resources) and roll backs

    Context "Basic StatefulSet functionality [StatefulSetBasic]": its BeforeEach's headless service; the
    `It` replaces the BeforeEach's set with "ss2", 3 replicas and no mounts (so no claims)."""
    async with upstream_case(real_cluster, "inplace-vpa") as case:
        await case.create(headless_service(HEADLESS_SVC, SS_LABELS))
        # Creating a new StatefulSet
        ss = new_statefulset("ss2", case.ns, HEADLESS_SVC, 3, [], [], SS_LABELS)
        _in_place_if_possible(ss)
        await _rolling_updates_including_resources(case, ss)
