"""py-spy's raw recordings read into where a main thread spent the window (benchmarks/pyspy.py)."""

from __future__ import annotations

from benchmarks import pyspy

MAIN = "thread (101): MainThread"
LOOP = "main (manager/main.py);BaseEventLoop._run_once (asyncio/base_events.py)"
RAW = f"""{MAIN};{LOOP};EpollSelector.select (selectors.py) 30
{MAIN};{LOOP};Client.request (kube/client.py) 20
{MAIN};{LOOP};Projection.apply (kube/projection.py);Projection._dict (kube/projection.py) 40
{MAIN};{LOOP};Client.request (kube/client.py);ClientResponse.read (aiohttp/client_reqrep.py) 5
{MAIN};{LOOP};Client.request (kube/client.py) 5
thread (102): asyncio_0;Thread.run (threading.py);_worker (concurrent/futures/thread.py) 100
not a sample line
"""


def test_stacks_sum_repeated_lines_and_skip_what_is_not_a_sample():
    counts = pyspy.stacks(RAW.splitlines())
    assert sum(counts.values()) == 200
    assert counts[(MAIN, *LOOP.split(";"), "Client.request (kube/client.py)")] == 25


def test_categories_go_by_the_innermost_frame_or_any_frame():
    assert pyspy.category(
        (MAIN, "BaseEventLoop._run_once (asyncio/base_events.py)", "EpollSelector.select (selectors.py)")
    ) == ("waiting (event loop idle)")
    # decode is Client.request's own time (orjson is native); reading the answer below it is not decode
    assert pyspy.category((MAIN, "Client.request (kube/client.py)")) == "client: JSON decode"
    assert pyspy.category(
        (MAIN, "Client.request (kube/client.py)", "StreamReader.read (aiohttp/streams.py)")
    ) == (pyspy.OTHER)
    assert pyspy.category((MAIN, "Projection.apply (kube/projection.py)", "f (x.py)")) == "client: projection"
    assert pyspy.category(
        (MAIN, "Reads._respond_list (sandbox/apiserver/handlers/reads.py)", "nsmallest (heapq.py)")
    ) == ("emulator: list filter and page")


def test_breakdown_counts_the_main_thread_only():
    total, labels = pyspy.breakdown(pyspy.stacks(RAW.splitlines()))
    assert total == 100
    assert labels == {
        "waiting (event loop idle)": 30,
        "client: JSON decode": 25,
        "client: projection": 40,
        pyspy.OTHER: 5,
    }


def test_report_gives_seconds_and_shares_per_recording(tmp_path):
    (tmp_path / "manager.txt").write_text(RAW)
    text = pyspy.report(tmp_path, rate=50)
    assert text.splitlines()[0] == "manager: 2.0 s of main-thread samples"
    assert "client: projection" in text.splitlines()[1] and text.splitlines()[1].endswith("0.8 s    40%")
