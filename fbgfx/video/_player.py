"""Playing videos on a Screen: in time, with sound, overlays, loops and playlists.

A :class:`Player` runs one play:

- a decoding thread per file (:class:`_Feeder`) keeps a few decoded frames ready; when
  a file has been read to its end, the next one (or the same again, for a loop) is
  opened and starts decoding at once, so its first frames are ready before the current
  file's last frame leaves the screen: no black frame, no stall at the seam;
- each frame is converted by libswscale straight into the Screen's back buffer
  (:class:`~fbgfx.video._scale.Converter`), ``on_frame`` draws on it, and the Screen
  flips at the frame's time: the timestamps, against a monotonic clock, or against the
  sound the listener hears when there is sound (:class:`~fbgfx.video._audio.AudioOut`);
- a frame whose time is over (the next one is due) is dropped and counted, except a
  file's last.

Every file plays on one timeline: a file starts where the previous one ended.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Union

import numpy as np

from .. import convert
from ..color import resolve
from ..screen import FITS
from ._audio import AudioOut, open_audio
from ._scale import Converter
from ._source import HWDEC, Video

if TYPE_CHECKING:
    from ..screen import Screen
    from ..surface import Surface

__all__ = ["PlayOptions", "Played", "Player", "Source"]

#: What :meth:`fbgfx.Screen.play` takes: a path, an open Video, or a list of them.
Source = Union[str, "os.PathLike[str]", Video, Sequence[Union[str, "os.PathLike[str]", Video]]]

# Decoded frames kept ready per file: enough to open and start the next file meanwhile.
_DEPTH = 8
# Longest sleep while waiting for a frame's time (the sound's clock is read between).
_TICK = 0.01


class Played(NamedTuple):
    """What a play did.

    Attributes:
        shown: Frames shown.
        dropped: Frames skipped because their time was over (the display or the
            decoder could not keep up).
        av_offset: How far the pictures were from the sound, in seconds, or None when
            no sound was heard: (mean, largest absolute value) over the frames shown
            while sound played, each the frame's time minus the time of the sound
            heard when it was shown (the samples written less the device's queued
            delay). Positive: the picture came early. The first frames, shown while
            the device starts sounding, are left out (see :data:`SETTLE`).
    """

    shown: int
    dropped: int
    av_offset: tuple[float, float] | None = None


#: Frames shown with sound before the A/V offset counts in :attr:`Played.av_offset`.
SETTLE = 3


@dataclass(frozen=True)
class PlayOptions:
    """How :meth:`fbgfx.Screen.play` plays; its keyword arguments, which document
    each field, in one value (for :class:`Player` and :func:`fbgfx.video.play`)."""

    box: Sequence[int] | None = None
    fit: str = "fit"
    loop: bool = False
    duration: float | None = None
    audio: bool = True
    on_frame: Callable[[Surface, float], Any] | None = None
    fps: float | None = None
    hwdec: str = "auto"
    audio_device: str = "default"
    threads: int | None = None
    background: Any = "black"

    def check(self) -> None:
        """Check the options before a play starts (``box`` is checked against the screen).

        Raises:
            ValueError: An unknown ``fit`` or ``hwdec``, or a negative ``duration`` or ``fps``.
            TypeError: ``duration`` or ``fps`` is not a number.
        """
        if self.fit not in FITS:
            raise ValueError(f"fit must be one of {', '.join(FITS)}, not {self.fit!r}")
        if self.hwdec not in HWDEC:
            raise ValueError(f"hwdec must be one of {', '.join(HWDEC)}, not {self.hwdec!r}")
        _check_number("duration", self.duration, "seconds >= 0")
        _check_number("fps", self.fps, ">= 0")


def _check_number(name: str, value: object, what: str) -> None:
    """A one-line error for ``value`` that is not a number ``>= 0`` (or None)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be {what} (a number), not {type(value).__name__} {value!r}")
    if not value >= 0:
        raise ValueError(f"{name} must be {what}, not {value!r}")


