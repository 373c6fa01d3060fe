"""The AdvancedCronJob reconciler's I/O around the plan: what it writes, deletes and creates, in which
order, and which failures stop the pass — against fake caches and a recording client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, ApiError, NotFound
from kruise.kube.resources import ADVANCED_CRONJOBS, BROADCASTJOBS, IMAGELISTPULLJOBS, JOBS
from kruise.manager.controllers.advancedcronjob.localzone import process_zone
from kruise.manager.controllers.advancedcronjob.reconciler import (
    AdvancedCronJobReconciler,
    controlled_by_name,
)
from tests.kit import FakeInformer

NS = "default"
CREATED = datetime(2026, 11, 23, 10, 0, 5, tzinfo=UTC)
ACTIVATION = datetime(2026, 11, 23, 10, 1, tzinfo=UTC)
NOW = ACTIVATION + timedelta(seconds=20)


class RecordingClient:
    def __init__(self, fail: dict[tuple[str, str], Exception] | None = None) -> None:
        self.calls: list[tuple] = []
        self.fail = fail or {}

    def _maybe_fail(self, verb: str, name: str) -> None:
        error = self.fail.get((verb, name))
        if error is not None:
            raise error

    async def patch(self, ref, name, body, namespace=None, **kwargs):
        self.calls.append(("patch", ref, name, body, kwargs.get("subresource")))
        self._maybe_fail("patch", name)
        return {}

    async def delete(self, ref, name, namespace=None, **kwargs):
        self.calls.append(("delete", ref, name, kwargs.get("propagation_policy"), kwargs.get("uid")))
        self._maybe_fail("delete", name)
        return {}

    async def create(self, ref, body, namespace=None, **kwargs):
        self.calls.append(("create", ref, body["metadata"]["name"], body))
        self._maybe_fail("create", body["metadata"]["name"])
        return body

    def verbs(self) -> list[tuple[str, str]]:
        return [(c[0], c[2]) for c in self.calls]


def cronjob(**spec) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {
            "name": "acj",
            "namespace": NS,
            "uid": "acj-uid",
            "creationTimestamp": "2026-11-23T10:00:05Z",
        },
        "spec": {
            "schedule": "* * * * *",
            "template": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
            **spec,
        },
    }


def child(name: str, *, scheduled: str, finished: str | None = None, started: str | None = None, owner="acj"):
    status: dict = {}
    if finished:
        status["conditions"] = [{"type": finished, "status": "True"}]
    if started:
        status["startTime"] = started
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"{name}-uid",
            "resourceVersion": "7",
            "annotations": {"apps.kruise.io/scheduled-at": scheduled},
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "AdvancedCronJob",
                    "name": owner,
                    "controller": True,
                }
            ],
        },
        "status": status,
    }


def reconciler(acj: dict, *children: dict, client: RecordingClient | None = None, bcjs=(), ilpjs=()):
    return AdvancedCronJobReconciler(
        client or RecordingClient(),
        cronjobs=FakeInformer([acj]),
        jobs=FakeInformer(children),
        broadcastjobs=FakeInformer(bcjs),
        imagelistpulljobs=FakeInformer(ilpjs),
        wall=lambda: NOW,
        local_zone=UTC,
    )


async def test_a_due_run_writes_status_then_creates_the_child_and_requeues_at_the_next_minute():
    r = reconciler(cronjob())
    result = await r.reconcile(f"{NS}/acj")
    assert r.client.verbs() == [("patch", "acj"), ("create", "acj-1795428060")]
    _, ref, _, body, subresource = r.client.calls[0]
    assert (ref, subresource) == (ADVANCED_CRONJOBS, "status")
    assert body == {"status": {"type": "Job"}}  # nothing to clear: the cron job had no status yet
    _, ref, _, manifest = r.client.calls[1]
    assert ref == JOBS
    assert manifest["metadata"]["annotations"]["apps.kruise.io/scheduled-at"] == "2026-11-23T10:01:00Z"
    assert result == Result(requeue_after=40.0)


async def test_an_unchanged_status_is_not_written():
    acj = cronjob()
    acj["status"] = {"type": "Job", "lastScheduleTime": "2026-11-23T10:01:00Z"}
    done = child("acj-1795428060", scheduled="2026-11-23T10:01:00Z", finished="Complete")
    r = reconciler(acj, done)
    assert await r.reconcile(f"{NS}/acj") == Result(requeue_after=40.0)
    assert r.client.calls == []


async def test_a_field_the_new_status_drops_is_cleared():
    acj = cronjob(concurrencyPolicy="Forbid")
    acj["status"] = {"type": "Job", "active": [{"name": "gone"}], "lastScheduleTime": "2026-11-23T10:01:00Z"}
    done = child("acj-1795428060", scheduled="2026-11-23T10:01:00Z", finished="Complete")
    r = reconciler(acj, done)
    await r.reconcile(f"{NS}/acj")
    _, ref, _, body, subresource = r.client.calls[0]
    assert (ref, subresource) == (ADVANCED_CRONJOBS, "status")
    assert body == {"status": {"active": None, "type": "Job", "lastScheduleTime": "2026-11-23T10:01:00Z"}}


async def test_children_of_other_owners_are_ignored():
    foreign = child("other-1795428060", scheduled="2026-11-23T10:01:00Z", owner="other")
    assert not controlled_by_name(foreign, "acj")
    r = reconciler(cronjob(concurrencyPolicy="Forbid"), foreign)
    await r.reconcile(f"{NS}/acj")
    assert ("create", "acj-1795428060") in r.client.verbs()


async def test_history_is_pruned_best_effort_before_the_paused_check():
    old = child(
        "acj-1", scheduled="2026-11-23T09:00:00Z", finished="Complete", started="2026-11-23T09:00:01Z"
    )
    new = child(
        "acj-2", scheduled="2026-11-23T09:30:00Z", finished="Complete", started="2026-11-23T09:30:01Z"
    )
    failed = child("acj-3", scheduled="2026-11-23T09:40:00Z", finished="Failed")
    client = RecordingClient(fail={("delete", "acj-3"): ApiError("boom", code=500)})
    r = reconciler(
        cronjob(paused=True, successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0),
        old,
        new,
        failed,
        client=client,
    )
    assert await r.reconcile(f"{NS}/acj") is None
    assert r.client.verbs() == [("patch", "acj"), ("delete", "acj-3"), ("delete", "acj-1")]
    assert r.client.calls[1][3:] == ("Background", "acj-3-uid")


async def test_forbid_with_an_active_child_creates_nothing_and_requeues():
    active = child("acj-1", scheduled="2026-11-23T10:00:30Z")
    r = reconciler(cronjob(concurrencyPolicy="Forbid"), active)
    assert await r.reconcile(f"{NS}/acj") == Result(requeue_after=40.0)
    assert [v for v, _ in r.client.verbs()] == ["patch"]


async def test_replace_deletes_the_active_child_then_creates():
    active = child("acj-1", scheduled="2026-11-23T10:00:30Z")
    r = reconciler(cronjob(concurrencyPolicy="Replace"), active)
    await r.reconcile(f"{NS}/acj")
    assert r.client.verbs() == [("patch", "acj"), ("delete", "acj-1"), ("create", "acj-1795428060")]


async def test_replace_tolerates_a_child_already_gone():
    active = child("acj-1", scheduled="2026-11-23T10:00:30Z")
    client = RecordingClient(fail={("delete", "acj-1"): NotFound("gone", code=404)})
    r = reconciler(cronjob(concurrencyPolicy="Replace"), active, client=client)
    await r.reconcile(f"{NS}/acj")
    assert r.client.verbs()[-1] == ("create", "acj-1795428060")


async def test_a_failed_replace_deletion_aborts_before_creating():
    active = child("acj-1", scheduled="2026-11-23T10:00:30Z")
    client = RecordingClient(fail={("delete", "acj-1"): ApiError("boom", code=500)})
    r = reconciler(cronjob(concurrencyPolicy="Replace"), active, client=client)
    with pytest.raises(ApiError):
        await r.reconcile(f"{NS}/acj")
    assert "create" not in [v for v, _ in r.client.verbs()]


async def test_a_create_conflict_is_returned_for_a_retry():
    client = RecordingClient(fail={("create", "acj-1795428060"): AlreadyExists("exists", code=409)})
    r = reconciler(cronjob(), client=client)
    with pytest.raises(AlreadyExists):
        await r.reconcile(f"{NS}/acj")


async def test_an_unparsable_schedule_is_not_requeued():
    r = reconciler(cronjob(schedule="61 * * * *"))
    assert await r.reconcile(f"{NS}/acj") is None
    assert [v for v, _ in r.client.verbs()] == ["patch"]


async def test_a_cron_job_deleted_meanwhile_stops_the_pass():
    client = RecordingClient(fail={("patch", "acj"): NotFound("gone", code=404)})
    r = reconciler(cronjob(), client=client)
    assert await r.reconcile(f"{NS}/acj") is None
    assert r.client.verbs() == [("patch", "acj")]


async def test_a_missing_cron_job_is_a_no_op():
    r = reconciler(cronjob())
    assert await r.reconcile(f"{NS}/nope") is None
    assert r.client.calls == []


async def test_broadcast_job_template_creates_a_broadcast_job():
    acj = cronjob()
    acj["spec"]["template"] = {"broadcastJobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}
    r = reconciler(acj)
    await r.reconcile(f"{NS}/acj")
    _, ref, name, manifest = r.client.calls[-1]
    assert (ref, name, manifest["kind"]) == (BROADCASTJOBS, "acj-1795428060", "BroadcastJob")


@pytest.mark.parametrize(
    ("tz", "expected"),
    [
        ("", "UTC"),
        ("UTC", "UTC"),
        (":Europe/Berlin", "Europe/Berlin"),
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("Mars/Base", "UTC"),
    ],
)
def test_process_zone_follows_gos_tz_rule(tz, expected):
    assert str(process_zone({"TZ": tz})) == expected


def test_process_zone_reads_localtime_when_tz_is_unset(tmp_path: Path):
    berlin = Path("/usr/share/zoneinfo/Europe/Berlin")
    if not berlin.exists():
        pytest.skip("no system zoneinfo")
    link = tmp_path / "localtime"
    link.symlink_to(berlin)
    zone = process_zone({}, localtime=link)
    assert zone.utcoffset(datetime(2026, 7, 1)) == timedelta(hours=2)
    assert zone.utcoffset(datetime(2026, 1, 1)) == timedelta(hours=1)
    assert str(process_zone({}, localtime=tmp_path / "missing")) == "UTC"


def ilpj_cronjob(**spec) -> dict:
    acj = cronjob(**spec)
    acj["spec"]["template"] = {
        "imageListPullJobTemplate": {
            "metadata": {"labels": {"pull": "nightly"}},
            "spec": {"images": ["nginx:1.25"], "completionPolicy": {"type": "Always"}},
        }
    }
    return acj


def ilpj(name: str, *, scheduled: str, completed: bool = False, succeeded: int = 1, desired: int = 1) -> dict:
    status: dict = {"desired": desired, "succeeded": succeeded if completed else 0}
    if completed:
        status["completionTime"] = "2026-11-23T10:00:30Z"
    obj = child(name, scheduled=scheduled)
    obj["apiVersion"] = "apps.kruise.io/v1alpha1"
    obj["kind"] = "ImageListPullJob"
    obj["status"] = status
    return obj


async def test_an_image_list_pull_job_template_creates_an_image_list_pull_job():
    r = reconciler(ilpj_cronjob(concurrencyPolicy="Replace"))
    result = await r.reconcile(f"{NS}/acj")
    assert r.client.verbs() == [("patch", "acj"), ("create", "acj-1795428060")]
    assert r.client.calls[0][3] == {"status": {"type": "ImageListPullJob"}}
    _, ref, _, manifest = r.client.calls[1]
    assert ref == IMAGELISTPULLJOBS
    assert manifest["kind"] == "ImageListPullJob"
    assert manifest["metadata"]["labels"] == {"pull": "nightly"}
    assert manifest["spec"]["images"] == ["nginx:1.25"]
    assert result == Result(requeue_after=40.0)


async def test_image_list_pull_jobs_are_read_from_their_own_cache():
    """A Job of the same name in the Job cache is not a child of an ImageListPullJob cron job."""
    running = ilpj("acj-1795428000", scheduled="2026-11-23T10:00:00Z")
    stray_job = child("acj-1795428000", scheduled="2026-11-23T10:00:00Z")
    r = reconciler(ilpj_cronjob(concurrencyPolicy="Forbid"), stray_job, ilpjs=(running,))
    assert await r.reconcile(f"{NS}/acj") == Result(requeue_after=40.0)
    [patch] = r.client.calls
    status = patch[3]["status"]
    assert status["type"] == "ImageListPullJob"
    assert [a["name"] for a in status["active"]] == ["acj-1795428000"]
    assert status["active"][0]["kind"] == "ImageListPullJob"


async def test_replace_deletes_the_running_image_list_pull_job_first():
    running = ilpj("acj-1795428000", scheduled="2026-11-23T10:00:00Z")
    r = reconciler(ilpj_cronjob(concurrencyPolicy="Replace"), ilpjs=(running,))
    await r.reconcile(f"{NS}/acj")
    assert r.client.verbs() == [("patch", "acj"), ("delete", "acj-1795428000"), ("create", "acj-1795428060")]
    assert r.client.calls[1][1] == IMAGELISTPULLJOBS
    assert r.client.calls[1][3:] == ("Background", "acj-1795428000-uid")


async def test_finished_image_list_pull_jobs_beyond_the_limits_are_deleted():
    done = ilpj("acj-1795427940", scheduled="2026-11-23T09:59:00Z", completed=True)
    partial = ilpj("acj-1795428000", scheduled="2026-11-23T10:00:00Z", completed=True, succeeded=1, desired=2)
    r = reconciler(
        ilpj_cronjob(paused=True, successfulJobsHistoryLimit=0, failedJobsHistoryLimit=0),
        ilpjs=(done, partial),
    )
    assert await r.reconcile(f"{NS}/acj") is None
    assert r.client.verbs() == [("patch", "acj"), ("delete", "acj-1795428000"), ("delete", "acj-1795427940")]
    assert all(call[1] == IMAGELISTPULLJOBS for call in r.client.calls[1:])
