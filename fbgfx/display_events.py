"""What a program hears when its monitor goes, comes back, or comes back at another size.

A ``drm:`` display watches the kernel's hotplug events (:mod:`fbgfx.drm.hotplug`) and
posts a :class:`DisplayEvent` for each change: read them with
:meth:`fbgfx.Framebuffer.display_events` on the program's own thread, or have a callback
called (:meth:`fbgfx.Framebuffer.on_display_change`, on fbgfx's watcher thread).
Displays that cannot be unplugged (``/dev/fbN``, ``virtual:``) post none.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .errors import warn_on_error

__all__ = ["DisplayEvent", "DisplayEvents"]

#: Events kept for a program that does not read them: the oldest go first.
_KEPT = 256


@dataclass(frozen=True)
class DisplayEvent:
    """A change of a display's monitor.

    Attributes:
        kind: ``"disconnected"`` (the monitor is gone: drawing and flips go on into
            the buffers), ``"connected"`` (it is back, showing the latest frame at the
            same size) or ``"resized"`` (it is back at another size: the program
            should draw at ``size`` from now on; see
            :meth:`fbgfx.Framebuffer.display_events`).
        connector: The connector's name (``HDMI-A-1``).
        connected: Whether a monitor is connected after the change.
        size: The display's size (width, height) after the change.
        mode: The mode shown after the change (``"1920x1080@60"``).
    """

    kind: str
    connector: str
    connected: bool
    size: tuple[int, int]
    mode: str


class DisplayEvents:
    """A display's queue of :class:`DisplayEvent` and its callbacks (thread-safe)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[DisplayEvent] = deque(maxlen=_KEPT)
        self._callbacks: list[Callable[[DisplayEvent], object]] = []

    def post(self, event: DisplayEvent) -> None:
        """Queue ``event`` and call the callbacks (on the calling thread)."""
        with self._cond:
            self._queue.append(event)
            callbacks = list(self._callbacks)
            self._cond.notify_all()
        for callback in callbacks:
            # a program's bug must not stop fbgfx watching its monitors
            warn_on_error(functools.partial(callback, event), "a display-change callback")

    def take(self, timeout: float = 0.0) -> list[DisplayEvent]:
        """The queued events, oldest first, waiting up to ``timeout`` s for the first."""
        with self._cond:
            if not self._queue and timeout > 0:
                self._cond.wait_for(lambda: bool(self._queue), timeout)
            events = list(self._queue)
            self._queue.clear()
            return events

    def subscribe(self, callback: Callable[[DisplayEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each event; returns what removes it again."""
        with self._cond:
            self._callbacks.append(callback)

        def unsubscribe() -> None:
            with self._cond:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return unsubscribe
