"""What a simulator holds on the machine goes when it goes, however it goes: its address slot and
its processes (a SIGKILLed owner included)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kruise.sandbox.simulator.addresses import AddressesInUse, AddressRanges, claim_addresses
from tests.kit.polling import until
from tests.kit.proctree import descendants, survivors

SPAWNER = """
import subprocess, sys, time
from kruise.sandbox.simulator.deathsignal import die_with_parent
armed = sys.argv[1] == "armed"
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)"],
    start_new_session=True,  # as a pod process: out of reach of its parent's process group
    preexec_fn=die_with_parent() if armed else None,
)
print(child.pid, flush=True)
time.sleep(600)
"""


def spawn(mode: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", SPAWNER, mode], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    return parent, child


async def test_a_child_armed_with_the_death_signal_dies_with_its_sigkilled_parent():
    parent, child = spawn("armed")
    [process] = [p for p in descendants(parent.pid) if p[0] == child]
    parent.kill()
    parent.wait()
    await until(lambda: not survivors({process}), timeout=10, message=f"child {child} outlived its parent")


def pending_signals(pid: int) -> int:
    """Signals queued for ``pid`` (thread and process wide), as a mask: bit N-1 is signal N."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)


def test_without_the_death_signal_the_child_would_outlive_it():
    """The control: the test above would fail without the parent-death signal. The kernel sends that
    signal while the parent exits, before the parent can be reaped, so once ``wait`` returns an
    unarmed child that is alive, reparented and has no SIGKILL queued will never get one."""
    parent, child = spawn("unarmed")
    [process] = [p for p in descendants(parent.pid) if p[0] == child]
    parent.kill()
    parent.wait()
    try:
        assert survivors({process}) == {process}
        assert process not in descendants(parent.pid)
        assert not pending_signals(child) & (1 << (signal.SIGKILL - 1))
    finally:
        os.kill(child, signal.SIGKILL)


CLAIMER = """
import sys, time
from pathlib import Path
from kruise.sandbox.simulator.addresses import claim_addresses
claim = claim_addresses(int(sys.argv[2]), lock_dir=Path(sys.argv[1]))
print("claimed", claim.ranges.slot, flush=True)
time.sleep(600)
"""


def test_a_claim_dies_with_its_sigkilled_owner(tmp_path: Path):
    slot = 37
    owner = subprocess.Popen(
        [sys.executable, "-c", CLAIMER, str(tmp_path), str(slot)], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    assert owner.stdout.readline().split() == ["claimed", str(slot)]
    with pytest.raises(AddressesInUse, match=f"another sandbox is using .* \\(pid {owner.pid}: "):
        claim_addresses(slot, lock_dir=tmp_path)
    owner.kill()
    owner.wait()
    claim = claim_addresses(slot, lock_dir=tmp_path)
    assert claim.ranges.slot == slot
    claim.release()


def test_a_slot_where_something_listens_is_refused_naming_the_listener(tmp_path: Path):
    slot = 38
    address = AddressRanges(slot).pod_cidr(1).replace("0/24", "2")
    with socket.socket() as listener:
        listener.bind((address, 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(AddressesInUse) as refused:
            claim_addresses(slot, lock_dir=tmp_path)
        assert f"pid {os.getpid()}" in str(refused.value)
        assert f"listens on {address}:{port}" in str(refused.value)
    claim = claim_addresses(slot, lock_dir=tmp_path)
    claim.release()
