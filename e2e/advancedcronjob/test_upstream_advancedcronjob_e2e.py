"""Upstream's AdvancedCronJob e2e (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/advancedcronjob.go),
contexts "Basic AdvancedCronJob functionality [AdvancedCronJobBasic]" and "AdvancedCronJob pause
functionality [AdvancedCronJobPause]", and its v1beta1 copy (test/e2e/apps/v1beta1/advancedcronjob.go),
translated to kubectl on the AllAlpha sandbox: same objects, same steps, same assertions, with the helpers
of `test/e2e/framework/<version>/advancedcronjob_util.go`. docs/upstream-e2e.md maps every upstream case to
its test here.

The v1beta1 copy has the same three cases under titles of their own, speaks v1beta1, names its objects and
echoes its messages with "v1beta1", labels the BroadcastJob template `cronjob: <name>`, and calls a
BroadcastJob finished by `status.phase` (Completed or Failed) where v1alpha1 counts succeeded/failed pods;
`Suite` holds those differences, and each upstream case is a test of its own over a shared body.

kruise-manager runs on the real clock (the sandbox's `--speed` scales only the simulated kubelet), so
every case waits for real schedule minutes, as upstream does: ~1 minute each, ~4 for the pause case."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from harness import Cluster
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, controlled_by, upstream_case

EVERY_MINUTE = "*/1 * * * *"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _pods_finished(job: Obj | None) -> bool:
    """`WaitForJobToComplete` (both versions) and v1alpha1's `WaitForBroadcastJobToComplete`."""
    status = (job or {}).get("status") or {}
    return (status.get("succeeded") or 0) > 0 or (status.get("failed") or 0) > 0


def _phase_finished(job: Obj | None) -> bool:
    """v1beta1's `WaitForBroadcastJobToComplete`: phase `completed` or `failed` (`PhaseCompleted`,
    `PhaseFailed`)."""
    return ((job or {}).get("status") or {}).get("phase") in ("completed", "failed")


@dataclass(frozen=True)
class Suite:
    """What one upstream advancedcronjob.go (and its framework's advancedcronjob_util.go) is made of."""

    version: str
    namespace_base: str  # NewDefaultFramework's base name
    name_infix: str  # between the object name's prefix and the random string
    hello: str  # what the containers echo
    label_broadcast_template: bool
    broadcastjob_finished: Callable[[Obj | None], bool]

    @property
    def advancedcronjob(self) -> str:
        """Fully qualified: a bare `advancedcronjob` is kubectl's preferred version."""
        return f"advancedcronjobs.{self.version}.apps.kruise.io"

    @property
    def broadcastjob(self) -> str:
        return f"broadcastjobs.{self.version}.apps.kruise.io"


V1ALPHA1 = Suite("v1alpha1", "advancedcronjobs", "", "Hello from AdvancedCronJob", False, _pods_finished)
V1BETA1 = Suite(
    "v1beta1",
    "advancedcronjobs-v1beta1",
    "v1beta1-",
    "Hello from AdvancedCronJob v1beta1",
    True,
    _phase_finished,
)


def _acj(case: Case, suite: Suite, name: str, template: Obj) -> Obj:
    return {
        "apiVersion": f"apps.kruise.io/{suite.version}",
        "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "schedule": EVERY_MINUTE,
            "concurrencyPolicy": "Allow",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "template": template,
        },
    }


def _container(message: str) -> Obj:
    return {
        "name": "test-container",
        "image": BUSYBOX_IMAGE,
        "command": ["/bin/sh", "-c", f"echo '{message}' && sleep 5"],
    }


async def create_acj(case: Case, suite: Suite, acj: Obj) -> Obj:
    """`CreateAdvancedCronJob`: create, then wait until it can be read back."""
    created = await case.create(acj)
    name = created["metadata"]["name"]
    await case.eventually(
        lambda: case.get(suite.advancedcronjob, name), lambda a: a is not None, f"{name} created", 30
    )
    return created


