"""Children of an AdvancedCronJob: scheduled-at, naming, classification, history limits, construction."""

from __future__ import annotations

import copy
import zoneinfo
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.timestamps import go_format_rfc3339, go_parse_rfc3339
from kruise.control.advancedcronjob.children import (
    beyond_history_limit,
    build_child,
    child_name,
    classify,
    finished_type,
    object_reference,
    scheduled_at,
)

SHANGHAI = zoneinfo.ZoneInfo("Asia/Shanghai")
MINUS_3_30 = timezone(-timedelta(hours=3, minutes=30))


def job(name, *, conditions=(), scheduled=None, started=None, uid=None):
    meta = {"name": name, "namespace": "ns"}
    if uid:
        meta["uid"] = uid
    if scheduled is not None:
        meta["annotations"] = {"apps.kruise.io/scheduled-at": scheduled}
    status = {"conditions": [{"type": t, "status": s} for t, s in conditions]}
    if started:
        status["startTime"] = started
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "status": status}


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2026, 1, 2, 3, 4, 5, 999999, tzinfo=UTC), "2026-01-02T03:04:05Z"),
        (datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC), "0999-01-02T03:04:05Z"),
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=SHANGHAI), "2026-01-02T03:04:05+08:00"),
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=MINUS_3_30), "2026-01-02T03:04:05-03:30"),
    ],
)
def test_format_rfc3339_like_go(moment, text):
    assert go_format_rfc3339(moment) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T11:04:05+08:00", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02t03:04:05.5z", datetime(2026, 1, 2, 3, 4, 5, 500000, tzinfo=UTC)),
        ("2026-01-02 03:04:05Z", None),
        ("2026-01-02T03:04:05", None),
        ("2026-02-30T03:04:05Z", None),
        ("yesterday", None),
    ],
)
def test_parse_rfc3339(text, expected):
    assert go_parse_rfc3339(text) == expected


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from([UTC, zoneinfo.ZoneInfo("Europe/Berlin")]),
    )
)
def test_rfc3339_round_trips_to_the_second(moment):
    # (before 1893 Berlin's offset had seconds, which RFC 3339 cannot carry — nor can Go's format)
    # Compared in UTC: Python never calls an inter-zone comparison equal inside a repeated hour.
    assert go_parse_rfc3339(go_format_rfc3339(moment)) == moment.replace(microsecond=0).astimezone(UTC)


def test_child_name_uses_unix_seconds():
    moment = datetime(2026, 1, 1, 0, 3, tzinfo=UTC)
    assert child_name("backup", moment) == "backup-1767225780"
    assert child_name("backup", moment.astimezone(zoneinfo.ZoneInfo("Asia/Tokyo"))) == "backup-1767225780"


def test_scheduled_at_skips_missing_and_unparsable_annotations():
    assert scheduled_at(job("a")) is None
    assert scheduled_at(job("a", scheduled="")) is None
    assert scheduled_at(job("a", scheduled="not a time")) is None
    assert scheduled_at(job("a", scheduled="2026-01-01T00:00:00Z")) == datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ((), None),
        ((("Complete", "False"),), None),
        ((("Suspended", "True"),), None),
        ((("Complete", "True"),), "Complete"),
        ((("Failed", "True"),), "Failed"),
        ((("Failed", "False"), ("Complete", "True")), "Complete"),
        ((("Failed", "True"), ("Complete", "True")), "Failed"),  # the first True one wins
    ],
)
def test_finished_type(conditions, expected):
    assert finished_type(job("a", conditions=conditions)) == expected


def test_classify_buckets_and_latest_schedule():
    children = [
        job("c-3", scheduled="2026-01-01T00:03:00Z"),
        job("c-1", conditions=[("Complete", "True")], scheduled="2026-01-01T00:01:00Z"),
        job("c-2", conditions=[("Failed", "True")], scheduled="bogus"),
        job("c-0", scheduled="2026-01-01T08:04:00+08:00"),  # 00:04Z, the latest
    ]
    result = classify(children)
    assert [c["metadata"]["name"] for c in result.active] == ["c-0", "c-3"]
    assert [c["metadata"]["name"] for c in result.succeeded] == ["c-1"]
    assert [c["metadata"]["name"] for c in result.failed] == ["c-2"]
    assert result.last_scheduled == datetime(2026, 1, 1, 0, 4, tzinfo=UTC)
    assert classify([]).last_scheduled is None


