"""`benchmarks informer` at tiny sizes: every variant is measured at each size asked for, the last line
names each size's figure, and a bad `--pods` is refused naming the option (its figures are memory
measurements that vary with the interpreter, so nothing here checks a value beyond its sign)."""

from __future__ import annotations

import re

import pytest

from benchmarks import bench_informer as bench


def test_each_size_is_measured_and_the_last_line_names_its_figure(capsys) -> None:
    bench.main(["--pods", "50,120"])
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[-6] for line in lines if line.startswith("kruise-")]
    assert rows == ["50", "120", "50", "120"]  # manager then webhook, each size
    match = re.fullmatch(r"informer_bytes_per_pod_50=(\d+) informer_bytes_per_pod_120=(\d+)", lines[-1])
    assert match is not None and all(int(x) > 0 for x in match.groups())


def test_size_labels() -> None:
    assert [bench.size_label(n) for n in (10_000, 100_000, 1500)] == ["10k", "100k", "1500"]


@pytest.mark.parametrize("pods", ["ten", "10000,", "0"])
def test_bad_sizes_are_refused_naming_the_option(pods: str, capsys) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--pods", pods])
    assert "--pods" in capsys.readouterr().err


def test_pods_are_made_as_the_emulator_admits_them() -> None:
    """Each pod mounts its own service-account token volume in every container (a name per pod, as
    the ServiceAccount admission gives it), is owned by its CloneSet and reports Running and Ready."""
    pods = [bench.pod_object(i) for i in range(3)]
    tokens = []
    for pod in pods:
        volume = next(v for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-"))
        assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
        for container in pod["spec"]["containers"]:
            assert volume["name"] in [m["name"] for m in container["volumeMounts"]]
        tokens.append(volume["name"])
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "CloneSet"
        assert {"pod-template-hash", "controller-revision-hash"} <= set(pod["metadata"]["labels"])
        assert pod["status"]["phase"] == "Running"
        assert len(pod["status"]["containerStatuses"]) == len(pod["spec"]["containers"])
        assert {c["type"] for c in pod["status"]["conditions"]} >= {"Ready", "ContainersReady"}
    assert len(set(tokens)) == len(tokens)
