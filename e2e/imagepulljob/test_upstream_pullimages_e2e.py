"""Upstream's ImagePullJob e2e, Describe "PullImage" — context "ImagePullJob pulling images functionality
[ImagePullJob]" (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/pullimages.go and its v1beta1 copy, helpers
in framework/<version>/imagepulljob_util.go and nodeimage_util.go) — translated to kubectl on the AllAlpha
sandbox (ImagePullJobGate is alpha), whose kruise-daemons pull through the sandbox's fake runtime. Same
jobs, same secrets, same steps, same assertions, with the fake NodeImage upstream's BeforeEach adds (a
NodeImage no daemon answers, which the jobs with a selector leave out and the never job counts).

Deadlines: upstream's are kept where they time kruise (180 s to complete, 25 s for a 20 s TTL to delete);
the few-second ones that time a reconcile on an idle kind cluster get `SLACK` on top, as the sandbox shares
two cores with the rest of the suite. Upstream's cases are `Serial`, and so are these: the never job
counts every NodeImage of the shared sandbox."""

from __future__ import annotations

import base64

import pytest
from harness import Cluster
from imagepulljob_tester import (
    NEW_NGINX_IMAGE,
    NGINX_IMAGE,
    PullImagesTester,
    copies_of,
    pullimages_case,
    reference_set,
)
from upstream_kit import NEW_WEBSERVER_IMAGE, WEBSERVER_IMAGE, Obj

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# upstream's v1beta1/pullimages.go is v1alpha1's with the kinds at v1beta1 (its first case renamed "pull image
# with secret and ttl cleaned") plus one case of its own; the shared cases run at both versions
VERSIONS = pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])

SLACK = 20.0
BASE_JOB = "test-imagepulljob"
DOCKER_CONFIG = (
    "eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsidXNlcm5hbWUiOiJtaW5jaG91IiwicGFzc3dvcmQiOiJtaW5n"
    "emhvdS5zd3giLCJlbWFpbCI6InZlYy5nLnN1bkBnbWFpbC5jb20iLCJhdXRoIjoiYldsdVkyaHZkVHB0YVc1bmVtaHZkUzV6ZDNnPSJ9fX0="
)
NEW_DOCKER_CONFIG = (
    "eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsidXNlcm5hbWUiOiJtaW5jaG91IiwicGFzc3dvcmQiOiJtaW5n"
    "emhvdS50ZXN0IiwiZW1haWwiOiJ2ZWMuZy5zdW5AZ21haWwuY29tIiwiYXV0aCI6ImJXbHVZMmh2ZFRwdGFXNW5lbWh2ZFM1MFpYTjAifX19"
)
DOCKERCFG = (
    '{"auths":{"docker.io/library/nginx":{"username":"echoserver","password":"test",'
    '"auth":"ZWNob3NlcnZlcjp0ZXN0"}}}'
)
NOT_FAKE = {"matchExpressions": [{"key": "apps.kruise.io/fake-nodeimage", "operator": "DoesNotExist"}]}
PULL_POLICY = {"timeoutSeconds": 50, "backoffLimit": 2}


def pull_secret(ns: str, name: str, kind: str, key: str, data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": ns},
        "type": kind,
        "data": {key: data},
    }


def template(**fields: object) -> Obj:
    """An `ImagePullJobTemplate` with the cases' pull policy and parallelism 4."""
    return {"pullPolicy": dict(PULL_POLICY), "parallelism": 4, **fields}


async def eventually_status(tester: PullImagesTester, name: str, done, what: str, timeout: float) -> Obj:
    """Eventually on the job's status (the job must exist throughout, as upstream's GetJob must not fail)."""

    async def status() -> Obj:
        return (await tester.must_get_job(name)).get("status") or {}

    return await tester.case.eventually(status, done, what, timeout=timeout)


async def eventually_gone(tester: PullImagesTester, name: str, timeout: float) -> None:
    await tester.case.eventually(
        lambda: tester.get_job(name), lambda job: job is None, f"job {name} gone", timeout
    )


async def eventually_image_cleaned(tester: PullImagesTester, image: str, node: str, timeout: float) -> None:
    """ "Check image should be cleaned in NodeImage"."""
    await tester.case.eventually(
        lambda: tester.is_image_in_spec(image, node),
        lambda found: not found,
        f"{image} gone from NodeImage {node}'s spec",
        timeout,
    )


def synced(copies: list[Obj], secret: Obj, job: tuple[str, str]) -> bool:
    """ "Secret is synced": one copy in kruise-daemon-config, naming the job, with the source's data."""
    return len(copies) == 1 and job in reference_set(copies[0]) and copies[0].get("data") == secret["data"]


async def eventually_synced(tester: PullImagesTester, secret: Obj, job: str, timeout: float) -> None:
    await tester.case.eventually(
        lambda: tester.list_synced_secrets(secret),
        lambda copies: synced(copies, secret, (tester.case.ns, job)),
        "the pull secret's copy in kruise-daemon-config",
        timeout,
    )


