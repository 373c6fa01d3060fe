"""BroadcastJobReconciler with fake caches and a recording client: slow start, counting, expectations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.kube.clock import FakeClock
from kruise.kube.errors import ApiError, Conflict, Forbidden
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import BROADCASTJOBS, PODS
from kruise.manager.controllers.broadcastjob.reconciler import BroadcastJobReconciler
from tests.kit import FakeInformer, RecordingEventRecorder

KEY = "ns/bcj"


class _Client:
    """Records writes; `fail_creates_on` nodes answer with `create_error`."""

    def __init__(self, fail_creates_on: set[str] = frozenset(), create_error: ApiError | None = None) -> None:
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.statuses: list[dict[str, Any]] = []
        self.fail_creates_on = fail_creates_on
        self.create_error = create_error or Forbidden("exceeded quota")
        self.conflicts = 0
        self.fresh: dict[str, Any] | None = None  # what a GET after a conflict reads

    async def create(self, ref, body):
        assert ref is PODS
        node = body["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"][0]
        if node in self.fail_creates_on:
            raise self.create_error
        self.created.append(node)
        return {**body, "metadata": {**body["metadata"], "name": f"bcj-{node}"}}

    async def delete(self, ref, name, namespace=None, **kwargs):
        self.deleted.append(name)
        return {}

    async def patch(self, ref, name, patch, namespace=None, *, subresource=None, **kwargs):
        """A status merge patch conditional on the resourceVersion (the job's conflict rule)."""
        assert (ref, subresource) == (BROADCASTJOBS, "status")
        assert patch["metadata"]["resourceVersion"]
        if self.conflicts:
            self.conflicts -= 1
            raise Conflict("the object has been modified")
        self.statuses.append({k: v for k, v in copy.deepcopy(patch["status"]).items() if v is not None})
        return patch

    async def get(self, ref, name, namespace=None):
        fresh = copy.deepcopy(self.fresh or _job())
        fresh["metadata"]["resourceVersion"] = "2"
        return fresh


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {}, "status": {"allocatable": {"pods": "10"}}}


def _job(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": "bcj", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "m"}], "restartPolicy": "Never"}},
            "completionPolicy": {"type": "Always"},
            "failurePolicy": {"type": "FailFast"},
            **spec,
        },
    }


def _reconciler(client: _Client, nodes: int, job: dict[str, Any] | None = None):
    clock = FakeClock()
    expectations = ScaleExpectations(clock)
    reconciler = BroadcastJobReconciler(
        client,  # type: ignore[arg-type]
        RecordingEventRecorder(),
        jobs=FakeInformer([job or _job()]),
        pods=FakeInformer(),
        nodes=FakeInformer([_node(f"n{i}") for i in range(nodes)]),
        expectations=expectations,
        wall=clock.wall,
    )
    return reconciler, expectations


def told(reconciler: BroadcastJobReconciler) -> list[tuple[str, str]]:
    """The events recorded so far, as (reason, message)."""
    return [(e.reason, e.message) for e in reconciler.recorder.events]


async def test_creates_every_node_and_expects_each_by_node_name():
    client = _Client()
    reconciler, expectations = _reconciler(client, 5)
    assert await reconciler.reconcile(KEY) is None
    assert sorted(client.created) == ["n0", "n1", "n2", "n3", "n4"]
    satisfied, _, pending = expectations.satisfied(KEY)
    assert not satisfied and sorted(pending["create"]) == ["n0", "n1", "n2", "n3", "n4"]
    assert client.statuses[-1]["active"] == 5
    assert told(reconciler)[0] == ("SuccessfulCreate", "Created pod: bcj-n0")
    # the cache has not shown the pods yet: the next pass waits instead of creating again
    result = await reconciler.reconcile(KEY)
    assert result is not None and result.requeue_after and result.requeue_after > 0
    assert len(client.created) == 5


async def test_a_failing_batch_stops_slow_start_and_failed_attempts_still_count_active():
    """Batches 1 (n0), 2 (n1, n2) — n2 fails — so n3.. are not attempted; upstream counts 3 active."""
    client = _Client(fail_creates_on={"n2"})
    reconciler, expectations = _reconciler(client, 6)
    with pytest.raises(Forbidden):
        await reconciler.reconcile(KEY)
    assert sorted(client.created) == ["n0", "n1"]
    assert client.statuses[-1]["active"] == 3
    assert ("FailedCreate", "Error creating: exceeded quota") in told(reconciler)
    _, _, pending = expectations.satisfied(KEY)
    assert sorted(pending["create"]) == ["n0", "n1"]


async def test_a_timed_out_create_is_neither_counted_nor_an_error():
    """The server may still finish a timed-out create; the pod then shows up through the informer."""
    client = _Client(fail_creates_on={"n0"}, create_error=ApiError("timeout", code=504, reason="Timeout"))
    reconciler, _ = _reconciler(client, 3)
    assert await reconciler.reconcile(KEY) is None
    assert sorted(client.created) == ["n1", "n2"]
    assert client.statuses[-1]["active"] == 2


async def test_a_status_conflict_is_retried_on_a_fresh_copy():
    client = _Client()
    client.conflicts = 2
    reconciler, _ = _reconciler(client, 1)
    await reconciler.reconcile(KEY)
    assert len(client.statuses) == 1 and client.statuses[0]["desired"] == 1


async def test_a_stale_pass_never_overwrites_a_job_that_finished_meanwhile():
    """A pass computed on a cache older than the write that failed the job (FailFast counted the
    pod it deleted) conflicts; the fresh job is finished, so its final counts stay."""
    client = _Client()
    client.conflicts = 1
    client.fresh = _job()
    client.fresh["status"] = {
        "phase": "failed",
        "failed": 2,
        "conditions": [{"type": "Failed", "status": "True", "reason": "failed pod is found"}],
    }
    reconciler, _ = _reconciler(client, 1)
    await reconciler.reconcile(KEY)
    assert client.statuses == []


async def test_a_bad_parallelism_is_raised_after_the_status_write():
    client = _Client()
    reconciler, _ = _reconciler(client, 2, _job(parallelism="two"))
    with pytest.raises(ValueError, match=r"spec\.parallelism: invalid value for IntOrString"):
        await reconciler.reconcile(KEY)
    assert client.created == [] and client.statuses[-1]["desired"] == 2


async def test_a_gone_job_drops_its_expectations():
    client = _Client()
    reconciler, expectations = _reconciler(client, 1)
    await reconciler.reconcile(KEY)
    reconciler.jobs.remove(KEY)
    assert await reconciler.reconcile(KEY) is None
    assert expectations.satisfied(KEY)[0]
