"""kubectl versions of upstream's `ImageListPullJobTester` (test/e2e/framework/<version>/
imagelistpulljob_util.go) and the Describe around its cases: the list jobs of a case's namespace, and
`FailNodeImageFast`, which writes the fake NodeImage's status as a node that stopped answering would leave
it (every tag of its spec Failed) so that jobs counting it can finish."""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import AsyncIterator

from harness import Cluster
from imagepulljob_tester import PullImagesTester, normalize_image
from upstream_kit import Case, Obj, upstream_case


class ImageListPullJobTester:
    """`ImageListPullJobTester` for one case, at the suite's API version."""

    def __init__(self, case: Case, version: str) -> None:
        self.case = case
        self.version = version
        self.jobs = f"imagelistpulljobs.{version}.apps.kruise.io"
        self.node_images = f"nodeimages.{version}.apps.kruise.io"

    def new_job(self, name: str, images: list[str], template: Obj) -> Obj:
        """An ImageListPullJob in the case's namespace: `spec.images` plus the `ImagePullJobTemplate`."""
        return {
            "apiVersion": f"apps.kruise.io/{self.version}",
            "kind": "ImageListPullJob",
            "metadata": {"name": name, "namespace": self.case.ns},
            "spec": {"images": list(images), **template},
        }

    async def create_job(self, job: Obj) -> Obj:
        return await self.case.create(job)

    async def get_job(self, name: str) -> Obj | None:
        return await self.case.get(self.jobs, name)

    async def must_get_job(self, name: str) -> Obj:
        return await self.case.must_get(self.jobs, name)

    async def delete_job(self, name: str) -> None:
        """`DeleteJob`: one delete call (the API's default propagation), not waiting for the object."""
        await self.case.kubectl("delete", self.jobs, name, "--wait=false")

    async def list_jobs(self) -> list[Obj]:
        return await self.case.list(self.jobs)

    async def has_image_in_spec(self, node_image: str, image: str) -> bool:
        """The image's tag is in that NodeImage's spec: what `FailNodeImageFast` needs to fail it."""
        _, out = await self.case.cluster.kubectl("get", self.node_images, node_image, "-o", "json")
        name, tag = normalize_image(image)
        spec = ((json.loads(out).get("spec") or {}).get("images") or {}).get(name) or {}
        return any(t.get("tag") == tag for t in spec.get("tags") or [])

    async def fail_node_image_fast(self, name: str) -> None:
        """`FailNodeImageFast`: every tag of the NodeImage's spec gets a Failed status ("node has not
        responded for a long time") at the spec's version, and `desired`/`failed` upstream's count (the
        number of images, once per image); written to the status subresource, re-read on a conflict."""
        last = ""
        for _ in range(10):
            _, out = await self.case.cluster.kubectl("get", self.node_images, name, "-o", "json")
            node_image = json.loads(out)
            status = node_image.setdefault("status", {})
            statuses = status.get("imageStatuses") or {}
            images = (node_image.get("spec") or {}).get("images") or {}
            now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            desired = 0
            for image, spec in images.items():
                desired += len(images)
                statuses[image] = {
                    "tags": [
                        {
                            "tag": tag.get("tag"),
                            "phase": "Failed",
                            "completionTime": now,
                            "version": tag.get("version", 0),
                            "message": "node has not responded for a long time",
                        }
                        for tag in spec.get("tags") or []
                    ]
                }
            status["imageStatuses"] = statuses
            status["failed"] = desired
            status["desired"] = desired
            code, out = await self.case.cluster.kubectl(
                "replace", "--subresource=status", "-f", "-", stdin=json.dumps(node_image), check=False
            )
            if code == 0:
                return
            last = out
            if "the object has been modified" not in out:
                break
        raise AssertionError(f"status of NodeImage {name} not written: {last}")


@contextlib.asynccontextmanager
async def imagelistpulljobs_case(
    cluster: Cluster, version: str
) -> AsyncIterator[tuple[ImageListPullJobTester, PullImagesTester, list[Obj]]]:
    """One `It` of upstream's imagelistpulljobs.go Describe: its namespace
    (`NewDefaultFramework("imagelistpulljobs")`), the BeforeEach (the fake NodeImage, the nodes), the
    AfterEach (the fake NodeImage and the namespace's ImagePullJobs deleted) and, on a failure, the dump of
    the namespace's ImagePullJobs and ImageListPullJobs."""
    async with upstream_case(cluster, "imagelistpulljobs") as case:
        pull_jobs = PullImagesTester(case, version)
        list_jobs = ImageListPullJobTester(case, version)
        await pull_jobs.create_fake_node_image_if_not_present()
        try:
            nodes = await pull_jobs.expect_nodes()
            try:
                yield list_jobs, pull_jobs, nodes
            except AssertionError as failure:
                failure.add_note(f"[FAILURE_DEBUG] ImagePullJobs: {json.dumps(await pull_jobs.list_jobs())}")
                failure.add_note(
                    f"[FAILURE_DEBUG] ImageListPullJobs: {json.dumps(await list_jobs.list_jobs())}"
                )
                raise
        finally:
            await pull_jobs.delete_fake_node_image()
            await case.kubectl("delete", pull_jobs.jobs, "--all", "--wait=false")