async def eventually_no_copies(tester: PullImagesTester, secret: Obj, timeout: float) -> None:
    """ "Check secrets should be cleaned in kruise-daemon-config"."""
    await tester.case.eventually(
        lambda: tester.list_synced_secrets(secret), lambda copies: not copies, "no copy left", timeout
    )


async def always_job_with_secret(tester: PullImagesTester, nodes: list[Obj], completion: Obj) -> Obj:
    """The steps "pull image with secret" shares with v1beta1's "... and completed": a dockerconfigjson
    secret, an Always job on the real nodes using it, desired, the copy synced, completed in 180 s with every
    node succeeded. Returns the source secret."""
    secret = await tester.create_secret(
        pull_secret(
            tester.case.ns,
            "pull-secret",
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            DOCKER_CONFIG,
        )
    )
    job = tester.new_job(
        BASE_JOB,
        NGINX_IMAGE,
        template(selector=NOT_FAKE, pullSecrets=[secret["metadata"]["name"]], completionPolicy=completion),
    )
    async with tester.watching_copies() as copies:  # the job may finish, and drop its copy, at once
        await tester.create_job(job)

        # "Desired should be equal to number of nodes"
        await eventually_status(
            tester, BASE_JOB, lambda s: s.get("desired") == len(nodes), "desired", 3 + SLACK
        )
        # "Secret is synced"
        await copies.eventually(
            lambda state: synced(copies_of(state, secret), secret, (tester.case.ns, BASE_JOB)),
            "the pull secret's copy in kruise-daemon-config",
            10 + SLACK,
        )
    # "Wait completed in 180s"
    done = await eventually_status(tester, BASE_JOB, lambda s: s.get("completionTime"), "completed", 180)
    assert done.get("succeeded") == len(nodes), done
    return secret


@VERSIONS
async def test_pull_image_with_secret(kruise_sandbox_all_gates: Cluster, version: str):
    """pull image with secret (v1beta1: "pull image with secret and ttl cleaned")"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        completion = {"type": "Always", "activeDeadlineSeconds": 50, "ttlSecondsAfterFinished": 20}
        secret = await always_job_with_secret(tester, nodes, completion)
        # "Wait clean in 25s"
        await eventually_gone(tester, BASE_JOB, 25)
        await eventually_image_cleaned(tester, NGINX_IMAGE, nodes[0]["metadata"]["name"], 25)
        await eventually_no_copies(tester, secret, 10)


async def test_pull_image_with_secret_and_completed(kruise_sandbox_all_gates: Cluster):
    """pull image with secret and completed (v1beta1 only): without a TTL the completed job stays, and so
    does its image in the NodeImage, while the secret's copy goes with the job's completion"""
    async with pullimages_case(kruise_sandbox_all_gates, "v1beta1") as (tester, nodes):
        secret = await always_job_with_secret(tester, nodes, {"type": "Always", "activeDeadlineSeconds": 50})
        # "Check image should be kept in NodeImage": upstream's Consistently over 25 s (a TTL-cleaned job's
        # image goes within that; the case's point is that this one does not)
        node = nodes[0]["metadata"]["name"]
        await tester.case.consistently(
            lambda: tester.is_image_in_spec(NGINX_IMAGE, node),
            bool,
            f"{NGINX_IMAGE} kept in NodeImage {node}'s spec",
            25,
        )
        # "Check secrets should be cleaned in kruise-daemon-config"
        await eventually_no_copies(tester, secret, 10)


@VERSIONS
async def test_never_completion_pull_job_with_updated_pull_secrets(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """never completion pull job with updated pull secrets"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        secret = await tester.create_secret(
            pull_secret(
                tester.case.ns,
                "pull-secret",
                "kubernetes.io/dockerconfigjson",
                ".dockerconfigjson",
                DOCKER_CONFIG,
            )
        )
        job = tester.new_job(
            BASE_JOB,
            NGINX_IMAGE,
            template(
                selector=NOT_FAKE,
                pullSecrets=[secret["metadata"]["name"]],
                completionPolicy={"type": "Never"},
            ),
        )
        await tester.create_job(job)

        await eventually_status(
            tester, BASE_JOB, lambda s: s.get("desired") == len(nodes), "desired", 3 + SLACK
        )
        await eventually_synced(tester, secret, BASE_JOB, 10 + SLACK)

        # "Update source secret", then "Check target updated secret in 10s"
        secret = await tester.update_secret("pull-secret", {".dockerconfigjson": NEW_DOCKER_CONFIG})
        await eventually_synced(tester, secret, BASE_JOB, 10)

        # "Wait completed in 180s"
        await eventually_status(
            tester, BASE_JOB, lambda s: s.get("succeeded") == len(nodes), "all succeeded", 180
        )

        # "Delete pull job and check in 10s". Upstream's poll `Should(Equal(false))` on IsNotFound is met
        # by its first read while the deleted job still holds its finalizer; what the step means, the job
        # gone within 10 s, is what is checked here.
        await tester.delete_job(BASE_JOB)
        await eventually_gone(tester, BASE_JOB, 10)
        await eventually_image_cleaned(tester, NGINX_IMAGE, nodes[0]["metadata"]["name"], 25)
        await eventually_no_copies(tester, secret, 10)


