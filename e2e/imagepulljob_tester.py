"""kubectl versions of the helpers upstream's ImagePullJob e2e cases are built from
(`test/e2e/framework/<version>/imagepulljob_util.go` and `nodeimage_util.go`): jobs and their pull
secrets in the case's namespace, the copies kruise-manager keeps of those secrets in
`kruise-daemon-config`, and the cluster's NodeImages with upstream's fake one (a NodeImage with no node,
which no kruise-daemon ever answers). Kinds are read at the suite's API version (`imagepulljobs.v1alpha1
.apps.kruise.io`), as upstream's typed clientset does; the v1beta1 copies of the suites pass "v1beta1"."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable

from harness import Cluster, json_documents, kubectl_binary
from upstream_kit import Case, Obj, upstream_case

# upstream's common.NginxImage / NewNginxImage / WebserverImage / NewWebserverImage
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"
NEW_NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.15-4"

FAKE_NODEIMAGE = "fake-nodeimage"
FAKE_NODEIMAGE_LABEL = "apps.kruise.io/fake-nodeimage"
DAEMON_CONFIG_NS = "kruise-daemon-config"  # util.GetKruiseDaemonConfigNamespace() by default
SOURCE_KEY = "imagepulljobs.kruise.io/source-key"  # imagepulljob.SecretAnnotationSourceSecretKey
REFERENCE_JOBS = "imagepulljobs.kruise.io/references"  # imagepulljob.SecretAnnotationReferenceJobs
# kruise-manager creates a node's NodeImage 30 s after the node turns Ready; a case on a sandbox started
# moments ago waits for them where upstream's cluster had long had them (`ExpectNodes` reads them once)
NODEIMAGES_TIMEOUT = 120.0


def normalize_image(image: str) -> tuple[str, str]:
    """`daemonutil.NormalizeImageRefToNameTag` for the fully qualified images the cases use: the name up
    to the tag's colon, and the tag (`latest` when there is none)."""
    name, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:
        return image, "latest"
    return name, tag


def reference_set(synced: Obj) -> set[tuple[str, str]]:
    """`referenceSetFromTarget`: the (namespace, name) of each job the copy's references annotation
    names; an entry without a namespace is skipped, as upstream's key split rejects it."""
    raw = ((synced["metadata"].get("annotations") or {}).get(REFERENCE_JOBS)) or ""
    keys = set()
    for ref in raw.split(","):
        namespace, sep, name = ref.partition("/")
        if sep and namespace and name:
            keys.add((namespace, name))
    return keys


