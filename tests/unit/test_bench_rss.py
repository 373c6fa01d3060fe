"""`benchmarks rss`'s arithmetic and objects, without starting a process: the CloneSet layout, /proc and
Prometheus parsing, the machine-readable last line, and that the loaded cluster is settled (each
CloneSet's status says what its pods say, and every pod carries its revision's hash)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchmarks import bench_rss as bench
from kruise.control.common.revision import new_cloneset_revision


def test_layout_divides_pods_into_clonesets() -> None:
    assert bench.layout(100_000, 100) == 1000
    assert bench.layout(10_000, 100) == 100


@pytest.mark.parametrize(
    ("pods", "per", "named"),
    [(1050, 100, "--pods 1050"), (0, 100, "--pods 0"), (100, 0, "--per-cloneset 0")],
)
def test_bad_layouts_are_refused_naming_the_option(pods: int, per: int, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        bench.layout(pods, per)


def test_bad_options_exit_naming_the_option(capsys) -> None:
    with pytest.raises(SystemExit):
        bench.parse(["--pods", "1050"])
    assert "--pods 1050" in capsys.readouterr().err


def test_vm_lines_are_read_in_kib() -> None:
    status = "Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t3\n"
    assert bench.vm_kib(status, "VmRSS") == 102_400
    assert bench.vm_kib(status, "VmHWM") == 204_800
    with pytest.raises(ValueError, match="VmSwap"):
        bench.vm_kib(status, "VmSwap")


def test_metric_sums_match_the_name_exactly_and_filter_by_label() -> None:
    text = "\n".join(
        [
            "# HELP workqueue_depth Current depth of workqueue",
            'workqueue_depth{name="cloneset"} 3.0',
            'workqueue_depth{name="sidecarset"} 2.0',
            'workqueue_depth_total{name="x"} 100.0',
            'rest_client_requests_total{code="200",method="GET",host="h"} 40.0',
            'rest_client_requests_total{code="201",method="POST",host="h"} 7.0',
            'rest_client_requests_total{code="200",method="PATCH",host="h"} 5.0',
        ]
    )
    assert bench.metric_sum(text, "workqueue_depth") == 5.0
    assert bench.metric_sum(text, "rest_client_requests_total", 'method="GET"') == 40.0
    assert bench.writes(text) == 12.0


def test_summary_line_is_settled_rss_sync_and_ratio_against_the_anchor() -> None:
    mib = 1024
    anchor = {
        "manager": bench.Figures(2.0, 100 * mib, 100 * mib),
        "webhook": bench.Figures(1.0, 120 * mib, 125 * mib),
    }
    loaded = {
        "manager": bench.Figures(30.0, 380 * mib, 400 * mib, peak_kib=450 * mib),
        "webhook": bench.Figures(20.0, 300 * mib, 250 * mib, peak_kib=310 * mib),
    }
    assert bench.summary(100_000, loaded, anchor) == (
        "manager_rss_mib_100k=400 manager_sync_s_100k=30.0 manager_rss_ratio_100k=4.00 "
        "manager_peak_mib_100k=450 "
        "webhook_rss_mib_100k=250 webhook_sync_s_100k=20.0 webhook_rss_ratio_100k=2.00 "
        "webhook_peak_mib_100k=310"
    )
    assert bench.ratio(3.0, 2.0) == "1.50x" and bench.ratio(1.0, 0.0) == "-"


def test_the_loaded_cluster_is_settled_and_owned() -> None:
    """What keeps a restarted manager quiet: each CloneSet's status counts its pods as ready and
    updated, and every pod names its owner's uid and the revision the controller computes."""
    objects = list(bench.cluster_objects(300, 100))
    kinds = [o["kind"] for o in objects]
    assert kinds.count("Namespace") == bench.NAMESPACES and kinds.count("Node") == bench.NODES
    assert (
        kinds.count("CloneSet") == 3 and kinds.count("ControllerRevision") == 3 and kinds.count("Pod") == 300
    )
    owners = {o["metadata"]["uid"]: o for o in objects if o["kind"] == "CloneSet"}
    first_pod = kinds.index("Pod")
    assert kinds.index("CloneSet") < kinds.index("ControllerRevision") < first_pod  # owner first
    for owner in owners.values():
        status = owner["status"]
        assert status["replicas"] == status["readyReplicas"] == status["updatedReplicas"] == 100
        assert status["currentRevision"] == status["updateRevision"]
        expected = new_cloneset_revision(owner, 1, 0)["metadata"]["name"]
        assert status["updateRevision"] == expected
    pods = [o for o in objects if o["kind"] == "Pod"]
    assert len({p["metadata"]["name"] for p in pods}) == 300
    for p in pods:
        (ref,) = p["metadata"]["ownerReferences"]
        owner = owners[ref["uid"]]
        assert p["metadata"]["namespace"] == owner["metadata"]["namespace"]
        assert p["metadata"]["labels"]["controller-revision-hash"] == owner["status"]["updateRevision"]
        assert len(p["spec"]["containers"]) == len(p["status"]["containerStatuses"]) == 2


def test_size_labels() -> None:
    assert [bench.size_label(n) for n in (10_000, 100_000, 1500)] == ["10k", "100k", "1500"]
    assert bench.stamp(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"