def _names(children):
    return [c["metadata"]["name"] for c in children]


def test_history_limit_deletes_the_oldest_by_start_time_unstarted_first():
    finished = [
        job("late", started="2026-01-01T00:05:00Z"),
        job("never"),
        job("early", started="2026-01-01T00:01:00Z"),
        job("mid", started="2026-01-01T00:03:00Z"),
    ]
    assert _names(beyond_history_limit(finished, 2)) == ["never", "early"]
    assert _names(beyond_history_limit(finished, 0)) == ["never", "early", "mid", "late"]
    assert beyond_history_limit(finished, 4) == []
    assert beyond_history_limit(finished, 10) == []
    assert beyond_history_limit(finished, None) == []


@given(st.lists(st.integers(0, 10_000), max_size=12), st.integers(0, 15))
def test_history_limit_keeps_exactly_the_newest(starts, limit):
    finished = [
        job(f"j{i}", started=go_format_rfc3339(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=s)))
        for i, s in enumerate(starts)
    ]
    doomed = beyond_history_limit(finished, limit)
    kept = [c for c in finished if c not in doomed]
    assert len(kept) == min(limit, len(finished))
    if doomed and kept:
        newest_doomed = max(go_parse_rfc3339(c["status"]["startTime"]) for c in doomed)
        assert all(go_parse_rfc3339(c["status"]["startTime"]) >= newest_doomed for c in kept)


def _acj():
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": "backup", "namespace": "ns", "uid": "acj-uid"},
        "spec": {
            "schedule": "*/1 * * * *",
            "template": {
                "jobTemplate": {
                    "metadata": {
                        "labels": {"app": "backup"},
                        "annotations": {"team": "infra"},
                        "finalizers": ["not-copied"],
                    },
                    "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
                },
            },
        },
    }


def test_build_child_copies_template_and_adds_schedule_and_owner():
    acj = _acj()
    before = copy.deepcopy(acj)
    moment = datetime(2026, 1, 1, 0, 3, tzinfo=UTC)
    child = build_child(acj, "Job", moment)
    assert child == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "backup-1767225780",
            "namespace": "ns",
            "labels": {"app": "backup"},
            "annotations": {"team": "infra", "apps.kruise.io/scheduled-at": "2026-01-01T00:03:00Z"},
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "AdvancedCronJob",
                    "name": "backup",
                    "uid": "acj-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
    }
    child["spec"]["template"]["spec"]["containers"][0]["image"] = "changed"
    child["metadata"]["labels"]["x"] = "y"
    assert acj == before


def test_build_broadcast_child():
    acj = _acj()
    acj["spec"]["template"] = {"broadcastJobTemplate": {"spec": {"parallelism": 2, "template": {}}}}
    child = build_child(acj, "BroadcastJob", datetime(2026, 1, 1, 0, 3, tzinfo=SHANGHAI))
    assert child["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert child["kind"] == "BroadcastJob"
    assert child["spec"] == {"parallelism": 2, "template": {}}
    assert child["metadata"]["labels"] == {}
    assert child["metadata"]["annotations"] == {"apps.kruise.io/scheduled-at": "2026-01-01T00:03:00+08:00"}


def test_object_reference_of_an_active_child():
    child = job("backup-1", uid="u1")
    child["metadata"]["resourceVersion"] = "42"
    assert object_reference(child, "Job") == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "backup-1",
        "namespace": "ns",
        "uid": "u1",
        "resourceVersion": "42",
    }
    del child["apiVersion"], child["kind"]
    assert object_reference(child, "BroadcastJob")["apiVersion"] == "apps.kruise.io/v1alpha1"
