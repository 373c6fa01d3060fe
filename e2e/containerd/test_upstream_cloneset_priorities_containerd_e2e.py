"""Upstream's three two-container in-place update cases "with priorities" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/cloneset.go, context "CloneSet Updating"), translated to kubectl on real nodes
(`kruise sandbox up --runtime containerd`, upstream's e2e gates).

They need what only real containers give: the redis container's `postStart: sleep 10` holds the next
batch for ten real seconds (nginx must stop at least 10 s after the new redis started), and redis turned
into busybox without a command must really exit and crash-loop, so the next batch never starts. The
fake runtime runs no hooks and its containers never exit on their own; the rest of the file runs there
(e2e/cloneset/test_upstream_cloneset_updating_e2e.py).

Upstream's images are the sandbox's stand-ins under the same names (docs/sandbox.md): the e2e nginx
tags serve port 80, redis idles, busybox's default `sh` exits at once as the real one does without a
terminal. The three cases share one real cluster; each works in a namespace of its own."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from cloneset_tester import (
    BUSYBOX_IMAGE,
    NEW_NGINX_IMAGE,
    REDIS_IMAGE,
    TEN_MINUTES,
    UPDATED,
    WAIT,
    Case,
    container_status,
    upstream_case,
)
from harness import Cluster, until

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES: the manager flag of upstream's e2e deployment; a pod subnet
# of its own, so a real-node sandbox left running elsewhere on the machine does not refuse this one
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
    "--pod-subnet",
    "198.19.0.0/18",
)

INPLACE = {"type": "InPlaceIfPossible"}
IN_PLACE_UPDATE_STATE = "apps.kruise.io/inplace-update-state"
PRIORITY_NAME = "KRUISE_CONTAINER_PRIORITY"


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _redis(extra_env: list[dict[str, Any]] | None = None, command: list[str] | None = None) -> dict[str, Any]:
    """upstream's second container: redis with launch priority 10 and a 10 s postStart hook."""
    container: dict[str, Any] = {
        "name": "redis",
        "image": REDIS_IMAGE,
        "env": [{"name": PRIORITY_NAME, "value": "10"}, *(extra_env or [])],
        "lifecycle": {"postStart": {"exec": {"command": ["sleep", "10"]}}},
    }
    if command:
        container["command"] = command
    return container


def _stopped_after_started(pod: dict[str, Any], seconds: int) -> bool:
    """nginx's last run ended more than `seconds` after the new redis started (its postStart held
    the nginx batch back)."""
    nginx, redis = container_status(pod, "nginx"), container_status(pod, "redis")
    terminated = (nginx.get("lastState") or {}).get("terminated")
    running = (redis.get("state") or {}).get("running")
    if not terminated or not running:
        return False
    return _time(terminated["finishedAt"]) > _time(running["startedAt"]) + timedelta(seconds=seconds)


def _in_place_state(pod: dict[str, Any]) -> dict[str, Any]:
    raw = (pod["metadata"].get("annotations") or {}).get(IN_PLACE_UPDATE_STATE)
    assert raw, f"pod {pod['metadata']['name']} has no in-place update state"
    return json.loads(raw)


async def _only_pod(case: Case, name: str) -> dict[str, Any]:
    """upstream's `Expect(len(pods)).Should(Equal(1))` inside its polls: one pod, else the case fails."""
    pods = await case.pods(name)
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return pods[0]


def _batches(pod: dict[str, Any]) -> list[list[str]]:
    return [b["containers"] for b in _in_place_state(pod)["containerBatchesRecord"]]


def _images_of_nginx_and_redis(obj: dict[str, Any]) -> None:
    """upstream's step "Update images of nginx and redis"."""
    containers = obj["spec"]["template"]["spec"]["containers"]
    containers[0]["image"], containers[1]["image"] = NEW_NGINX_IMAGE, BUSYBOX_IMAGE