@VERSIONS
async def test_create_an_always_job_to_pull_an_image_on_all_real_nodes(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create an always job to pull an image on all real nodes"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        encoded = base64.b64encode(DOCKERCFG.encode()).decode()
        await tester.create_secret(
            pull_secret(tester.case.ns, "test-pull-secret", "kubernetes.io/dockercfg", ".dockercfg", encoded)
        )
        completion = {"type": "Always", "activeDeadlineSeconds": 50, "ttlSecondsAfterFinished": 20}
        job = tester.new_job(
            BASE_JOB,
            NGINX_IMAGE,
            template(selector=NOT_FAKE, completionPolicy=completion, pullSecrets=["test-pull-secret"]),
        )
        await tester.create_job(job)

        await eventually_status(
            tester, BASE_JOB, lambda s: s.get("desired") == len(nodes), "desired", 3 + SLACK
        )
        done = await eventually_status(tester, BASE_JOB, lambda s: s.get("completionTime"), "completed", 180)
        assert done.get("succeeded") == len(nodes), done
        await eventually_gone(tester, BASE_JOB, 25)
        await eventually_image_cleaned(tester, NGINX_IMAGE, nodes[0]["metadata"]["name"], 10 + SLACK)


@VERSIONS
async def test_create_an_always_job_to_pull_an_image_on_one_real_node(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create an always job to pull an image on one real node"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        node = nodes[0]["metadata"]["name"]
        job = tester.new_job(
            BASE_JOB,
            NEW_NGINX_IMAGE,
            template(selector={"names": [node]}, completionPolicy={"type": "Always"}),
        )
        await tester.create_job(job)

        await eventually_status(tester, BASE_JOB, lambda s: s.get("desired") == 1, "desired 1", 3 + SLACK)
        done = await eventually_status(tester, BASE_JOB, lambda s: s.get("completionTime"), "completed", 180)
        assert done.get("succeeded") == 1, done

        await tester.delete_job(BASE_JOB)
        await eventually_image_cleaned(tester, NEW_NGINX_IMAGE, node, 10 + SLACK)


@VERSIONS
async def test_create_a_never_job_to_pull_an_image_on_all_nodes(
    kruise_sandbox_all_gates: Cluster, version: str
):
    """create a never job to pull an image on all nodes"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        job = tester.new_job(BASE_JOB, WEBSERVER_IMAGE, template(completionPolicy={"type": "Never"}))
        await tester.create_job(job)

        # "Desired should be equal to 1+len(nodes)": the fake NodeImage is a target too
        await eventually_status(
            tester, BASE_JOB, lambda s: s.get("desired") == len(nodes) + 1, "desired nodes+1", 3 + SLACK
        )
        # "Wait <n> succeeded": the fake NodeImage's pull never finishes, and a never job never completes
        done = await eventually_status(
            tester, BASE_JOB, lambda s: s.get("succeeded") == len(nodes), "every real node succeeded", 120
        )
        assert done.get("completionTime") is None, done


@VERSIONS
async def test_create_two_jobs_to_pull_a_same_image(kruise_sandbox_all_gates: Cluster, version: str):
    """create two jobs to pull a same image"""
    async with pullimages_case(kruise_sandbox_all_gates, version) as (tester, nodes):
        node = nodes[0]["metadata"]["name"]
        spec = template(selector={"names": [node]}, completionPolicy={"type": "Never"})

        # "Create job1"
        await tester.create_job(tester.new_job(f"{BASE_JOB}-1", NEW_WEBSERVER_IMAGE, spec))
        await eventually_status(
            tester, f"{BASE_JOB}-1", lambda s: s.get("desired") == 1, "job1 desired 1", 3 + SLACK
        )
        await eventually_status(
            tester, f"{BASE_JOB}-1", lambda s: s.get("succeeded") == 1, "job1 succeeded", 60
        )
        # Upstream's "Wait until job1 has created over 70s" step calls `time.Until`, which only computes a
        # duration: it does not wait, so neither does the translation.

        # "Create job2": the same tag on the same node, now owned by two jobs (the version bumped)
        await tester.create_job(tester.new_job(f"{BASE_JOB}-2", NEW_WEBSERVER_IMAGE, spec))
        await eventually_status(
            tester, f"{BASE_JOB}-2", lambda s: s.get("succeeded") == 1, "job2 succeeded", 60
        )
