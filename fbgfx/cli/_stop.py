"""Ending a long-running command (``mirror``, ``idle``) on ``SIGTERM`` as on its ``--duration``."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["stop_on_sigterm"]


@contextlib.contextmanager
def stop_on_sigterm(stop: threading.Event) -> Iterator[None]:
    """While inside, ``SIGTERM`` sets ``stop`` (the command then ends cleanly: it puts
    the display back and reports) instead of killing the process. Signal handlers can
    only be set from the main thread: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        del signum, frame  # the signal module's; one signal, one meaning
        stop.set()

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
