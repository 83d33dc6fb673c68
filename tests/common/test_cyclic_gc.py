"""Pausing the cyclic collector never leaves it off: it comes back as it was, nested or not."""
from __future__ import annotations

import gc

import pytest

from common.cyclic_gc import cyclic_gc_paused


def test_the_collector_is_off_inside_and_back_on_after_even_on_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with cyclic_gc_paused():
            assert not gc.isenabled()
            with cyclic_gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the inner pause does not switch it back on early
            raise RuntimeError
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
