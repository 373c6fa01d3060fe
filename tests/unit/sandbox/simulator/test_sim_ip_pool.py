"""Per-node pod IPs: unique within the node's /24, reused last after release."""

import pytest

from kruise.sandbox.simulator.ippool import IPPool


def test_pool_hands_out_unique_addresses_until_exhausted():
    pool = IPPool("10.244.1.0/24")
    taken = [pool.take() for _ in range(253)]
    assert len(set(taken)) == 253
    assert taken[0] == "10.244.1.2"
    assert "10.244.1.1" not in taken and "10.244.1.255" not in taken
    with pytest.raises(RuntimeError, match="pod CIDR exhausted"):
        pool.take()
    pool.release("10.244.1.7")
    assert pool.take() == "10.244.1.7"


def test_released_addresses_go_to_the_back_of_the_line():
    pool = IPPool("10.244.2.0/24")
    first = pool.take()
    pool.release(first)
    assert pool.take() != first
