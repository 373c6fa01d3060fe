"""Seed 002's AdvancedCronJob example, through `kruise sandbox up` (kruise-webhook + kruise-manager as
real processes) and the real kubectl: `acj-test` creates a BroadcastJob every minute.

kruise-manager runs on the real clock (the sandbox's `--speed` only scales the simulated kubelet and
the manager takes no time scale), so this test waits for one real whole minute — up to ~65 s — and
is marked slow. A second cron job with a `jobTemplate` fires in the same minute, so the Job path
(child runs to completion, `status.active` empties) is covered by the same wait.

Only what the AdvancedCronJob controller does is asserted: the seed's BroadcastJob pods belong to
the BroadcastJob controller, which is separate work.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest
from harness import Cluster

# One real minute of waiting plus the sandbox start (shared, session-scoped) exceeds the default 120 s.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

T = TypeVar("T")
SCHEDULED_AT = "apps.kruise.io/scheduled-at"
ACJ_COLUMNS = ["NAME", "SCHEDULE", "TYPE", "LASTSCHEDULETIME", "AGE"]
BCJ_COLUMNS = ["NAME", "DESIRED", "ACTIVE", "SUCCEEDED", "FAILED", "AGE"]
MINUTE_MARGIN = 5.0
"""Seconds before a whole minute in which the test does not create the cron jobs (see below)."""

SEED = """
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata:
  name: acj-test
  namespace: default
spec:
  schedule: "*/1 * * * *"
  template:
    broadcastJobTemplate:
      spec:
        completionPolicy:
          type: Always
          ttlSecondsAfterFinished: 30
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: counter
              image: busybox
              command:
              - "/bin/sh"
              - "-c"
              - "for i in 9 8 7 6 5 4 3 2 1; do echo $i; done"
---
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata:
  name: acj-job
  namespace: default
spec:
  schedule: "*/1 * * * *"
  concurrencyPolicy: Forbid
  template:
    jobTemplate:
      metadata:
        labels:
          cron: acj-job
      spec:
        template:
          metadata:
            annotations:
              sandbox.kruise.io/run-seconds: "1"
          spec:
            restartPolicy: Never
            containers:
            - name: counter
              image: busybox
              command: ["/bin/sh", "-c", "echo done"]
