"""Upstream's CloneSet e2e, context "CloneSet pre-download images" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/cloneset.go), translated to kubectl on the AllAlpha sandbox (the case relies on
gate PreDownloadImageForInPlaceUpdate, alpha, and on ImagePullJobGate it needs)."""

from __future__ import annotations

import json

import pytest
from cloneset_tester import (
    AVAILABLE,
    NEW_NGINX_IMAGE,
    PARTITION_AVAILABLE,
    TEN_MINUTES,
    UPDATED,
    upstream_case,
)
from harness import Cluster, until

PARALLELISM = "apps.kruise.io/image-predownload-parallelism"


@pytest.mark.timeout(300)
async def test_pre_download_for_new_image(kruise_sandbox_all_gates: Cluster):
    """pre-download for new image"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 5, {"type": "InPlaceIfPossible", "partition": 1})
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
        assert created["spec"]["updateStrategy"]["maxUnavailable"] == "20%"

        await case.eventually_progressing(name, UPDATED)
        await case.eventually_status(name, "replicas", 5, timeout=30)
        await case.eventually_progressing(name, AVAILABLE)

        def new_image(obj):
            obj["metadata"].setdefault("annotations", {})[PARALLELISM] = "2"
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE

        await case.update(name, new_image)
        await case.eventually_progressing(name, UPDATED)

        async def jobs() -> list[dict]:
            """`ListImagePullJobsForCloneSet`: the namespace's ImagePullJobs the CloneSet controls."""
            out = await case.kubectl("get", "imagepulljobs.v1alpha1.apps.kruise.io", "-o", "json")
            return [j for j in json.loads(out)["items"] if _controller(j) == name]

        [job] = await until(jobs, lambda found: len(found) == 1, "one ImagePullJob for the CloneSet", 30)
        assert job["spec"]["image"] == NEW_NGINX_IMAGE
        assert int(job["spec"]["parallelism"]) == 2

        await case.eventually_progressing(name, PARTITION_AVAILABLE)


def _controller(obj: dict) -> str | None:
    return next(
        (r["name"] for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None
    )
