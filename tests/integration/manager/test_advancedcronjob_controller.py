"""AdvancedCronJob controller against the emulator, on a fake clock the test steps past each minute.

The clock starts at the real time (the apiserver stamps `creationTimestamp` with it, and upstream
never runs an activation from before the cron job existed) and then only moves when the test says.
Absence ("nothing was created") is checked behind a fence: two passes that each visibly rewrite the
status, so the pass that saw the activation has certainly finished.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kruise.api.features import FeatureGates
from kruise.api.timestamps import go_format_rfc3339, go_parse_rfc3339
from kruise.kube.client import Client, PatchType
from kruise.kube.clock import FakeClock
from kruise.kube.errors import NotFound
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import ADVANCED_CRONJOBS, BROADCASTJOBS, IMAGELISTPULLJOBS, JOBS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.advancedcronjob import SETUP
from kruise.manager.controllers.advancedcronjob.localzone import process_zone
from kruise.sandbox.simulator.timing import RUN_SECONDS_ANNOTATION

NS = "default"
SCHEDULED_AT = "apps.kruise.io/scheduled-at"
LONG_RUN = "100000"  # simulated seconds: the child stays active for the whole test
SHORT_RUN = "1"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


def pod_template(run_seconds: str) -> dict:
    return {
        "metadata": {"annotations": {RUN_SECONDS_ANNOTATION: run_seconds}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34", "command": ["perl", "-e", "print 1"]}],
        },
    }


def job_cronjob(name: str, *, run_seconds: str = LONG_RUN, **spec: object) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedule": "* * * * *",
            "template": {
                "jobTemplate": {
                    "metadata": {"labels": {"run": name}, "annotations": {"team": "batch"}},
                    "spec": {"backoffLimit": 0, "template": pod_template(run_seconds)},
                }
            },
            **spec,
        },
    }


def broadcast_cronjob(name: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedule": "*/1 * * * *",
            "template": {
                "broadcastJobTemplate": {
                    "spec": {
                        "template": pod_template(LONG_RUN),
                        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30},
                    }
                }
            },
        },
    }


class CronDriver:
    """Creates a cron job and moves the fake clock to its activations."""

    def __init__(self, cluster, clock: FakeClock) -> None:
        self.cluster = cluster
        self.client = cluster.client
        self.clock = clock
        self.fences = 0

    async def create(self, body: dict) -> dict:
        acj = await self.client.create(ADVANCED_CRONJOBS, body)
        name = acj["metadata"]["name"]
        # The first pass always writes the status (its type); from then on the controller has the key.
        await self.cluster.until(lambda: self.status(name), lambda s: bool(s.get("type")))
        return acj

    async def status(self, name: str) -> dict:
        return (await self.client.get(ADVANCED_CRONJOBS, name, NS)).get("status") or {}

    async def idle(self) -> None:
        """Until the cron job controller has nothing queued or in a pass. A step of the fake clock
        taken while a pass is still running lands before that pass parks its requeue for the next
        activation, which then counts from the stepped clock and never fires (seen on a loaded
        machine: the child never appeared)."""
        controller = next(c for c in self.cluster.controllers if c.name == "advancedcronjob")

        async def busy() -> bool:
            return bool(len(controller.queue) or controller.queue.processing())

        await self.cluster.until(busy, lambda working: not working)

    async def step_to_next_minute(self, acj: dict) -> datetime:
        """Step just past the first whole minute after both the clock and the cron job's creation."""
        await self.idle()
        created = go_parse_rfc3339(acj["metadata"]["creationTimestamp"])
        base = max(self.clock.wall(), created)
        activation = base.replace(second=0, microsecond=0) + timedelta(minutes=1)
        self.clock.step((activation - self.clock.wall()).total_seconds() + 1)
        return activation

    async def step_minute(self) -> None:
        await self.idle()
        self.clock.step(60)

    async def child(self, ref, name: str, *, timeout: float = 30.0) -> dict:
        async def fetch():
            try:
                return await self.client.get(ref, name, NS)
            except NotFound:
                return None

        return await self.cluster.until(fetch, lambda c: c is not None, timeout=timeout)

    async def gone(self, ref, name: str) -> None:
        async def exists():
            try:
                child = await self.client.get(ref, name, NS)
            except NotFound:
                return False
            return not child["metadata"].get("deletionTimestamp")

        await self.cluster.until(exists, lambda present: not present)

    async def names(self, ref, acj_name: str) -> list[str]:
        listed = (await self.client.list(ref, NS))["items"]
        return sorted(
            c["metadata"]["name"]
            for c in listed
            if any(o.get("name") == acj_name for o in c["metadata"].get("ownerReferences") or [])
        )

    async def fence(self, acj_name: str, active_child: str, ref=JOBS) -> None:
        """Return once a pass that started after this call has finished.

        Each round labels an active child and waits until the cron job's status.active shows the
        child's current resourceVersion while the child carries that label: a pass saw the labelled
        child and wrote the status. Two rounds mean the first such pass is over (one key is never
        reconciled twice at once). Versions are compared for equality only, as they are opaque.
        """
        for _ in range(2):
            self.fences += 1
            await self._fence_round(acj_name, active_child, ref, str(self.fences))

    async def _fence_round(self, acj_name: str, active_child: str, ref, label: str) -> None:
        await self.client.patch(ref, active_child, {"metadata": {"labels": {"fence": label}}}, NS)

        async def observed() -> bool:
            child = await self.client.get(ref, active_child, NS)
            status = await self.status(acj_name)
            return child["metadata"]["labels"].get("fence") == label and any(
                a.get("name") == active_child
                and a.get("resourceVersion") == child["metadata"]["resourceVersion"]
                for a in status.get("active") or []
            )

        await self.cluster.until(observed, lambda seen: seen)


