"""Waiting with a deadline: every wait of the ``fbgfx`` commands goes through
:func:`now` and :func:`wait_until` here, so ``--duration`` bounds it, and tests can
stand in a clock of their own.
"""

from __future__ import annotations

import time

__all__ = ["MAX_SLEEP", "earlier", "now", "wait_until"]


# Longest single sleep: waits are cut into pieces so a deadline far away (or none)
# never reaches the platform's limit for one sleep.
MAX_SLEEP = 3600.0


def now() -> float:
    """The clock every deadline is on (``time.monotonic``)."""
    return time.monotonic()


def wait_until(deadline: float | None) -> None:
    """Sleep until ``deadline`` (see :func:`now`); forever (until Ctrl-C) when None."""
    while True:
        current = now()
        if deadline is not None and current >= deadline:
            return
        time.sleep(MAX_SLEEP if deadline is None else min(deadline - current, MAX_SLEEP))


def earlier(a: float | None, b: float | None) -> float | None:
    """The earlier of two deadlines, None meaning never."""
    return b if a is None else a if b is None else min(a, b)
