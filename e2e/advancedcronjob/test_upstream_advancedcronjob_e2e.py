"""Upstream's AdvancedCronJob e2e (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/advancedcronjob.go),
contexts "Basic AdvancedCronJob functionality [AdvancedCronJobBasic]" and "AdvancedCronJob pause
functionality [AdvancedCronJobPause]", translated to kubectl on the AllAlpha sandbox: same objects, same
steps, same assertions, with the helpers of `test/e2e/framework/v1alpha1/advancedcronjob_util.go`.
docs/upstream-e2e.md maps every upstream case to its test here.

kruise-manager runs on the real clock (the sandbox's `--speed` scales only the simulated kubelet), so
every case waits for real schedule minutes, as upstream does: ~1 minute each, ~4 for the pause case."""

from __future__ import annotations

import pytest
from harness import Cluster
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, controlled_by, upstream_case

ADVANCEDCRONJOB = "advancedcronjobs.v1alpha1.apps.kruise.io"
BROADCASTJOB = "broadcastjobs.v1alpha1.apps.kruise.io"
EVERY_MINUTE = "*/1 * * * *"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _acj(case: Case, name: str, template: Obj) -> Obj:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
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


async def create_acj(case: Case, acj: Obj) -> Obj:
    """`CreateAdvancedCronJob`: create, then wait until it can be read back."""
    created = await case.create(acj)
    name = created["metadata"]["name"]
    await case.eventually(
        lambda: case.get(ADVANCEDCRONJOB, name), lambda a: a is not None, f"{name} created", 30
    )
    return created


async def create_with_job_template(case: Case, name: str) -> Obj:
    """`CreateTestAdvancedCronJobWithJobTemplate`."""
    template = {
        "jobTemplate": {
            "metadata": {"labels": {"cronjob": name}},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [_container("Hello from AdvancedCronJob")],
                        "restartPolicy": "Never",
                    }
                }
            },
        }
    }
    return await create_acj(case, _acj(case, name, template))


async def create_with_broadcastjob_template(case: Case, name: str) -> Obj:
    """`CreateTestAdvancedCronJobWithBroadcastJobTemplate`."""
    template = {
        "broadcastJobTemplate": {
            "spec": {
                "parallelism": "100%",
                "template": {
                    "spec": {
                        "containers": [_container("Hello from AdvancedCronJob BroadcastJob")],
                        "restartPolicy": "Never",
                    }
                },
                "completionPolicy": {"type": "Always"},
            }
        }
    }
    return await create_acj(case, _acj(case, name, template))


async def wait_last_schedule_time(case: Case, acj: Obj) -> None:
    """`WaitForAdvancedCronJobToHaveLastScheduleTime`."""
    name = acj["metadata"]["name"]
    await case.eventually(
        lambda: case.get(ADVANCEDCRONJOB, name),
        lambda a: a is not None and (a.get("status") or {}).get("lastScheduleTime"),
        f"{name} status.lastScheduleTime",
        timeout=180,
    )


async def jobs_of(case: Case, acj: Obj) -> list[Obj]:
    """`GetJobsCreatedByAdvancedCronJob`: the namespace's Jobs the cron job controls."""
    return [j for j in await case.list("jobs.batch") if controlled_by(j, acj["metadata"]["uid"])]


async def broadcastjobs_of(case: Case, acj: Obj) -> list[Obj]:
    """`GetBroadcastJobsCreatedByAdvancedCronJob`."""
    return [j for j in await case.list(BROADCASTJOB) if controlled_by(j, acj["metadata"]["uid"])]


def _finished(job: Obj | None) -> bool:
    status = (job or {}).get("status") or {}
    return (status.get("succeeded") or 0) > 0 or (status.get("failed") or 0) > 0


async def patch_paused(case: Case, name: str, paused: bool) -> Obj:
    """`PatchAdvancedCronJobPaused`: a merge patch of `spec.paused`."""
    return await case.patch(ADVANCEDCRONJOB, name, "merge", {"spec": {"paused": paused}})


async def test_should_create_and_schedule_advancedcronjob_with_job_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob with Job template"""
    async with upstream_case(kruise_sandbox_all_gates, "advancedcronjobs") as case:
        acj = await create_with_job_template(case, "acj-job-" + case.rand)
        assert acj["spec"]["schedule"] == EVERY_MINUTE
        assert acj["spec"]["template"].get("jobTemplate") is not None

        await wait_last_schedule_time(case, acj)
        # Waiting for jobs to be created
        await case.eventually(lambda: jobs_of(case, acj), lambda jobs: len(jobs) >= 1, "a Job", timeout=120)

        # Verifying job execution
        jobs = await jobs_of(case, acj)
        assert len(jobs) >= 1
        first = jobs[0]["metadata"]["name"]
        await case.eventually(lambda: case.get("jobs.batch", first), _finished, f"Job {first} finished", 60)


async def test_should_create_and_schedule_advancedcronjob_with_broadcastjob_template(
    kruise_sandbox_all_gates: Cluster,
):
    """should create and schedule AdvancedCronJob with BroadcastJob template"""
    async with upstream_case(kruise_sandbox_all_gates, "advancedcronjobs") as case:
        acj = await create_with_broadcastjob_template(case, "acj-broadcast-" + case.rand)
        assert acj["spec"]["schedule"] == EVERY_MINUTE
        assert acj["spec"]["template"].get("broadcastJobTemplate") is not None

        await wait_last_schedule_time(case, acj)
        # Waiting for broadcast jobs to be created
        await case.eventually(
            lambda: broadcastjobs_of(case, acj), lambda jobs: len(jobs) >= 1, "a BroadcastJob", timeout=120
        )

        # Verifying broadcast job execution
        jobs = await broadcastjobs_of(case, acj)
        assert len(jobs) >= 1
        first = jobs[0]["metadata"]["name"]
        await case.eventually(
            lambda: case.get(BROADCASTJOB, first), _finished, f"BroadcastJob {first} finished", 60
        )


async def test_should_pause_and_resume_advancedcronjob(kruise_sandbox_all_gates: Cluster):
    """should pause and resume AdvancedCronJob

    Upstream sleeps 2 minutes after pausing and then compares the Job count once; the translation reads
    the count throughout the same 2 minutes (two scheduled times), and every read must equal it."""
    async with upstream_case(kruise_sandbox_all_gates, "advancedcronjobs") as case:
        acj = await create_with_job_template(case, "acj-pause-" + case.rand)
        name = acj["metadata"]["name"]

        # Waiting for initial job to be created
        await case.eventually(lambda: jobs_of(case, acj), lambda jobs: len(jobs) >= 1, "a Job", timeout=120)

        # Pausing AdvancedCronJob
        updated = await patch_paused(case, name, True)
        assert updated["spec"].get("paused") is True
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
        updated = await patch_paused(case, name, False)
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
