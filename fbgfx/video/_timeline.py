"""A play's timeline: its sources one after the other (and again, for a loop), each
decoded a few frames ahead in a thread of its own.

:class:`Timeline` hands out the play's frames in order with their times on one
timeline (a source starts where the previous one ended), and :data:`SEAM` between two
sources. When a source has been read to its end, the next one is opened and starts
decoding at once, so its first frames are ready before the current source's last
frame leaves the screen: no black frame, no stall at the seam.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._audio import AudioOut
from ._frames import Frame, FramePass, FrameSource

__all__ = ["END", "SEAM", "Timeline"]

# Decoded frames kept ready per source: enough to open and start the next one meanwhile.
DEPTH = 8
# Longest single wait on a queue: a deadline far away never reaches the platform's limit.
_MAX_WAIT = 3600.0


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: The play's last frame has been handed out.
END = _Marker("END")
#: The next frame is the first of another source (or another round).
SEAM = _Marker("SEAM")
_DONE = _Marker("DONE")  # one source's last frame has been handed out


class _Feeder:
    """Opens one source (in its thread) and reads it, a few frames ahead.

    Args:
        source: What to read.
        offset: Where on the play's timeline it starts.
        audio: Where its sound goes, or None.
        first: The pass, when already opened (the play's first source).
        opened: Told of each pass opened (``--verbose``).
    """

    def __init__(
        self,
        source: FrameSource,
        offset: float,
        audio: AudioOut | None,
        first: FramePass | None = None,
        opened: Callable[[FramePass], None] | None = None,
    ) -> None:
        self.source, self.offset, self.audio = source, offset, audio
        self.opened: FramePass | None = first
        self.end: float | None = None  # the source's length, once read to the end
        self.done = threading.Event()  # read to the end (or failed)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=DEPTH)
        self._back: list[Any] = []
        self._stop = threading.Event()
        self._closed = False  # the pass
        self._tell = opened
        self._thread = threading.Thread(target=self._run, name="fbgfx-video-decoder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._read()
        finally:
            if self._stop.is_set():  # close() may have stopped waiting for this thread
                self._close_pass()

    def _read(self) -> None:
        try:
            if self.opened is None:
                self.opened = self.source.open(self._stop)
                if self._tell is not None:
                    self._tell(self.opened)
            if self.audio is not None:
                self.audio.new_source()
            with contextlib.closing(self.opened.frames()) as frames:  # type: ignore[type-var]
                last = self._feed(frames)
            if last is None:
                return  # the play stopped
            self.end = last.t + (last.duration if last.duration is not None else 0.04)
            self._warn_damage()
            self.done.set()
            self._put(_DONE)
        except BaseException as e:  # noqa: BLE001 - handed to the player's thread, raised there
            self.done.set()
            self._put(e)

    def _feed(self, frames: Iterator[Frame]) -> Frame | None:
        """Queue the pictures, hand the sound over; the last picture (a Frame at t=0 and
        no duration when there was none), or None when the play stopped first."""
        last = Frame("none", None, 0.0, 0.0)
        previous: Frame | None = None
        for frame in frames:
            if self._stop.is_set():
                return None
            if frame.kind == "audio":
                if self.audio is not None:
                    self.audio.put(frame.data, self.offset + frame.t)
                continue
            if not self._put(frame):
                return None
            previous, last = last, frame
        if last.duration is None and previous is not None and last.t > previous.t:
            last = Frame(last.kind, None, last.t, last.t - previous.t)
        return last

    def _warn_damage(self) -> None:
        video = self.opened.video if self.opened is not None else None
        if video is not None and video.errors:
            warnings.warn(
                f"{video.path}: {video.errors} damaged packet(s) skipped (a truncated or corrupt file)",
                RuntimeWarning,
                stacklevel=2,
            )

    def _put(self, item: Any) -> bool:
        """Queue ``item``, waiting for room; False when the play stopped first."""
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._queue.put(item, timeout=0.1)
                return True
        return False

    def get(self, deadline: float | None) -> Any:
        """The next Frame, :data:`_DONE`, or None when ``deadline`` (monotonic) came first."""
        if self._back:
            return self._back.pop()
        while True:
            wait = _MAX_WAIT if deadline is None else min(deadline - time.monotonic(), _MAX_WAIT)
            if wait <= 0:
                return None
            try:
                item = self._queue.get(timeout=wait)
                break
            except queue.Empty:
                continue
        if isinstance(item, BaseException):
            raise item
        return item

    def push_back(self, item: Any) -> None:
        """Hand ``item`` out again on the next :meth:`get`."""
        self._back.append(item)

    def close(self) -> None:
        """Stop reading and close the pass: here, or by the thread as it ends when a step of
        its (a slow decode, a FIFO's read) outlasts the wait."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        if not self._thread.is_alive():
            self._close_pass()

    def _close_pass(self) -> None:
        """Close the pass once (the thread has left it)."""
        if self.opened is not None and not self._closed:
            self._closed = True
            self.opened.close()


class Timeline:
    """The frames of ``sources`` in order, then again and again with ``loop``.

    Args:
        sources: What plays, in order.
        loop: Play them again after the last.
        audio: Where the sound goes, or None.
        first: The first source's pass, opened by the caller (so that a source that
            cannot play fails before the screen changes).
        opened: Told of each pass opened after the first.
    """

    def __init__(
        self,
        sources: Sequence[FrameSource],
        loop: bool,
        audio: AudioOut | None,
        first: FramePass,
        opened: Callable[[FramePass], None] | None = None,
    ) -> None:
        self.sources, self.loop, self.audio, self._tell = sources, loop, audio, opened
        self.current = _Feeder(sources[0], 0.0, audio, first=first)
        self.upcoming: _Feeder | None = None
        self._position = 1  # sources started so far

    @property
    def offset(self) -> float:
        """Where the current source starts on the timeline."""
        return self.current.offset

    @property
    def pass_(self) -> FramePass | None:
        """The current source's pass (None until its thread opened it)."""
        return self.current.opened

    def get(self, deadline: float | None) -> Any:
        """The next Frame (its ``t`` on the timeline), :data:`SEAM`, :data:`END`, or None
        when ``deadline`` (monotonic) came first."""
        item = self.current.get(deadline)
        if item is None:
            return None
        self._start_next()
        if item is not _DONE:
            return Frame(item.kind, item.data, self.current.offset + item.t, item.duration)
        if self.upcoming is None:
            return END
        # the source just played is closed now, not at the end: a loop runs for days
        finished, self.current, self.upcoming = self.current, self.upcoming, None
        finished.close()
        return SEAM

    def is_last(self, deadline: float | None) -> bool:
        """True when the frame just handed out is the play's last (it is never dropped):
        no source follows, and the next item of this one is its end (waited for until
        ``deadline``, as a pipe's next frame may be slow to come)."""
        if self.upcoming is not None or self.loop or self._position < len(self.sources):
            return False
        item = self.current.get(deadline)
        if item is None:
            return False
        self.current.push_back(item)
        return item is _DONE

    def end(self) -> float | None:
        """The timeline's time where the current source ends, once it has been read."""
        end = self.current.end
        return None if end is None else self.current.offset + end

    def _start_next(self) -> None:
        """Once the current source is read to its end, open the next and start reading it."""
        if not self.current.done.is_set() or self.upcoming is not None:
            return
        count = len(self.sources)
        if self._position >= count and not self.loop:
            return
        source = self.sources[self._position % count]
        self._position += 1
        offset = self.current.offset + (self.current.end or 0.0)
        self.upcoming = _Feeder(source, offset, self.audio, opened=self._tell)

    def close(self) -> None:
        """Stop every thread and close every pass."""
        for feeder in (self.current, self.upcoming):
            if feeder is not None:
                feeder.close()
