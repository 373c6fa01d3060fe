"""The pure rules behind `exec`, `get all` and `describe rollout`: ages, cells, the pod exec picks,
and the arguments each command accepts."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from kruise.cli.kubectl_kruise import describerollout, execpod, getall, timefmt
from kruise.cli.kubectl_kruise.app import plan
from kruise.cli.kubectl_kruise.parser import build_parser, parse
from tests.kit.pods import pod

NOW = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (0.4, "0s"), (45, "45s"), (61, "1m1s"), (3600, "1h0m0s"), (3725, "1h2m5s"), (90061, "25h1m1s"),
])  # fmt: skip
def test_go_duration_is_durations_string(seconds, text):
    assert timefmt.go_duration(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (5, "5s"), (119, "119s"), (125, "2m5s"), (600, "10m"), (3 * 3600 + 60, "3h1m"),
    (9 * 3600, "9h"), (3 * 86400 + 3600, "3d1h"), (30 * 86400, "30d"), (3 * 365 * 86400, "3y"),
])  # fmt: skip
def test_human_duration_gets_coarser_with_age(seconds, text):
    assert timefmt.human_duration(seconds) == text


def test_get_cells_print_go_values():
    assert getall.go_map({"b": "2", "a": "1"}) == "map[a:1 b:2]" and getall.go_map(None) == "map[]"
    assert getall.go_time("2026-12-07T11:08:18Z") == "2026-12-07 11:08:18 +0000 UTC"
    assert (getall.go_time(None), getall.go_bool(None), getall.int_or_string(None)) == ("<nil>",) * 3
    pub = getall.BY_RESOURCE["podunavailablebudgets.policy.kruise.io"]
    obj = {"metadata": {"name": "guard", "creationTimestamp": "2026-12-07T11:00:00Z"},
           "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"a": "b"}}},
           "status": {"unavailablePods": {"p1": "t"}, "disruptedPods": {}}}  # fmt: skip
    assert pub.render(obj, NOW) == "guard       \t1       \t1       \t0       \t1       \t1h0m0s\n"


def exec_pod(name: str, *, node: str = "n1", phase: str = "Running", ready_since: str | None = None,
             restarts: int = 0, created: str = "2026-12-07T10:00:00Z") -> dict:  # fmt: skip
    """A pod `kubectl kruise exec` may pick: ready since `ready_since` (None: not ready), `restarts`."""
    return pod(
        name,
        namespace=None,
        created=created,
        node=node,
        containers=[{"name": "main"}],
        phase=phase,
        conditions=[{"type": "Ready", "status": "True", "lastTransitionTime": ready_since}]
        if ready_since
        else [],
        status={"containerStatuses": [{"name": "main", "restartCount": restarts}]},
    )


def test_exec_prefers_the_most_active_pod():
    ranked = [
        exec_pod("ready-longest", ready_since="2026-12-07T10:00:00Z"),
        exec_pod("ready-later", ready_since="2026-12-07T11:00:00Z"),
        exec_pod("running-not-ready"),
        exec_pod("unknown", phase="Unknown"),
        exec_pod("pending", phase="Pending"),
        exec_pod("unscheduled", node="", ready_since="2026-12-07T09:00:00Z"),
    ]
    assert [p["metadata"]["name"] for p in sorted(reversed(ranked), key=execpod.activity)] == [
        p["metadata"]["name"] for p in ranked
    ]
    fewer = exec_pod("fewer-restarts", restarts=0, created="2026-12-07T11:00:00Z")
    older = exec_pod("more-restarts", restarts=2)
    assert min([older, fewer], key=execpod.activity) is fewer


def test_exec_hot_upgrade_annotation_that_is_not_json_enters_no_sidecar():
    broken = {"metadata": {"annotations": {execpod.ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER: "{"}}}
    assert execpod.hot_upgrade_working(broken) == {}


def test_exec_argv_carries_the_connection_and_the_choice():
    choice = execpod.Choice({"metadata": {"name": "p", "namespace": "ns"}}, "main", ())
    options = execpod.ExecOptions("p", ("sh", "-c", "x"), stdin=True, kubeconfig="/k", context="c")
    assert execpod.kubectl_argv("kubectl", choice, options) == [
        "kubectl", "--kubeconfig", "/k", "--context", "c", "exec", "p", "-n", "ns", "-c", "main", "-i", "--",
        "sh", "-c", "x",
    ]  # fmt: skip


def planned(*argv: str):
    err = io.StringIO()
    return plan(parse(build_parser(), list(argv)), err), err.getvalue()


def test_arguments_are_checked_before_connecting():
    _, warning = planned("exec", "pod", "date")
    assert warning.startswith("kubectl exec [POD] [COMMAND] is DEPRECATED")
    for argv, message in (
        (("exec", "a", "b", "--", "date"), "exactly one POD or TYPE/NAME goes before --, got: a b"),
        (("get",), "required resource not specified"),
        (("get", "all", "x"), '"all" lists every kind and takes no names, got: x'),
        (("describe", "rollout"), "required rollout name not specified"),
    ):
        with pytest.raises((execpod.ExecError, getall.GetError, describerollout.DescribeError)) as caught:
            planned(*argv)
        assert str(caught.value) == message


def test_describe_tabulates_as_tabwriter():
    assert describerollout.tabulate([["NAME", "A", "Z"], ["longer", "1", "x"]]) == (
        "NAME    A  Z\nlonger  1  x\n"
    )
