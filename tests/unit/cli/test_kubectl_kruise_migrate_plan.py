"""The migration arithmetic of `migrate CloneSet --from Deployment`, step by step, and the flags' checks."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise.migrate import MigrateError, MigrateOptions
from kruise.cli.kubectl_kruise.migrateplan import (
    Done,
    Observed,
    Progress,
    ScaleIn,
    ScaleOut,
    Wait,
    advance,
    cloneset_from_deployment,
    next_step,
)


def settled(replicas: int, available: int | None = None, generation: int = 1) -> Observed:
    return Observed(generation, generation, replicas, replicas if available is None else available)


def simulate(start: int, target: int, max_surge: int) -> list[tuple[str, int, int, int]]:
    """Drive the planner with controllers that settle instantly and pods that are available at
    once; record (step, deployment replicas, cloneset replicas, pods in total) after each write."""
    deployment, cloneset, progress = start, 0, Progress()
    trace = []
    while True:
        step = next_step(target, max_surge, progress, settled(deployment), settled(cloneset))
        if isinstance(step, Done):
            return trace
        assert isinstance(step, ScaleOut | ScaleIn), step
        if isinstance(step, ScaleOut):
            cloneset += step.by
        else:
            deployment -= step.by
        progress = advance(progress, step)
        trace.append((type(step).__name__, deployment, cloneset, deployment + cloneset))


def test_ten_pods_move_one_at_a_time_with_the_default_surge():
    trace = simulate(10, 10, 1)
    assert len(trace) == 20
    assert trace[:2] == [("ScaleOut", 10, 1, 11), ("ScaleIn", 9, 1, 10)]
    assert trace[-1] == ("ScaleIn", 0, 10, 10)
    assert max(total for *_, total in trace) == 11
    assert min(total for *_, total in trace) == 10


def test_surge_bounds_the_extra_pods_and_the_last_step_is_partial():
    trace = simulate(10, 10, 3)
    assert [step[:3] for step in trace[:2]] == [("ScaleOut", 10, 3), ("ScaleIn", 7, 3)]
    assert trace[-2:] == [("ScaleOut", 1, 10, 11), ("ScaleIn", 0, 10, 10)]
    assert max(total for *_, total in trace) == 13


def test_a_partial_migration_leaves_the_rest_on_the_deployment():
    trace = simulate(10, 4, 2)
    assert trace[-1] == ("ScaleIn", 6, 4, 10)


def test_the_deployment_waits_until_every_cloneset_pod_is_available():
    progress = Progress(src=0, dst=2)
    waiting = next_step(10, 2, progress, settled(10), settled(2, available=1))
    assert waiting == Wait("cloneset pods are not all available")
    assert next_step(10, 2, progress, settled(10), settled(2)) == ScaleIn(2)


def test_nothing_is_planned_on_an_unobserved_or_stale_object():
    progress = Progress(src=0, dst=1)
    unobserved = Observed(generation=3, observed_generation=2, replicas=1, available=1)
    assert isinstance(next_step(10, 1, progress, settled(10), unobserved), Wait)
    assert isinstance(next_step(10, 1, progress, unobserved, settled(1)), Wait)
    stale = next_step(10, 1, progress, settled(10, generation=4), settled(1, generation=2), written=(5, 2))
    assert stale == Wait("stale read")


def test_an_empty_deployment_gives_nothing_to_move():
    step = next_step(5, 1, Progress(src=2, dst=3), settled(0), settled(3))
    assert step == Wait("the deployment has no replicas left to move")


def test_observed_reads_spec_and_status_with_kubernetes_defaults():
    obj = {
        "metadata": {"generation": 4},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 4, "availableReplicas": 2},
    }
    assert Observed.of(obj) == Observed(4, 4, 3, 2)
    assert Observed.of({"metadata": {}, "spec": {}}).replicas == 1


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "labels": {"app": "web"},
        "annotations": {"team": "a"},
        "uid": "u1",
        "resourceVersion": "7",
    },
    "spec": {
        "replicas": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 2}},
        "revisionHistoryLimit": 5,
        "minReadySeconds": 3,
        "paused": True,
    },
}


def test_created_cloneset_carries_the_deployment_over_and_is_empty_without_copy():
    cloneset = cloneset_from_deployment(DEPLOYMENT, "web-cs", copy_replicas=False)
    assert cloneset == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "web-cs",
            "namespace": "shop",
            "labels": {"app": "web"},
            "annotations": {"team": "a"},
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": DEPLOYMENT["spec"]["template"],
            "updateStrategy": {"type": "ReCreate", "paused": True, "maxUnavailable": 2, "maxSurge": "25%"},
            "revisionHistoryLimit": 5,
            "minReadySeconds": 3,
        },
    }
    assert cloneset_from_deployment(DEPLOYMENT, "web-cs", copy_replicas=True)["spec"]["replicas"] == 10
    cloneset["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    assert "x" not in DEPLOYMENT["spec"]["template"]["metadata"]["labels"]


def complete(namespace="ns", kinds=("CloneSet",), source="Deployment", src="web", dst="web-cs", **flags):
    return MigrateOptions.complete(namespace, list(kinds), source, src, dst, **flags)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"namespace": None}, "must specify namespace by -n or --namespace"),
        ({"kinds": ()}, "must specify workload type like CloneSet"),
        ({"kinds": ("CloneSet", "x")}, "more than one given args"),
        ({"source": ""}, "must specify --from"),
        ({"src": ""}, "must specify --src-name"),
        ({"dst": ""}, "must specify --dst-name"),
        ({"kinds": ("StatefulSet",)}, "currently only supported CloneSet as dst type"),
        ({"source": "DaemonSet"}, "currently only supported Deployment as src type"),
    ],
)
def test_flags_are_refused_in_kruise_tools_order_and_words(kwargs, message):
    with pytest.raises(MigrateError) as err:
        complete(**kwargs)
    assert str(err.value) == message


def test_accepted_spellings_and_create_without_a_dst_name():
    assert complete(kinds=("clone",), source="deployment").dst_display == "CloneSet/web-cs"
    created = complete(dst="", create=True)
    assert (created.create, created.dst_ref) == (True, "{apps.kruise.io/v1alpha1 CloneSet ns }")
    assert complete().src_ref == "{apps/v1 Deployment ns web}"