def child_name(acj: str, activation: datetime) -> str:
    return f"{acj}-{int(activation.timestamp())}"


async def test_job_template_runs_a_job_when_the_clock_passes_the_minute(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("hello"))
    assert await driver.names(JOBS, "hello") == []

    activation = await driver.step_to_next_minute(acj)
    job = await driver.child(JOBS, child_name("hello", activation))

    meta = job["metadata"]
    assert meta["annotations"] == {
        "team": "batch",
        SCHEDULED_AT: go_format_rfc3339(activation.astimezone(process_zone())),
    }
    assert meta["labels"]["run"] == "hello"
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "AdvancedCronJob",
        "hello",
        acj["metadata"]["uid"],
        True,
    )
    assert job["spec"]["backoffLimit"] == 0

    status = await kruise_cluster.until(lambda: driver.status("hello"), lambda s: bool(s.get("active")))
    assert status["type"] == "Job"
    assert status["lastScheduleTime"] == go_format_rfc3339(activation.astimezone(UTC))
    assert [(a["kind"], a["name"]) for a in status["active"]] == [("Job", meta["name"])]


async def test_forbid_skips_the_run_while_a_child_is_active(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("forbid", concurrencyPolicy="Forbid"))
    first = await driver.step_to_next_minute(acj)
    first_job = child_name("forbid", first)
    await driver.child(JOBS, first_job)

    await driver.step_minute()
    await driver.fence("forbid", first_job)
    assert await driver.names(JOBS, "forbid") == [first_job]

    # With the active child gone, the next activation runs again.
    await kruise_cluster.client.delete(JOBS, first_job, NS, propagation_policy="Background")
    await driver.gone(JOBS, first_job)
    await driver.step_minute()
    third = first + timedelta(minutes=2)
    await driver.child(JOBS, child_name("forbid", third))


async def test_replace_deletes_the_active_child_before_the_next_run(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("replace", concurrencyPolicy="Replace"))
    first = await driver.step_to_next_minute(acj)
    first_job = child_name("replace", first)
    await driver.child(JOBS, first_job)
    await kruise_cluster.until(lambda: driver.status("replace"), lambda s: bool(s.get("active")))

    await driver.step_minute()
    second_job = child_name("replace", first + timedelta(minutes=1))
    await driver.child(JOBS, second_job)
    await driver.gone(JOBS, first_job)
    assert await driver.names(JOBS, "replace") == [second_job]


async def test_allow_runs_next_to_an_active_child(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("allow", concurrencyPolicy="Allow"))
    first = await driver.step_to_next_minute(acj)
    await driver.child(JOBS, child_name("allow", first))
    await kruise_cluster.until(lambda: driver.status("allow"), lambda s: bool(s.get("active")))

    await driver.step_minute()
    await driver.child(JOBS, child_name("allow", first + timedelta(minutes=1)))
    assert len(await driver.names(JOBS, "allow")) == 2