async def create_with_job_template(case: Case, suite: Suite, name: str) -> Obj:
    """`CreateTestAdvancedCronJobWithJobTemplate`."""
    template = {
        "jobTemplate": {
            "metadata": {"labels": {"cronjob": name}},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [_container(suite.hello)],
                        "restartPolicy": "Never",
                    }
                }
            },
        }
    }
    return await create_acj(case, suite, _acj(case, suite, name, template))


async def create_with_broadcastjob_template(case: Case, suite: Suite, name: str) -> Obj:
    """`CreateTestAdvancedCronJobWithBroadcastJobTemplate`."""
    template: Obj = {
        "broadcastJobTemplate": {
            "spec": {
                "parallelism": "100%",
                "template": {
                    "spec": {
                        "containers": [_container(f"{suite.hello} BroadcastJob")],
                        "restartPolicy": "Never",
                    }
                },
                "completionPolicy": {"type": "Always"},
            }
        }
    }
    if suite.label_broadcast_template:
        template["broadcastJobTemplate"]["metadata"] = {"labels": {"cronjob": name}}
    return await create_acj(case, suite, _acj(case, suite, name, template))


async def wait_last_schedule_time(case: Case, suite: Suite, acj: Obj) -> None:
    """`WaitForAdvancedCronJobToHaveLastScheduleTime`."""
    name = acj["metadata"]["name"]
    await case.eventually(
        lambda: case.get(suite.advancedcronjob, name),
        lambda a: a is not None and (a.get("status") or {}).get("lastScheduleTime"),
        f"{name} status.lastScheduleTime",
        timeout=180,
    )


async def jobs_of(case: Case, acj: Obj) -> list[Obj]:
    """`GetJobsCreatedByAdvancedCronJob`: the namespace's Jobs the cron job controls."""
    return [j for j in await case.list("jobs.batch") if controlled_by(j, acj["metadata"]["uid"])]


async def broadcastjobs_of(case: Case, suite: Suite, acj: Obj) -> list[Obj]:
    """`GetBroadcastJobsCreatedByAdvancedCronJob`."""
    return [j for j in await case.list(suite.broadcastjob) if controlled_by(j, acj["metadata"]["uid"])]


async def patch_paused(case: Case, suite: Suite, name: str, paused: bool) -> Obj:
    """`PatchAdvancedCronJobPaused`: a merge patch of `spec.paused`."""
    return await case.patch(suite.advancedcronjob, name, "merge", {"spec": {"paused": paused}})


async def job_template_case(cluster: Cluster, suite: Suite) -> None:
    """The steps of "should create and schedule AdvancedCronJob [v1beta1] with Job template"."""
    async with upstream_case(cluster, suite.namespace_base) as case:
        acj = await create_with_job_template(case, suite, f"acj-job-{suite.name_infix}{case.rand}")
        assert acj["spec"]["schedule"] == EVERY_MINUTE
        assert acj["spec"]["template"].get("jobTemplate") is not None

        await wait_last_schedule_time(case, suite, acj)
        # Waiting for jobs to be created
        await case.eventually(lambda: jobs_of(case, acj), lambda jobs: len(jobs) >= 1, "a Job", timeout=120)

        # Verifying job execution
        jobs = await jobs_of(case, acj)
        assert len(jobs) >= 1
        first = jobs[0]["metadata"]["name"]
        await case.eventually(
            lambda: case.get("jobs.batch", first), _pods_finished, f"Job {first} finished", 60
        )


