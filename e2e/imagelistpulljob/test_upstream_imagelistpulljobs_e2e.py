"""Upstream's ImageListPullJob e2e, Describe "PullImages" — context "ImageListPullJob pulling images
functionality [ImageListPullJob]" (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/imagelistpulljobs.go
and its v1beta1 copy, identical but for the version) — translated to kubectl on the AllAlpha sandbox, each
case run at both versions. Same jobs, same steps, same assertions, with the fake NodeImage of the
BeforeEach: the jobs without a selector count it, and upstream fails its pulls with `FailNodeImageFast` so
that they finish.

Deadlines: upstream's are kept where they time kruise (270/360/180 s to complete, 25 s for a 20 s TTL, 1 min
for the garbage collector); the 3 s ones that time a reconcile on an idle kind cluster get `SLACK` on top,
as the sandbox shares two cores with the rest of the suite. Upstream sleeps 10 s before `FailNodeImageFast`
so that the fake NodeImage's spec has the image; here that is polled for. The cases are `Serial` upstream,
and so are these: the fake NodeImage is shared."""

from __future__ import annotations

import pytest
from harness import Cluster
from imagelistpulljob_tester import ImageListPullJobTester, imagelistpulljobs_case
from imagepulljob_tester import FAKE_NODEIMAGE, NEW_NGINX_IMAGE, NGINX_IMAGE, PullImagesTester
from upstream_kit import BUSYBOX_IMAGE, WEBSERVER_IMAGE, Obj, controlled_by

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"]),
]

SLACK = 20.0
BASE_JOB = "test-imagelistpulljob"
NOT_FAKE = {"matchExpressions": [{"key": "apps.kruise.io/fake-nodeimage", "operator": "DoesNotExist"}]}


def template(pull: str, completion: Obj, **fields: object) -> Obj:
    """The cases' `ImagePullJobTemplate`: pull policy 50 s / 2 retries, parallelism 4."""
    return {
        "pullPolicy": {"timeoutSeconds": 50, "backoffLimit": 2},
        "parallelism": 4,
        "imagePullPolicy": pull,
        "completionPolicy": completion,
        **fields,
    }


async def eventually_status(tester: ImageListPullJobTester, done, what: str, timeout: float) -> Obj:
    """Eventually on the list job's status (the job must exist throughout, as upstream's GetJob must not
    fail)."""

    async def status() -> Obj:
        return (await tester.must_get_job(BASE_JOB)).get("status") or {}

    return await tester.case.eventually(status, done, what, timeout=timeout)


async def eventually_pull_jobs(pull_jobs: PullImagesTester, count: int) -> None:
    """ "Wait <n> imagepulljob created"."""
    await pull_jobs.case.eventually(
        pull_jobs.list_jobs, lambda jobs: len(jobs) == count, f"{count} ImagePullJobs", 3 + SLACK
    )


async def fail_fake_node_image(tester: ImageListPullJobTester, image: str) -> None:
    """ "mock a completed imagepulljob": once the fake NodeImage's spec has the image (upstream sleeps 10 s
    for it), every tag of that spec fails."""
    await tester.case.eventually(
        lambda: tester.has_image_in_spec(FAKE_NODEIMAGE, image),
        bool,
        f"{image} in the fake NodeImage's spec",
        10 + SLACK,
    )
    await tester.fail_node_image_fast(FAKE_NODEIMAGE)


