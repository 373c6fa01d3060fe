"""Loopback address slots: each simulator's pod and node ranges, claimed by a lock that names its owner."""

import os
from pathlib import Path

import pytest

from kruise.sandbox.simulator.addresses import (
    SLOTS,
    AddressesInUse,
    AddressRanges,
    claim_addresses,
    listening_sockets,
)
from kruise.sandbox.simulator.node import NodeSpec

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def tcp_table(tmp_path: Path, *rows: str) -> Path:
    table = tmp_path / "tcp"
    table.write_text(HEADER + "".join(rows))
    return table


def row(address: str, port: int, state: str, inode: int) -> str:
    hex_address = bytes(int(part) for part in reversed(address.split("."))).hex().upper()
    local, timers = f"{hex_address}:{port:04X}", "00000000:00000000 00:00000000 00000000"
    return f"   0: {local} 00000000:0000 {state} {timers}  1000 0 {inode} 1\n"


def test_slot_zero_keeps_the_historical_ranges():
    ranges = AddressRanges(0)
    assert ranges.pod_cidr(1) == "127.244.1.0/24"
    assert ranges.node_ip(1) == "127.18.0.2"
    node = NodeSpec(name="node-2", index=2, zone="z")
    assert (node.pod_cidr, node.internal_ip) == ("127.244.2.0/24", "127.18.0.3")


def test_slots_do_not_overlap():
    networks = [(r.pod_network, r.node_network) for r in map(AddressRanges, range(SLOTS))]
    pods = [p for p, _ in networks]
    nodes = [n for _, n in networks]
    assert len(set(pods)) == SLOTS and len(set(nodes)) == SLOTS
    assert not any(p.overlaps(n) for p in pods for n in nodes)
    assert AddressRanges(3).pod_cidr(1) == "127.241.1.0/24"
    assert AddressRanges(3).node_ip(1) == "127.18.3.2"


def test_bad_slot_and_index_are_named():
    with pytest.raises(ValueError, match=r"address slot: must be in 0\.\.39, got 40"):
        AddressRanges(SLOTS)
    with pytest.raises(ValueError, match=r"node index: must be in 0\.\.254, got 255"):
        AddressRanges(0).pod_cidr(255)


def test_claims_take_distinct_slots_and_a_taken_slot_names_its_owner(tmp_path: Path):
    table = tcp_table(tmp_path)
    first = claim_addresses(lock_dir=tmp_path, tcp_table=table)
    second = claim_addresses(lock_dir=tmp_path, tcp_table=table)
    assert (first.ranges.slot, second.ranges.slot) == (0, 1)
    with pytest.raises(AddressesInUse) as refused:
        claim_addresses(0, lock_dir=tmp_path, tcp_table=table)
    assert str(refused.value).startswith("another sandbox is using pods 127.244.0.0/16, nodes 127.18.0.0/24")
    assert f"pid {os.getpid()}" in str(refused.value)
    first.release()
    again = claim_addresses(0, lock_dir=tmp_path, tcp_table=table)
    assert again.ranges.slot == 0
    again.release()
    second.release()


def test_a_slot_with_a_listener_is_skipped(tmp_path: Path):
    table = tcp_table(tmp_path, row("127.244.1.2", 9876, "0A", 0), row("127.243.1.2", 80, "01", 0))
    claim = claim_addresses(lock_dir=tmp_path, tcp_table=table)
    assert claim.ranges.slot == 1  # slot 0 has a listener; slot 1's socket is only an established one
    with pytest.raises(AddressesInUse, match=r"listens on 127\.244\.1\.2:9876"):
        claim_addresses(0, lock_dir=tmp_path, tcp_table=table)
    claim.release()


def test_listening_sockets_reads_the_kernel_table(tmp_path: Path):
    table = tcp_table(tmp_path, row("127.18.0.2", 10250, "0A", 77), row("127.0.0.1", 5, "06", 78))
    assert list(listening_sockets(table)) == [("127.18.0.2", 10250, 77)]
    assert list(listening_sockets(tmp_path / "absent")) == []


def test_every_slot_taken_is_refused(tmp_path: Path):
    table = tcp_table(tmp_path)
    claims = [claim_addresses(lock_dir=tmp_path, tcp_table=table) for _ in range(SLOTS)]
    with pytest.raises(AddressesInUse, match=f"no free sandbox address range \\(all {SLOTS} taken\\)"):
        claim_addresses(lock_dir=tmp_path, tcp_table=table)
    for claim in claims:
        claim.release()
