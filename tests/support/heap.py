"""A fixture for test modules that collect garbage many times: the collector looks only at
what their tests make.

In a whole-suite run a full collection walks every object the run has made (hundreds of
modules' tests, pytest's reports): a test that drops displays and collects hundreds of
times, or whose fbgfx code collects on EBUSY, spent most of its time there (a race test
of 35 s alone took 130 s late in a run). What the tests assert is unchanged: their own
objects stay in the collector's view.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def own_heap() -> Iterator[None]:
    """Collect what the run made before this module once, then freeze it out of the
    collector's view (``gc.freeze``) until the module's last test ends."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