async def broadcastjob_template_case(cluster: Cluster, suite: Suite) -> None:
    """The steps of "should create and schedule AdvancedCronJob [v1beta1] with BroadcastJob template"."""
    async with upstream_case(cluster, suite.namespace_base) as case:
        name = f"acj-broadcast-{suite.name_infix}{case.rand}"
        acj = await create_with_broadcastjob_template(case, suite, name)
        assert acj["spec"]["schedule"] == EVERY_MINUTE
        assert acj["spec"]["template"].get("broadcastJobTemplate") is not None

        await wait_last_schedule_time(case, suite, acj)
        # Waiting for broadcast jobs to be created
        await case.eventually(
            lambda: broadcastjobs_of(case, suite, acj),
            lambda jobs: len(jobs) >= 1,
            "a BroadcastJob",
            timeout=120,
        )

        # Verifying broadcast job execution
        jobs = await broadcastjobs_of(case, suite, acj)
        assert len(jobs) >= 1
        first = jobs[0]["metadata"]["name"]
        await case.eventually(
            lambda: case.get(suite.broadcastjob, first),
            suite.broadcastjob_finished,
            f"BroadcastJob {first} finished",
            60,
        )


async def pause_case(cluster: Cluster, suite: Suite) -> None:
    """The steps of "should pause and resume AdvancedCronJob [v1beta1]"."""
    async with upstream_case(cluster, suite.namespace_base) as case:
        acj = await create_with_job_template(case, suite, f"acj-pause-{suite.name_infix}{case.rand}")
        name = acj["metadata"]["name"]

        # Waiting for initial job to be created
        await case.eventually(lambda: jobs_of(case, acj), lambda jobs: len(jobs) >= 1, "a Job", timeout=120)

        # Pausing AdvancedCronJob
        updated = await patch_paused(case, suite, name, True)
        assert updated["spec"].get("paused") is True
        # Record the job count AFTER pausing (this is our baseline)
        paused_count = len(await jobs_of(case, updated))

        # Waiting to ensure no new jobs are created while paused
        still_paused = await case.consistently(
            lambda: jobs_of(case, updated),
            lambda jobs: len(jobs) == paused_count,
            "Job count should not increase while paused",
            duration=120,
        )
        still_paused_count = len(still_paused)

        # Resuming AdvancedCronJob
        updated = await patch_paused(case, suite, name, False)
        assert updated["spec"].get("paused") is False

        # Waiting for new jobs to be created after resume
        await case.eventually(
            lambda: jobs_of(case, updated),
            lambda jobs: len(jobs) > still_paused_count,
            "a new Job after resume",
            timeout=180,
        )
        final_count = len(await jobs_of(case, updated))
        assert final_count > still_paused_count, "New jobs should be created after resume"


async def test_should_create_and_schedule_advancedcronjob_with_job_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob with Job template"""
    await job_template_case(kruise_sandbox_all_gates, V1ALPHA1)


async def test_should_create_and_schedule_advancedcronjob_with_broadcastjob_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob with BroadcastJob template"""
    await broadcastjob_template_case(kruise_sandbox_all_gates, V1ALPHA1)


async def test_should_pause_and_resume_advancedcronjob(kruise_sandbox_all_gates: Cluster):
    """should pause and resume AdvancedCronJob

    Upstream sleeps 2 minutes after pausing and then compares the Job count once; the translation reads
    the count throughout the same 2 minutes (two scheduled times), and every read must equal it."""
    await pause_case(kruise_sandbox_all_gates, V1ALPHA1)


async def test_should_create_and_schedule_advancedcronjob_v1beta1_with_job_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob v1beta1 with Job template"""
    await job_template_case(kruise_sandbox_all_gates, V1BETA1)


async def test_should_create_and_schedule_advancedcronjob_v1beta1_with_broadcastjob_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob v1beta1 with BroadcastJob template"""
    await broadcastjob_template_case(kruise_sandbox_all_gates, V1BETA1)


async def test_should_pause_and_resume_advancedcronjob_v1beta1(kruise_sandbox_all_gates: Cluster):
    """should pause and resume AdvancedCronJob v1beta1

    Upstream sleeps 2 minutes after pausing and then compares the Job count once; the translation reads
    the count throughout the same 2 minutes (two scheduled times), and every read must equal it."""
    await pause_case(kruise_sandbox_all_gates, V1BETA1)