async def test_in_place_update_two_container_images_with_priorities(real_cluster: Cluster) -> None:
    """in-place update two container images with priorities successfully"""
    async with upstream_case(real_cluster) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        cs["spec"]["template"]["spec"]["containers"].append(_redis(command=["sleep", "999"]))
        cs["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 3
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        name = await case.created_and_available(cs, 1)
        assert len(await case.pods(name)) == 1

        await case.update(name, _images_of_nginx_and_redis)
        await case.updated_and_available(name, 1, timeout=WAIT)

        # Verify two containers have all updated in-place
        pod = await _only_pod(case, name)
        assert container_status(pod, "nginx")["restartCount"] == 1
        assert container_status(pod, "redis")["restartCount"] == 1

        # Verify nginx should be stopped after new redis has started 10s
        await until(
            lambda: _only_pod(case, name),
            lambda p: _stopped_after_started(p, 10),
            "nginx should be stopped after new redis has started 10s",
            timeout=30,
        )

        # Verify in-place update state in two batches
        assert _batches(pod) == [["redis"], ["nginx"]]


async def test_in_place_update_two_container_images_with_priorities_previous_failed(
    real_cluster: Cluster,
) -> None:
    """in-place update two container images with priorities, should not update the next when the previous one failed"""  # noqa: E501
    async with upstream_case(real_cluster) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        cs["spec"]["template"]["spec"]["containers"].append(_redis())
        cs["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 3
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        name = await case.created_and_available(cs, 1)
        assert len(await case.pods(name)) == 1

        await case.update(name, _images_of_nginx_and_redis)
        await case.eventually_progressing(name, UPDATED)
        await case.generation_observed(name)

        # Wait for redis failed to start: it ran busybox's `sh`, which exits, and now backs off
        await until(
            lambda: _only_pod(case, name),
            lambda p: (container_status(p, "redis").get("lastState") or {}).get("terminated"),
            "redis lastState.terminated",
            timeout=60,
        )
        pod = await until(
            lambda: _only_pod(case, name),
            lambda p: (container_status(p, "redis").get("state") or {}).get("waiting"),
            "redis state.waiting",
            timeout=60,
        )
        assert container_status(pod, "nginx")["restartCount"] == 0

        # Verify in-place update state only one batch and remain next
        assert _batches(pod) == [["redis"]]
        assert _in_place_state(pod)["nextContainerImages"] == {"nginx": NEW_NGINX_IMAGE}

        # Check cloneSet progressing condition still with updated reason
        await case.consistently(lambda: case.progressing(name), UPDATED, f"{name} Progressing", 30)


async def test_in_place_update_two_container_images_and_env_from_metadata_with_priorities(
    real_cluster: Cluster,
) -> None:
    """in-place update two container image and env from metadata with priorities"""
    async with upstream_case(real_cluster) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        cs["spec"]["template"]["metadata"]["annotations"] = {"config": "foo"}
        from_annotation = {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}
        config = {"name": "CONFIG", "valueFrom": from_annotation}
        cs["spec"]["template"]["spec"]["containers"].append(_redis(extra_env=[config]))
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        name = await case.created_and_available(cs, 1)
        assert len(await case.pods(name)) == 1

        def image_and_annotation(obj: dict[str, Any]) -> None:
            """upstream's step "Update nginx image and config annotation"."""
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
            obj["spec"]["template"]["metadata"]["annotations"]["config"] = "bar"

        await case.update(name, image_and_annotation)
        await case.updated_and_available(name, 1, timeout=WAIT)

        # Verify two containers have all updated in-place
        pod = await _only_pod(case, name)
        nginx, redis = container_status(pod, "nginx"), container_status(pod, "redis")
        assert nginx["restartCount"] == 1
        assert redis["restartCount"] == 1

        # Verify nginx should be stopped after new redis has started
        assert _stopped_after_started(pod, 10), (
            f"nginx finish at {nginx['lastState']} is not after redis start {redis['state']} + 10s"
        )

        # Verify in-place update state in two batches
        assert _batches(pod) == [["redis"], ["nginx"]]
