"""Reading ahead within a deadline (:class:`Prefetch`) and the live status line of
``fbgfx play`` (:class:`Status`).
"""

from __future__ import annotations

import enum
import queue
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from ._clock import MAX_SLEEP, now

if TYPE_CHECKING:
    from ._command import Context

__all__ = ["Prefetch", "Status", "TIMED_OUT", "next_before"]


T = TypeVar("T")


class _TimedOut(enum.Enum):
    """The type of :data:`TIMED_OUT` (an enum, so type checkers narrow ``is`` tests)."""

    TIMED_OUT = "timed out"


#: What :meth:`Prefetch.get` returns when its deadline comes before the next item.
TIMED_OUT: Final = _TimedOut.TIMED_OUT


class Prefetch(Generic[T]):
    """Run an iterator in a thread, up to ``depth`` items ahead of the consumer.

    Reading and decoding (both release the GIL) overlap with showing; and the
    consumer can stop waiting at a deadline however slow the source is.
    """

    def __init__(self, source: Iterator[T], depth: int, name: str = "fbgfx-reader") -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(source,), name=name, daemon=True)
        self._thread.start()

    def _run(self, source: Iterator[T]) -> None:
        try:
            for item in source:
                if not self._put(("item", item)):
                    return
            self._put(("end", None))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(("error", e))

    def _put(self, message: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Prefetch[T]:
        return self

    def __next__(self) -> T:
        item = self.get(None)
        if item is None or item is TIMED_OUT:
            raise StopIteration
        return item

    def get(self, deadline: float | None) -> T | _TimedOut | None:
        """The next item; None after the last; :data:`TIMED_OUT` if ``deadline`` came first.

        Raises:
            BaseException: Whatever the source raised, re-raised in this thread.
        """
        if self._done:
            return None
        while True:
            wait = MAX_SLEEP if deadline is None else min(deadline - now(), MAX_SLEEP)
            if wait <= 0:
                return TIMED_OUT
            try:
                kind, value = self._queue.get(timeout=wait)
                break
            except queue.Empty:
                continue
        if kind == "item":
            return value  # type: ignore[no-any-return]
        self._done = True
        if kind == "error":
            raise value
        return None

    def close(self) -> None:
        """Stop the thread (a reader blocked on a quiet pipe is a daemon: let it be)."""
        self._stop.set()
        self._thread.join(timeout=0.2)


def next_before(items: Iterator[T], deadline: float | None) -> T | _TimedOut | None:
    """The next item, None at the end, :data:`TIMED_OUT` when ``deadline`` comes first."""
    if isinstance(items, Prefetch):
        return items.get(deadline)
    return next(items, None)


class Status:
    """frames/fps/drops on one self-rewriting stderr line, when stderr is a terminal."""

    def __init__(self, context: Context, always_summary: bool, verb: str = "played") -> None:
        self.live = sys.stderr.isatty()
        self.summary = always_summary or self.live
        self.start = now()
        self.shown = self.dropped = 0
        self._last = 0.0
        self._verb = verb
        self._context = context
        context.live = self if self.live else None

    def frame(self, dropped: bool) -> None:
        """Count a frame shown or dropped; refresh the live line twice a second."""
        if dropped:
            self.dropped += 1
        else:
            self.shown += 1
        if self.live:
            current = now()
            if current - self._last >= 0.5:
                self._last = current
                sys.stderr.write(f"\rplay: {self.text(current)}  ")
                sys.stderr.flush()

    def text(self, current: float) -> str:
        """``N frames, F fps, D dropped, S s``."""
        elapsed = max(current - self.start, 1e-9)
        return f"{self.shown} frames, {self.shown / elapsed:.1f} fps, {self.dropped} dropped, {elapsed:.1f} s"

    def finish(self) -> None:
        """End the live line with the summary (always on a terminal, else when asked)."""
        self._context.live = None
        if self.summary:
            end = "\r" if self.live else ""
            sys.stderr.write(f"{end}fbgfx: {self._verb} {self.text(now())}\n")
            sys.stderr.flush()