async def test_successful_history_limit_deletes_the_oldest_finished_child(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("history", run_seconds=SHORT_RUN, successfulJobsHistoryLimit=1))

    async def finished(name: str) -> None:
        await kruise_cluster.until(
            lambda: kruise_cluster.client.get(JOBS, name, NS),
            lambda j: any(
                c.get("type") == "Complete" and c.get("status") == "True"
                for c in (j.get("status") or {}).get("conditions") or []
            ),
        )

    first = await driver.step_to_next_minute(acj)
    first_job = child_name("history", first)
    await driver.child(JOBS, first_job)
    await finished(first_job)

    await driver.step_minute()
    second_job = child_name("history", first + timedelta(minutes=1))
    await driver.child(JOBS, second_job)
    await finished(second_job)

    await driver.gone(JOBS, first_job)
    assert await driver.names(JOBS, "history") == [second_job]
    status = await kruise_cluster.until(lambda: driver.status("history"), lambda s: not s.get("active"))
    assert status["lastScheduleTime"] == go_format_rfc3339(first + timedelta(minutes=1))


async def test_paused_creates_nothing(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("paused", paused=True))
    # A hand-made child (as `kubectl kruise create job --from=acj/paused` makes) to fence passes on.
    manual = await kruise_cluster.client.create(
        JOBS,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "paused-manual",
                "namespace": NS,
                "ownerReferences": [
                    {
                        "apiVersion": "apps.kruise.io/v1alpha1",
                        "kind": "AdvancedCronJob",
                        "name": "paused",
                        "uid": acj["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {"template": pod_template(LONG_RUN)},
        },
    )

    await driver.step_to_next_minute(acj)
    await driver.step_minute()
    await driver.fence("paused", manual["metadata"]["name"])
    assert await driver.names(JOBS, "paused") == ["paused-manual"]
    assert "lastScheduleTime" not in await driver.status("paused")


async def test_broadcast_job_template_creates_a_broadcast_job(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(broadcast_cronjob("bcj"))
    assert (await driver.status("bcj"))["type"] == "BroadcastJob"

    activation = await driver.step_to_next_minute(acj)
    bcj = await driver.child(BROADCASTJOBS, child_name("bcj", activation))
    assert bcj["metadata"]["annotations"][SCHEDULED_AT] == go_format_rfc3339(
        activation.astimezone(process_zone())
    )
    assert bcj["spec"]["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 30}
    assert await driver.names(JOBS, "bcj") == []
    status = await kruise_cluster.until(lambda: driver.status("bcj"), lambda s: bool(s.get("active")))
    assert [(a["kind"], a["name"]) for a in status["active"]] == [("BroadcastJob", bcj["metadata"]["name"])]


async def test_a_restarted_manager_runs_only_the_latest_activation_it_missed(
    kruise_cluster, manager_clock, emulator
):
    """The manager is down for five activations; the new one starts exactly one child, for the most
    recent of them (upstream's at-most-one catch-up), and the schedule then goes on as before."""
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(job_cronjob("restart"))
    first = await driver.step_to_next_minute(acj)
    first_job = child_name("restart", first)
    await driver.child(JOBS, first_job)
    await kruise_cluster.until(lambda: driver.status("restart"), lambda s: bool(s.get("active")))

    # The manager process goes away: its controller and every informer stop.
    for controller in kruise_cluster.controllers:
        await controller.stop()
    await kruise_cluster.context.informers.stop()
    for _ in range(5):
        await driver.step_minute()
    latest = first + timedelta(minutes=5)

    # A new manager process: its own client, informers and controller, on the same clock.
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=2000, burst=2000)
    context = ManagerContext(
        client=client,
        informers=SharedInformerFactory(client),
        feature_gates=FeatureGates(env={}),
        clock=manager_clock,
    )
    controller = SETUP.build(context)
    context.informers.start()
    try:
        assert await context.informers.wait_for_cache_sync(30)
        controller.start()
        latest_job = child_name("restart", latest)
        await driver.child(JOBS, latest_job)
        await driver.fence("restart", first_job)
        assert await driver.names(JOBS, "restart") == sorted([first_job, latest_job])
        status = await driver.status("restart")
        assert status["lastScheduleTime"] == go_format_rfc3339(latest.astimezone(UTC))
        assert sorted(a["name"] for a in status["active"]) == sorted([first_job, latest_job])

        # Back on schedule: the next minute runs as usual.
        await driver.step_minute()
        await driver.child(JOBS, child_name("restart", latest + timedelta(minutes=1)))
        assert len(await driver.names(JOBS, "restart")) == 3
    finally:
        await controller.stop()
        await context.informers.stop()
        await client.close()


def image_pull_cronjob(name: str, policy: str) -> dict:
    """An ImageListPullJob cron job as the webhook leaves it (no ImageListPullJob controller runs here,
    so its children stay active until the test completes them)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedule": "* * * * *",
            "concurrencyPolicy": policy,
            "template": {
                "imageListPullJobTemplate": {
                    "metadata": {"labels": {"pull": name}, "annotations": {"team": "infra"}},
                    "spec": {
                        "images": ["nginx:1.25", "redis:7"],
                        "completionPolicy": {"type": "Always"},
                        "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3},
                    },
                }
            },
        },
    }


async def complete_pull_job(cluster, name: str) -> None:
    """Finish an ImageListPullJob the way its controller does: every image succeeded, completion time set."""
    status = {
        "desired": 2,
        "succeeded": 2,
        "completed": 2,
        "completionTime": go_format_rfc3339(datetime.now(UTC)),
    }
    await cluster.client.patch(
        IMAGELISTPULLJOBS, name, {"status": status}, NS, patch_type=PatchType.MERGE, subresource="status"
    )


async def test_image_list_pull_job_template_runs_an_image_list_pull_job(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(image_pull_cronjob("prepull", "Replace"))
    assert (await driver.status("prepull"))["type"] == "ImageListPullJob"
    assert await driver.names(IMAGELISTPULLJOBS, "prepull") == []

    activation = await driver.step_to_next_minute(acj)
    pull_job = await driver.child(IMAGELISTPULLJOBS, child_name("prepull", activation))

    meta = pull_job["metadata"]
    assert meta["labels"] == {"pull": "prepull"}
    assert meta["annotations"] == {
        "team": "infra",
        SCHEDULED_AT: go_format_rfc3339(activation.astimezone(process_zone())),
    }
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "AdvancedCronJob",
        "prepull",
        acj["metadata"]["uid"],
        True,
    )
    assert pull_job["spec"]["images"] == ["nginx:1.25", "redis:7"]
    assert await driver.names(JOBS, "prepull") == []

    status = await kruise_cluster.until(lambda: driver.status("prepull"), lambda s: bool(s.get("active")))
    assert status["type"] == "ImageListPullJob"
    assert status["lastScheduleTime"] == go_format_rfc3339(activation.astimezone(UTC))
    assert [(a["kind"], a["name"]) for a in status["active"]] == [("ImageListPullJob", meta["name"])]

    # A completed pull job leaves the active list.
    await complete_pull_job(kruise_cluster, meta["name"])
    await kruise_cluster.until(lambda: driver.status("prepull"), lambda s: not s.get("active"))


async def test_forbid_skips_the_run_while_an_image_list_pull_job_runs(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(image_pull_cronjob("pull-forbid", "Forbid"))
    first = await driver.step_to_next_minute(acj)
    first_job = child_name("pull-forbid", first)
    await driver.child(IMAGELISTPULLJOBS, first_job)

    await driver.step_minute()
    await driver.fence("pull-forbid", first_job, IMAGELISTPULLJOBS)
    assert await driver.names(IMAGELISTPULLJOBS, "pull-forbid") == [first_job]

    # Once the running pull job has completed, the skipped activation is still the latest one due (as
    # upstream: Forbid defers a run, it does not drop it), so it runs at once, without a clock step.
    await complete_pull_job(kruise_cluster, first_job)
    second_job = child_name("pull-forbid", first + timedelta(minutes=1))
    await driver.child(IMAGELISTPULLJOBS, second_job)
    assert await driver.names(IMAGELISTPULLJOBS, "pull-forbid") == sorted([first_job, second_job])


async def test_replace_deletes_the_running_image_list_pull_job(kruise_cluster, manager_clock):
    driver = CronDriver(kruise_cluster, manager_clock)
    acj = await driver.create(image_pull_cronjob("pull-replace", "Replace"))
    first = await driver.step_to_next_minute(acj)
    first_job = child_name("pull-replace", first)
    await driver.child(IMAGELISTPULLJOBS, first_job)
    await kruise_cluster.until(lambda: driver.status("pull-replace"), lambda s: bool(s.get("active")))

    await driver.step_minute()
    second_job = child_name("pull-replace", first + timedelta(minutes=1))
    await driver.child(IMAGELISTPULLJOBS, second_job)
    await driver.gone(IMAGELISTPULLJOBS, first_job)
    assert await driver.names(IMAGELISTPULLJOBS, "pull-replace") == [second_job]
