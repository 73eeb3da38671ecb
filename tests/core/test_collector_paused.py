"""core.sdkimport.collector_paused: the collector off during a start-up, then frozen and back on."""

from __future__ import annotations

import gc

import pytest

from readingroom.core.sdkimport import collector_paused


@pytest.fixture
def collector():
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_frozen_and_back_on_after(collector):
    gc.enable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
        made = [[] for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)


def test_a_collector_that_was_off_stays_off(collector):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_it_resumes_when_the_start_up_fails(collector):
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("import failed")
    assert gc.isenabled()
