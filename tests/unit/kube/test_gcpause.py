"""The collector waits while a page is decoded and projected, and resumes as it was."""

import gc

import pytest

from kruise.kube.gcpause import collection_paused


@pytest.fixture
def collector_restored():
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_paused_then_on_again_even_when_the_block_raises(collector_restored) -> None:
    gc.enable()
    with pytest.raises(ValueError, match="bad page"), collection_paused():
        assert not gc.isenabled()
        raise ValueError("bad page")
    assert gc.isenabled()


def test_a_collector_turned_off_by_someone_else_stays_off(collector_restored) -> None:
    gc.disable()
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