async def test_create_an_always_job_to_pull_two_images_on_all_real_nodes(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create an always job to pull two images on all real nodes"""
    async with imagelistpulljobs_case(kruise_sandbox_all_gates, version) as (tester, pull_jobs, _):
        images = [NGINX_IMAGE, BUSYBOX_IMAGE]
        completion = {"type": "Always", "activeDeadlineSeconds": 50, "ttlSecondsAfterFinished": 20}
        await tester.create_job(
            tester.new_job(BASE_JOB, images, template("Always", completion, selector=NOT_FAKE))
        )

        await eventually_pull_jobs(pull_jobs, len(images))
        # "Desired should be equal to number of imagepulljobs [2]"
        await eventually_status(tester, lambda s: s.get("desired") == len(images), "desired 2", 3 + SLACK)
        # "Wait completed in 270s"
        done = await eventually_status(tester, lambda s: s.get("completionTime"), "completed", 270)
        assert done.get("succeeded") == len(images), done
        # "Wait clean in 25s"
        await tester.case.eventually(
            lambda: tester.get_job(BASE_JOB), lambda job: job is None, "list job gone", 25
        )
        # "Check imagepulljob should be cleaned"
        await tester.case.eventually(pull_jobs.list_jobs, lambda jobs: not jobs, "no ImagePullJob left", 10)


async def test_create_an_always_job_to_pull_two_images_on_one_real_node(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create an always job to pull two images on one real node"""
    async with imagelistpulljobs_case(kruise_sandbox_all_gates, version) as (tester, pull_jobs, nodes):
        images = [NEW_NGINX_IMAGE, BUSYBOX_IMAGE]
        selector = {"names": [nodes[0]["metadata"]["name"]]}
        job = await tester.create_job(
            tester.new_job(BASE_JOB, images, template("IfNotPresent", {"type": "Always"}, selector=selector))
        )

        # "Desired should be equal to 2"
        await eventually_status(tester, lambda s: s.get("desired") == len(images), "desired 2", 3 + SLACK)
        # "Wait completed in 360s"
        done = await eventually_status(tester, lambda s: s.get("completionTime"), "completed", 360)
        assert done.get("succeeded") == len(images), done

        # "Delete job", then "Check imagepulljob should be cleaned" (upstream sleeps 3 s before its poll)
        await tester.delete_job(BASE_JOB)
        uid = job["metadata"]["uid"]
        await tester.case.eventually(
            pull_jobs.list_jobs,
            lambda jobs: not [j for j in jobs if controlled_by(j, uid)],
            "the list job's ImagePullJobs collected",
            60,
        )


async def test_create_an_always_job_to_pull_an_image_on_all_nodes(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create an always job to pull an image on all nodes"""
    async with imagelistpulljobs_case(kruise_sandbox_all_gates, version) as (tester, pull_jobs, _):
        images = [WEBSERVER_IMAGE]
        await tester.create_job(tester.new_job(BASE_JOB, images, template("Always", {"type": "Always"})))

        await eventually_pull_jobs(pull_jobs, len(images))
        # "Desired should be equal to 1"
        await eventually_status(tester, lambda s: s.get("desired") == len(images), "desired 1", 3 + SLACK)
        await fail_fake_node_image(tester, WEBSERVER_IMAGE)
        # "Wait completed in 180s": the real nodes succeed, the fake one failed
        done = await eventually_status(tester, lambda s: s.get("completionTime"), "completed", 180)
        assert len(done.get("failedImageStatuses") or []) == len(images), done


async def test_create_a_never_job_to_pull_an_image_on_all_nodes(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create a never job to pull an image on all nodes"""
    async with imagelistpulljobs_case(kruise_sandbox_all_gates, version) as (tester, pull_jobs, _):
        images = [WEBSERVER_IMAGE]
        await tester.create_job(tester.new_job(BASE_JOB, images, template("IfNotPresent", {"type": "Never"})))

        await eventually_pull_jobs(pull_jobs, len(images))
        # "Desired should be equal to 1"
        await eventually_status(tester, lambda s: s.get("desired") == len(images), "desired 1", 3 + SLACK)
        await fail_fake_node_image(tester, WEBSERVER_IMAGE)
        # "Wait completed in 180s": a never job counts its completed images and never completes itself
        done = await eventually_status(
            tester, lambda s: s.get("completed") == len(images), "every image completed", 180
        )
        assert len(done.get("failedImageStatuses") or []) == len(images), done