_DEFAULTS = PlayOptions()


class _End:
    """A file's last frame has been handed out."""


_END = _End()


class _Feeder:
    """Opens one file (in its thread) and decodes it, a few frames ahead.

    Args:
        make: Opens the file (or hands over one already open).
        offset: Where on the play's timeline the file starts.
        audio: Where its sound goes, or None.
    """

    def __init__(
        self, make: Callable[[threading.Event], Video], offset: float, audio: AudioOut | None, fps: float | None
    ) -> None:
        self.offset, self.audio, self.fps = offset, audio, fps
        self.video: Video | None = None
        self.end: float | None = None  # the file's length, once it is read to the end
        self.done = threading.Event()  # read to the end (or failed)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=_DEPTH)
        self._back: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(make,), name="fbgfx-video-decoder", daemon=True)
        self._thread.start()

    def _run(self, make: Callable[[threading.Event], Video]) -> None:
        try:
            self.video = video = make(self._stop)
            if self.audio is not None:
                self.audio.new_source()
            with contextlib.closing(video.frames()) as frames:
                times = self._feed(frames)
            if times is None:
                return  # the play stopped
            last, previous = times
            period = (last - previous) if last is not None and previous is not None else None
            if not period or period <= 0:
                period = 1 / video.fps if video.fps else 0.04
            self.end = (last or 0.0) + period
            if video.errors:
                warnings.warn(
                    f"{video.path}: {video.errors} damaged packet(s) skipped (a truncated or corrupt file)",
                    RuntimeWarning,
                    stacklevel=2,
                )
            self.done.set()
            self._put(_END)
        except BaseException as e:  # noqa: BLE001 - handed to the player's thread, raised there
            self.done.set()
            self._put(e)

    def _feed(self, frames: Iterator[tuple[str, Any, float]]) -> tuple[float | None, float | None] | None:
        """Queue the pictures, hand the sound over; the times of the last two pictures,
        or None when the play stopped first."""
        last = previous = None
        for kind, frame, t in frames:
            if self._stop.is_set():
                return None
            if kind == "audio":
                if self.audio is not None:
                    self.audio.put(frame, self.offset + t)
                continue
            if not self._put((frame, t)):
                return None
            previous, last = last, t
        return last, previous

    def _put(self, item: Any) -> bool:
        """Queue ``item``, waiting for room; False when the play stopped first."""
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._queue.put(item, timeout=0.1)
                return True
        return False

    def get(self, deadline: float | None) -> Any:
        """The next (frame, t), :data:`_END`, or None when ``deadline`` (monotonic) came first."""
        if self._back:
            return self._back.pop()
        try:
            item = self._queue.get_nowait()
        except queue.Empty:
            item = self._wait(deadline)
            if item is None:
                return None
        if isinstance(item, BaseException):
            raise item
        return item

    def _wait(self, deadline: float | None) -> Any:
        while True:
            wait = 3600.0 if deadline is None else deadline - time.monotonic()
            if wait <= 0:
                return None
            try:
                return self._queue.get(timeout=min(wait, 3600.0))
            except queue.Empty:
                continue

    def push_back(self, item: Any) -> None:
        """Hand ``item`` out again on the next :meth:`get`."""
        self._back.append(item)

    def close(self, close_video: bool) -> None:
        """Stop decoding; close the file when this play opened it."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        if close_video and self.video is not None and not self._thread.is_alive():
            self.video.close()


class Player:
    """One play of one or more videos on a Screen (see :meth:`fbgfx.Screen.play`)."""

    def __init__(self, screen: Screen, source: Source, options: PlayOptions = _DEFAULTS) -> None:
        options.check()
        if isinstance(source, (str, os.PathLike, Video, bytes, bytearray, memoryview)) or not isinstance(
            source, Sequence
        ):
            items: list[Any] = [source]  # a bytes source is refused below, not read as numbers
        else:
            items = list(source)
        if not items:
            raise ValueError("nothing to play: the playlist is empty")
        for item in items:
            if not isinstance(item, (str, os.PathLike, Video)):
                raise TypeError(f"play takes paths or fbgfx.video.Video objects, not {type(item).__name__}")
            if isinstance(item, Video) and item.closed:
                raise ValueError(f"{item.path}: the Video is closed")
        self.screen, self.items, self.options = screen, items, options
        self.box = _check_box(options.box, screen.width, screen.height)
        self.background = resolve(options.background, screen.format, screen.fb.palette).value
        # One libswscale thread, set explicitly: sws_scale(), the call that writes into
        # memory fbgfx owns, converts in the calling thread whatever "threads" says
        # (measured: no gain); the concurrency is the decoder's frame threads working
        # ahead while this thread converts and flips.
        self.sws_threads = 1

    def _opener(self, index: int) -> Callable[[threading.Event], Video]:
        """Opens item ``index`` (a FIFO's wait for its writer ends when the Event is set)."""
        item = self.items[index]
        if isinstance(item, Video):
            return lambda _cancel: item  # each pass over a Video reads the file on its own
        path = os.fspath(item)
        return lambda cancel: Video(path, hwdec=self.options.hwdec, threads=self.options.threads, cancel=cancel)

    def run(  # noqa: C901 - one timeline, read top down
        self, progress: Callable[[bool], None] | None = None, opened: Callable[[Video], None] | None = None
    ) -> Played:
        """Play until the last file ends (never, with ``loop``), or ``duration``.

        Args:
            progress: Called with ``dropped`` (bool) for every frame.
            opened: Called with each file's Video as its play begins (in the decoding
                thread), e.g. to say which decoder it got.
        """
        fps = self.options.fps
        start = time.monotonic()
        stop = None if self.options.duration is None else start + self.options.duration
        order = [(i, 0) for i in range(len(self.items))]
        audio_out: AudioOut | None = None
        feeders: list[_Feeder] = []
        converters: dict[tuple[int, int, int], tuple[Converter, tuple[int, int, int, int]]] = {}
        owned: list[bool] = []  # per feeder: whether this play opened its file
        shown = dropped = 0
        sync = _Sync()
        try:
            # the first file opens here: a file that cannot play fails before the screen changes
            video = self._open_first(stop)
            if video is None:
                return Played(0, 0, None)  # duration ended while a FIFO waited for its writer
            owned.append(not isinstance(self.items[0], Video))
            if self.options.audio and fps is None and video.has_audio:
                audio_out = open_audio(self.options.audio_device, video.audio_rate)
            if opened is not None:
                opened(video)
            current = _Feeder(lambda _cancel: video, 0.0, audio_out, fps)
            feeders.append(current)
            position = 1
            upcoming: _Feeder | None = None
            surface = self.screen.surface
            array = surface.array
            clock: _Clock | None = None  # the timeline's time, from the first frame shown
            index = 0  # frames handed out, for a fixed fps
            period = 1 / fps if fps else 0.0
            prepared_for: Video | None = None
            layout: tuple[Converter, tuple[int, int, int, int]] | None = None
            while True:
                item = current.get(stop)
                if item is None:
                    break  # duration over
                if current.done.is_set() and upcoming is None:
                    nxt = self._next(order, position)
                    if nxt is not None:
                        i, _round = nxt
                        offset = current.offset + (current.end or 0.0)
                        upcoming = _Feeder(_telling(self._opener(i), opened), offset, audio_out, fps)
                        feeders.append(upcoming)
                        owned.append(not isinstance(self.items[i], Video))
                        position += 1
                if item is _END:
                    if upcoming is None:
                        if clock is not None and current.end is not None and fps != 0:
                            end = current.offset + current.end if fps is None else index * period
                            self._wait(clock, end, stop)
                        break
                    # the file just played is closed now, not at the end: a loop runs for days
                    finished, current, upcoming = current, upcoming, None
                    at = feeders.index(finished)
                    finished.close(owned.pop(at))
                    del feeders[at]
                    continue
                frame, t = item
                video_now = current.video
                assert video_now is not None
                if video_now is not prepared_for:
                    key = (video_now.width, video_now.height, video_now.rotation)
                    if key not in converters:
                        converters[key] = self._converter(array, video_now)
                    layout = converters[key]
                    prepared_for = video_now
                    self._bars(array, layout[1])
                assert layout is not None
                converter, rect = layout
                when = index * period if fps else current.offset + t
                index += 1
                if clock is not None and fps != 0:
                    frame_period = period or (1 / video_now.fps if video_now.fps else 0.04)
                    if clock.now() >= when + frame_period and not self._last(current, upcoming):
                        dropped += 1
                        if progress is not None:
                            progress(True)
                        continue
                converter(frame)
                if self.options.on_frame is not None:
                    if rect != self.box:
                        self._bars(array, rect)
                    self.options.on_frame(surface, when)
                self.screen.mark_dirty(rect)
                if clock is not None and fps != 0:
                    if not self._wait(clock, when, stop):
                        break
                self.screen.flip()
                if clock is None:
                    clock = _Clock(time.monotonic() - when, audio_out)
                    if audio_out is not None:
                        audio_out.start()
                elif audio_out is not None:
                    sync.add(when, audio_out.position())
                shown += 1
                if progress is not None:
                    progress(False)
        finally:
            if audio_out is not None:
                audio_out.close()
            for feeder, own in zip(feeders, owned):
                feeder.close(own)
            for converter, _rect in converters.values():
                converter.close()
        return Played(shown, dropped, sync.result())

    # -- helpers ------------------------------------------------------------------------------------

    def _open_first(self, stop: float | None) -> Video | None:
        """The first item, opened in this thread; None when ``stop`` came first (a FIFO)."""
        cancel = threading.Event()
        timer = None if stop is None else threading.Timer(max(stop - time.monotonic(), 0.0), cancel.set)
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            return self._opener(0)(cancel)
        except TimeoutError:
            if cancel.is_set():
                return None
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _next(self, order: list[tuple[int, int]], position: int) -> tuple[int, int] | None:
        """(item index, round) of the file after ``position`` ones, or None at the end."""
        count = len(self.items)
        if position < count:
            return order[position]
        if not self.options.loop:
            return None
        return position % count, position // count

    def _last(self, current: _Feeder, upcoming: _Feeder | None) -> bool:
        """True when the frame just taken is the play's last (never dropped)."""
        if upcoming is not None or not current.done.is_set():
            return False  # another file follows, or this one goes on
        item = current.get(time.monotonic())
        if item is None:
            return False
        current.push_back(item)
        return item is _END

    def _wait(self, clock: _Clock, when: float, stop: float | None) -> bool:
        """Sleep until the timeline reaches ``when``; False when ``stop`` came first."""
        while True:
            now = clock.now()
            if stop is not None and time.monotonic() >= stop:
                return False
            if now >= when:
                return True
            sleep = when - now
            if clock.audio_out is not None:
                sleep = min(sleep, _TICK)
            if stop is not None:
                sleep = min(sleep, max(stop - time.monotonic(), 0.0))
            time.sleep(sleep)

    def _converter(self, array: np.ndarray, video: Video) -> tuple[Converter, tuple[int, int, int, int]]:
        """The converter for ``video``'s frames, and the rectangle they are shown in."""
        size, rect, crop = _layout(video.width, video.height, self.box, self.options.fit)
        x0, y0, x1, y1 = rect
        screen = self.screen
        converter = Converter(
            array[y0:y1, x0:x1], screen.format, screen.fb.palette, size, crop, video.rotation // 90, self.sws_threads
        )
        return converter, rect

    def _bars(self, array: np.ndarray, rect: tuple[int, int, int, int]) -> None:
        """Fill the box around the picture with the background."""
        bx0, by0, bx1, by1 = self.box
        x0, y0, x1, y1 = rect
        for r in ((bx0, by0, bx1, y0), (bx0, y1, bx1, by1), (bx0, y0, x0, y1), (x1, y0, bx1, y1)):
            if r[0] < r[2] and r[1] < r[3]:
                convert.fill(array[r[1] : r[3], r[0] : r[2]], self.background)
                self.screen.mark_dirty(r)


def _telling(
    make: Callable[[threading.Event], Video], opened: Callable[[Video], None] | None
) -> Callable[[threading.Event], Video]:
    """``make``, calling ``opened`` with what it opened."""
    if opened is None:
        return make

    def make_and_tell(cancel: threading.Event) -> Video:
        video = make(cancel)
        opened(video)
        return video

    return make_and_tell


class _Sync:
    """The A/V offsets of the frames shown with sound (see :attr:`Played.av_offset`)."""

    def __init__(self) -> None:
        self.count, self.total, self.worst = 0, 0.0, 0.0

    def add(self, when: float, heard: float | None) -> None:
        """A frame of time ``when`` is on screen while the sound of time ``heard`` is heard."""
        if heard is None:
            return  # the sound has not started, or has ended
        self.count += 1
        if self.count > SETTLE:
            offset = when - heard
            self.total += offset
            self.worst = max(self.worst, abs(offset))

    def result(self) -> tuple[float, float] | None:
        """(mean, largest absolute value), or None when no frame counted."""
        counted = self.count - SETTLE
        return (self.total / counted, self.worst) if counted > 0 else None


class _Clock:
    """The timeline's time: the sound's while it is heard, else the monotonic clock's.

    When the sound stops (it ended, or ran dry), the monotonic clock goes on from the
    sound's last time: a sound card a little slower or faster than its nominal rate
    has moved the pictures off the monotonic clock, and they must not jump back.

    Args:
        base: Monotonic time of the timeline's 0.
        audio_out: The sound, or None.
    """

    def __init__(self, base: float, audio_out: AudioOut | None) -> None:
        self.base, self.audio_out = base, audio_out

    def now(self) -> float:
        """The timeline's time now."""
        now = time.monotonic() - self.base
        if self.audio_out is not None:
            heard = self.audio_out.position()
            if heard is not None:
                self.base -= heard - now  # from here on, the monotonic clock agrees
                return heard
        return now


def _check_box(box: Sequence[int] | None, width: int, height: int) -> tuple[int, int, int, int]:
    """``box`` as (x0, y0, x1, y1) inside the screen (x1, y1 exclusive); None: the screen."""
    if box is None:
        return 0, 0, width, height
    try:
        x0, y0, x1, y1 = (int(v) for v in box)
    except (TypeError, ValueError):
        raise TypeError(f"box must be (x0, y0, x1, y1) integers, not {box!r}") from None
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    if x0 >= x1 or y0 >= y1:
        raise ValueError(f"box {tuple(box)!r} has no pixels on the {width}x{height} screen")
    return x0, y0, x1, y1


def _layout(
    width: int, height: int, box: tuple[int, int, int, int], fit: str
) -> tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int]]:
    """Where a ``width`` x ``height`` picture goes in ``box``: (scaled size, the shown
    rectangle on the screen, the shown part's offset in the scaled picture)."""
    bx0, by0, bx1, by1 = box
    bw, bh = bx1 - bx0, by1 - by0
    if fit == "stretch":
        sw, sh = bw, bh
    elif fit == "center":
        sw, sh = width, height
    else:
        scale = (min if fit == "fit" else max)(bw / width, bh / height)
        sw, sh = max(1, round(width * scale)), max(1, round(height * scale))
        if fit == "fit":
            sw, sh = min(sw, bw), min(sh, bh)
    x, y = bx0 + (bw - sw) // 2, by0 + (bh - sh) // 2
    rect = (max(x, bx0), max(y, by0), min(x + sw, bx1), min(y + sh, by1))
    return (sw, sh), rect, (rect[0] - x, rect[1] - y)