class SecretCopies:
    """Every state of kruise-daemon-config's Secrets, from `kubectl get secrets --watch` started before
    the job. The sandbox's fake runtime pulls at once, so an Always job completes, and releases its copy,
    within a second or so; on kind the pull takes seconds and upstream's 1 s polls see the copy while the
    job runs. Checking each watched state is that poll made as fine as it can be, so "the copy existed,
    naming the job, with the source's data" is asserted however short-lived the copy was."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.current: dict[str, Obj] = {}
        self.states: list[list[Obj]] = [[]]
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()

    async def start(self) -> None:
        """Start the watch; return once it is known to run, so nothing written after this is missed."""
        self._process = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(self.cluster.kubeconfig), "get", "secrets",
            "-n", DAEMON_CONFIG_NS, "--watch", "--output-watch-events", "-o", "json",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self._reader = asyncio.create_task(self._read())
        # the initial listing comes as ADDED events; an empty namespace sends none, so a Secret made here
        # to be seen marks the point where the watch is running
        marker = f"watch-marker-{id(self):x}"
        await self.cluster.kubectl("create", "secret", "generic", marker, "-n", DAEMON_CONFIG_NS)
        try:
            await self.eventually(
                lambda state: any(s["metadata"]["name"] == marker for s in state), "the watch running", 30
            )
        finally:
            await self.cluster.kubectl("delete", "secret", marker, "-n", DAEMON_CONFIG_NS, "--wait=false")

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async for event in json_documents(self._process.stdout):
            obj = event["object"]
            if event["type"] == "DELETED":
                self.current.pop(obj["metadata"]["name"], None)
            else:
                self.current[obj["metadata"]["name"]] = obj
            async with self._changed:
                self.states.append(list(self.current.values()))
                self._changed.notify_all()

    async def eventually(self, holds: Callable[[list[Obj]], bool], what: str, timeout: float) -> list[Obj]:
        """The first watched state (a list of the namespace's Secrets) for which `holds` is true."""
        seen = 0
        try:
            async with asyncio.timeout(timeout), self._changed:
                while True:
                    for state in self.states[seen:]:
                        if holds(state):
                            return state
                    seen = len(self.states)
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"{what} not seen within {timeout}s; last: {self.states[-1]!r}") from None

    async def stop(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            await self._process.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


def copies_of(secrets: list[Obj], source: Obj) -> list[Obj]:
    """`ListSyncedSecrets` over a list: those whose source-key annotation names `source`."""
    wanted = f"{source['metadata']['namespace']}/{source['metadata']['name']}"
    return [s for s in secrets if (s["metadata"].get("annotations") or {}).get(SOURCE_KEY) == wanted]


class PullImagesTester:
    """`ImagePullJobTester` and `NodeImageTester` for one case."""

    def __init__(self, case: Case, version: str = "v1alpha1") -> None:
        self.case = case
        self.cluster = case.cluster
        self.version = version
        self.jobs = f"imagepulljobs.{version}.apps.kruise.io"
        self.node_images = f"nodeimages.{version}.apps.kruise.io"

    def new_job(self, name: str, image: str, template: Obj) -> Obj:
        """An ImagePullJob in the case's namespace: `spec.image` plus the `ImagePullJobTemplate` fields."""
        return {
            "apiVersion": f"apps.kruise.io/{self.version}",
            "kind": "ImagePullJob",
            "metadata": {"name": name, "namespace": self.case.ns},
            "spec": {"image": image, **template},
        }

    async def create_job(self, job: Obj) -> Obj:
        return await self.case.create(job)

    async def get_job(self, name: str) -> Obj | None:
        return await self.case.get(self.jobs, name)

    async def must_get_job(self, name: str) -> Obj:
        return await self.case.must_get(self.jobs, name)

    async def delete_job(self, name: str) -> None:
        """`DeleteJob`: the delete call returns as soon as the job is marked (its finalizer stays)."""
        await self.case.kubectl("delete", self.jobs, name, "--wait=false")

    async def list_jobs(self) -> list[Obj]:
        return await self.case.list(self.jobs)

    async def create_secret(self, secret: Obj) -> Obj:
        return await self.case.create(secret)

    async def update_secret(self, name: str, data: dict[str, str]) -> Obj:
        """`UpdateSecret`: the source Secret's data replaced (re-read on conflict)."""

        def change(secret: Obj) -> None:
            secret["data"] = dict(data)

        return await self.case.update("secrets", name, change)

    async def list_synced_secrets(self, source: Obj) -> list[Obj]:
        """`ListSyncedSecrets`: the Secrets in kruise-daemon-config whose source-key annotation names
        `source`."""
        _, out = await self.cluster.kubectl("get", "secrets", "-n", DAEMON_CONFIG_NS, "-o", "json")
        return copies_of(json.loads(out)["items"], source)

    @contextlib.asynccontextmanager
    async def watching_copies(self) -> AsyncIterator[SecretCopies]:
        """A `SecretCopies` watch for the block's length."""
        watch = SecretCopies(self.cluster)
        try:
            await watch.start()
            yield watch
        finally:
            await watch.stop()

    async def list_node_images(self) -> list[Obj]:
        _, out = await self.cluster.kubectl("get", self.node_images, "-o", "json")
        return json.loads(out)["items"]

    async def get_node_image(self, name: str) -> Obj:
        _, out = await self.cluster.kubectl("get", self.node_images, name, "-o", "json")
        return json.loads(out)

    async def create_fake_node_image_if_not_present(self) -> None:
        """`CreateFakeNodeImageIfNotPresent`: a NodeImage without a node, labelled so kruise-manager
        keeps it."""
        code, out = await self.cluster.kubectl(
            "get", self.node_images, FAKE_NODEIMAGE, "-o", "json", check=False
        )
        if code == 0:
            return
        assert "NotFound" in out, out
        fake = {
            "apiVersion": f"apps.kruise.io/{self.version}",
            "kind": "NodeImage",
            "metadata": {"name": FAKE_NODEIMAGE, "labels": {FAKE_NODEIMAGE_LABEL: "true"}},
        }
        await self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(fake))

    async def delete_fake_node_image(self) -> None:
        await self.cluster.kubectl("delete", self.node_images, FAKE_NODEIMAGE, "--ignore-not-found")

    async def expect_nodes(self) -> list[Obj]:
        """`ExpectNodes`: the cluster's nodes, once every one of them has its NodeImage besides the fake
        one (upstream reads them once; see NODEIMAGES_TIMEOUT)."""

        async def nodes_and_images() -> tuple[list[Obj], list[Obj]]:
            _, out = await self.cluster.kubectl("get", "nodes", "-o", "json")
            return json.loads(out)["items"], await self.list_node_images()

        nodes, images = await self.case.eventually(
            nodes_and_images,
            lambda both: both[0] and len(both[0]) == len(both[1]) - 1,
            "one NodeImage per node plus the fake one",
            timeout=NODEIMAGES_TIMEOUT,
        )
        assert {n["metadata"]["name"] for n in nodes} | {FAKE_NODEIMAGE} == {
            i["metadata"]["name"] for i in images
        }
        return nodes

    async def is_image_in_spec(self, image: str, node_name: str) -> bool:
        """`IsImageInSpec`: the image's tag is listed in that node's NodeImage spec."""
        node_image = await self.get_node_image(node_name)
        name, tag = normalize_image(image)
        spec = ((node_image.get("spec") or {}).get("images") or {}).get(name) or {}
        return any(t.get("tag") == tag for t in spec.get("tags") or [])


@contextlib.asynccontextmanager
async def pullimages_case(
    cluster: Cluster, version: str = "v1alpha1"
) -> AsyncIterator[tuple[PullImagesTester, list[Obj]]]:
    """One `It` of Describe "PullImage": its namespace (`NewDefaultFramework("pullimages")`), the
    BeforeEach (the fake NodeImage, the nodes), the AfterEach (the fake NodeImage deleted) and, on a
    failure, the debug dump of every NodeImage and the namespace's jobs."""
    async with upstream_case(cluster, "pullimages") as case:
        tester = PullImagesTester(case, version)
        await tester.create_fake_node_image_if_not_present()
        try:
            nodes = await tester.expect_nodes()
            try:
                yield tester, nodes
            except AssertionError as failure:
                images = await tester.list_node_images()
                jobs = await tester.list_jobs()
                failure.add_note(f"[FAILURE_DEBUG] NodeImages: {json.dumps(images)}")
                failure.add_note(f"[FAILURE_DEBUG] ImagePullJobs in {case.ns}: {json.dumps(jobs)}")
                raise
        finally:
            await tester.delete_fake_node_image()
