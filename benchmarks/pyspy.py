"""py-spy recordings of a benchmark's real processes over one window (`benchmarks rss --py-spy DIR`).

A cache sync at 100k pods spans three processes (the emulator serving LIST and WATCH, kruise-webhook and
kruise-manager decoding and projecting), so one process's profile cannot tell which of them the wall
time waits on. Recording each over the same window with idle samples kept (`--idle`) can: a sample in
the event loop's selector is time that process spent waiting on another. `--nonblocking` keeps py-spy
from pausing the process it samples, so the timings the benchmark prints stay those of an unprofiled run
(within the CPU py-spy itself takes on a shared machine).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

RATE = 50  # samples per second: enough for a 10 s window, light on 2 shared cores
MAIN_THREAD = "MainThread"  # the event loop's thread; the others are idle executor workers here

# Where a main-thread sample's time went, first match wins. A sample's innermost frame in the selector is
# the loop waiting on a socket: the time that process spent waiting on another (or on the network).
CATEGORIES: tuple[tuple[str, str, bool], ...] = (
    # label, frame text, innermost frame only
    ("waiting (event loop idle)", "select (selectors.py)", True),
    ("emulator: list filter and page", "Reads._respond_list", False),
    ("emulator: watch", "handlers/watch.py", False),
    ("client: JSON decode", "Client.request (kube/client.py)", True),
    ("client: projection", "(kube/projection.py)", False),
    ("startup: imports", "<frozen importlib._bootstrap>", False),
)
OTHER = "other"


def executable() -> str:
    """The py-spy next to this interpreter (a venv's bin/) or on PATH; fails naming the package."""
    beside = Path(sys.executable).with_name("py-spy")
    if beside.exists():
        return str(beside)
    found = shutil.which("py-spy")
    if found is None:
        raise RuntimeError("--py-spy: no py-spy executable (pip install py-spy)")
    return found


class Recording:
    """`py-spy record --pid` of one process into a raw (collapsed stacks) file until `stop`."""

    def __init__(self, pid: int, path: Path, rate: int = RATE) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        argv = [executable(), "record", "--pid", str(pid), "--idle", "--nonblocking", "--nolineno"]
        argv += ["--threads", "--format", "raw", "--rate", str(rate), "--output", str(path)]
        self.popen = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def stop(self) -> None:
        """SIGINT makes py-spy write its file; a recording whose process already exited has ended."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(60)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


def stacks(lines: Iterable[str]) -> Counter[tuple[str, ...]]:
    """Raw py-spy output (`frame;frame;... count` per line, outermost first) as stack -> samples."""
    counts: Counter[tuple[str, ...]] = Counter()
    for line in lines:
        head, _, count = line.rstrip("\n").rpartition(" ")
        if head and count.isdigit():
            counts[tuple(head.split(";"))] += int(count)
    return counts


def category(stack: tuple[str, ...]) -> str:
    """The CATEGORIES label of one sample's stack (outermost first, the thread first), or OTHER."""
    for label, text, innermost in CATEGORIES:
        frames = stack[-1:] if innermost else stack[1:]
        if any(text in frame for frame in frames):
            return label
    return OTHER


def breakdown(counts: Counter[tuple[str, ...]]) -> tuple[int, Counter[str]]:
    """The main thread's samples and how many fell in each category (other threads are left out: the
    executor's workers sit in their queue the whole window)."""
    main = Counter({s: n for s, n in counts.items() if s and s[0].endswith(MAIN_THREAD)})
    labels: Counter[str] = Counter()
    for stack, n in main.items():
        labels[category(stack)] += n
    return sum(main.values()), labels


def report(directory: Path, rate: int = RATE) -> str:
    """Each recording in `directory` as seconds and shares of its main thread per category."""
    lines = []
    for path in sorted(directory.glob("*.txt")):
        total, labels = breakdown(stacks(path.read_text().splitlines()))
        lines.append(f"{path.stem}: {total / rate:.1f} s of main-thread samples")
        for label, n in labels.most_common():
            lines.append(f"  {label:<34}{n / rate:>7.1f} s {n / max(total, 1):>6.0%}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1])))