"""


async def until(fetch: Callable[[], Awaitable[T]], predicate: Callable[[T], bool], timeout: float) -> T:
    """The first value of `fetch()` satisfying `predicate`, polled every 0.5 s under `timeout`."""
    value = await fetch()
    async with asyncio.timeout(timeout):
        while not predicate(value):
            await asyncio.sleep(0.5)
            value = await fetch()
    return value


def table(text: str) -> list[dict[str, str]]:
    """`kubectl get` output as rows keyed by column, cut at the header's column starts (values such
    as a cron schedule contain spaces, so splitting on whitespace would not do)."""
    header, *lines = text.rstrip("\n").splitlines()
    names = header.split()
    starts = [header.index(name) for name in names]
    bounds = [*starts[1:], None]
    return [
        {name: line[start:end].strip() for name, start, end in zip(names, starts, bounds, strict=True)}
        for line in lines
    ]


async def get_json(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def get_table(cluster: Cluster, *args: str) -> tuple[list[str], list[dict[str, str]]]:
    _, out = await cluster.kubectl("get", *args)
    return out.splitlines()[0].split(), table(out)


async def child(cluster: Cluster, resource: str, name: str, timeout: float) -> dict:
    async def fetch() -> dict | None:
        code, out = await cluster.kubectl("get", resource, name, "-o", "json", check=False)
        return json.loads(out) if code == 0 else None

    found = await until(fetch, lambda c: c is not None, timeout)
    assert found is not None
    return found


def first_activation(acj: dict) -> datetime:
    """`*/1 * * * *`: the first whole minute strictly after the cron job's creation."""
    created = datetime.fromisoformat(acj["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    return created.replace(second=0, microsecond=0) + timedelta(minutes=1)


async def test_seed_002_advanced_cron_job_every_minute(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    # Stay clear of a minute boundary, so the first `kubectl get acj` is certainly taken before the
    # first activation (the seed's "blank LASTSCHEDULETIME" row). This is a wait on the wall clock
    # the manager also runs on, not a guess about the manager's progress.
    into_minute = time.time() % 60
    if into_minute > 60 - MINUTE_MARGIN:
        await asyncio.sleep(60 - into_minute + 0.5)
    manifest = tmp_path / "acj.yaml"
    manifest.write_text(SEED)
    await cluster.kubectl("apply", "-f", str(manifest))

    # Before the first run: TYPE comes from the first pass, LASTSCHEDULETIME is blank.
    async def acj_rows() -> dict[str, dict[str, str]]:
        return {row["NAME"]: row for row in (await get_table(cluster, "acj"))[1]}

    rows = await until(acj_rows, lambda r: all(r.get(n, {}).get("TYPE") for n in ("acj-test", "acj-job")), 20)
    header, _ = await get_table(cluster, "acj")
    assert header == ACJ_COLUMNS
    assert rows["acj-test"]["SCHEDULE"] == "*/1 * * * *"
    assert rows["acj-test"]["TYPE"] == "BroadcastJob"
    assert rows["acj-test"]["LASTSCHEDULETIME"] == ""
    assert rows["acj-job"]["TYPE"] == "Job"
    assert rows["acj-job"]["LASTSCHEDULETIME"] == ""
    acj = await get_json(cluster, "acj", "acj-test")
    activation = first_activation(acj)
    wait = (activation - datetime.now(UTC)).total_seconds() + 30
    unix = int(activation.timestamp())

    # The minute passes: one BroadcastJob `acj-test-<unix>` with the scheduled-at annotation.
    bcj = await child(cluster, "bcj", f"acj-test-{unix}", timeout=wait)
    meta = bcj["metadata"]
    scheduled = datetime.fromisoformat(meta["annotations"][SCHEDULED_AT].replace("Z", "+00:00"))
    assert scheduled == activation  # the same instant, in the manager's local zone
    [owner] = meta["ownerReferences"]
    assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "apps.kruise.io/v1alpha1",
        "AdvancedCronJob",
        "acj-test",
        acj["metadata"]["uid"],
        True,
    )
    assert bcj["spec"]["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 30}
    [container] = bcj["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("counter", "busybox")
    bcj_header, bcj_rows = await get_table(cluster, "bcj")
    assert bcj_header == BCJ_COLUMNS
    assert f"acj-test-{unix}" in [row["NAME"] for row in bcj_rows]

    # `kubectl get acj` now shows when it last ran; the status lists the child while it is active.
    rows = await until(acj_rows, lambda r: r["acj-test"]["LASTSCHEDULETIME"] != "", 20)
    assert rows["acj-test"]["TYPE"] == "BroadcastJob"
    status = (await get_json(cluster, "acj", "acj-test"))["status"]
    assert status["lastScheduleTime"] == activation.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert status["type"] == "BroadcastJob"
    if status.get("active"):  # until the BroadcastJob controller finishes it
        assert [(a["kind"], a["name"]) for a in status["active"]] == [("BroadcastJob", f"acj-test-{unix}")]

    # The jobTemplate cron job fired in the same minute; its Job runs to completion and the cron
    # job's status drops it from `active` while keeping lastScheduleTime.
    job = await child(cluster, "job", f"acj-job-{unix}", timeout=30)
    assert job["metadata"]["labels"]["cron"] == "acj-job"
    assert datetime.fromisoformat(job["metadata"]["annotations"][SCHEDULED_AT].replace("Z", "+00:00")) == (
        activation
    )

    async def job_status() -> dict:
        return (await get_json(cluster, "acj", "acj-job")).get("status") or {}

    status = await until(
        job_status, lambda s: s.get("lastScheduleTime") is not None and not s.get("active"), 60
    )
    assert status["lastScheduleTime"] == activation.strftime("%Y-%m-%dT%H:%M:%SZ")
    finished = await get_json(cluster, "job", f"acj-job-{unix}")
    assert any(
        c["type"] == "Complete" and c["status"] == "True" for c in finished["status"].get("conditions", [])
    )

    await cluster.kubectl("delete", "acj", "acj-test", "acj-job")
