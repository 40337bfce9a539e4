"""Playing frame sources on a Screen: in time, with sound, overlays, loops and playlists.

A :class:`Player` runs one play of any :class:`~fbgfx.video._frames.FrameSource` (video
files, Pillow animations, raw frames from a pipe):

- the :class:`~fbgfx.video._timeline.Timeline` reads the sources one after the other,
  each a few frames ahead in a thread, on one timeline (a source starts where the
  previous one ended);
- the present loop here shows each frame at its time: a video frame is converted by
  libswscale straight into the Screen's back buffer
  (:class:`~fbgfx.video._scale.Converter`), ``on_frame`` draws on it, and the Screen
  flips; an RGB frame goes through :meth:`fbgfx.Screen.present`. Its rules, written
  once: time runs from the first picture shown (on the sound the listener hears when
  there is sound, :class:`~fbgfx.video._audio.AudioOut`, else a monotonic clock); a
  frame whose time is over is dropped, never the play's last; the play stops at
  ``duration``, also in the middle of a long frame or of a wait for a slow source.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Union

from .. import convert
from .._screen.fit import FITS, place
from ..color import resolve
from ._audio import AudioOut, open_audio
from ._frames import AnimationSource, FileSource, Frame, FramePass, FrameSource, is_picture
from ._scale import Converter
from ._source import HWDEC, Video
from ._timeline import END, SEAM, Timeline
from ._yuv import YuvPainter, YuvTarget

if TYPE_CHECKING:
    from ..screen import Screen
    from ..surface import Surface

__all__ = ["PlayOptions", "Played", "Player", "Source"]

#: What :meth:`fbgfx.Screen.play` takes: a path, an open Video, a frame source, or a list of them.
Source = Union[
    str, "os.PathLike[str]", Video, FrameSource, Sequence[Union[str, "os.PathLike[str]", Video, FrameSource]]
]

# A live source's frame this late (a paused pipe) restarts the time instead of being dropped.
_STALL = 1.0
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


class Player:
    """One play of one or more sources on a Screen (see :meth:`fbgfx.Screen.play`).

    Args:
        screen: Where.
        source: A path, a :class:`~fbgfx.video.Video`, a frame source, or a list.
        options: How (see :class:`PlayOptions`).
        yuv: The display plane that shows ``screen`` (a layer's), when it may show
            video frames in YUV (:mod:`fbgfx.video._yuv`); ``yuv_code`` and
            ``yuv_reason`` then say how the play went.
    """

    def __init__(
        self, screen: Screen, source: Source, options: PlayOptions = _DEFAULTS, *, yuv: YuvTarget | None = None
    ) -> None:
        options.check()
        self.yuv = yuv
        #: After :meth:`run` with ``yuv``: the plane format the video frames went in
        #: (``"NV12"``, ``"YU12"``), or None (RGB) and ``yuv_reason`` says why.
        self.yuv_code: str | None = None
        self.yuv_reason = ""
        self.sources = [_as_source(item, options) for item in _items(source)]
        self.screen, self.options = screen, options
        self.box = _check_box(options.box, screen.width, screen.height)
        for source in self.sources:  # a source that can make its frames as small as shown
            fit_to = getattr(source, "fit_to", None)
            if fit_to is not None:
                fit_to(screen.width, screen.height, options.fit)
        self.background = resolve(options.background, screen.format, screen.fb.palette).value

    def run(
        self, progress: Callable[[bool], None] | None = None, opened: Callable[[Video], None] | None = None
    ) -> Played:
        """Play until the last source ends (never, with ``loop``), or ``duration``.

        Args:
            progress: Called with ``dropped`` (bool) for every frame.
            opened: Called with each file's Video as its play begins (in the decoding
                thread for all but the first), e.g. to say which decoder it got.
        """
        stop = None if self.options.duration is None else time.monotonic() + self.options.duration
        first = self._open_first(stop)
        if first is None:
            return Played(0, 0, None)  # duration ended while a FIFO waited for its writer
        tell = _telling(opened)
        if tell is not None:
            tell(first)
        audio_out = self._audio(first)
        try:
            timeline = Timeline(self.sources, self.options.loop, audio_out, first, tell)
        except BaseException:
            first.close()
            if audio_out is not None:
                audio_out.close()
            raise
        presenter = _Presenter(self, timeline, audio_out, stop, progress)
        try:
            return presenter.run()
        finally:
            if audio_out is not None:
                audio_out.close()
            timeline.close()
            painter = presenter.painter
            if isinstance(painter, YuvPainter):
                self.yuv_code, self.yuv_reason = painter.used, painter.reason
            painter.close()

    def _open_first(self, stop: float | None) -> FramePass | None:
        """The first source, opened in this thread (a source that cannot play fails
        before the screen changes); None when ``stop`` came first (a FIFO)."""
        cancel = threading.Event()
        timer = None if stop is None else threading.Timer(max(stop - time.monotonic(), 0.0), cancel.set)
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            return self.sources[0].open(cancel)
        except TimeoutError:
            if cancel.is_set():
                return None
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _audio(self, first: FramePass) -> AudioOut | None:
        """The sound output, when the first file has sound and the play is timed by it."""
        video = first.video
        if not (self.options.audio and self.options.fps is None and video is not None and video.has_audio):
            return None
        return open_audio(self.options.audio_device, video.audio_rate)


def _items(source: Source) -> list[Any]:
    """The playlist: one item, or each of a sequence (bytes are one item, refused later)."""
    if isinstance(source, (str, os.PathLike, Video, bytes, bytearray, memoryview)) or not isinstance(source, Sequence):
        items: list[Any] = [source]
    else:
        items = list(source)
    if not items:
        raise ValueError("nothing to play: the playlist is empty")
    return items


def _as_source(item: Any, options: PlayOptions) -> FrameSource:
    """A playlist item as a frame source: a picture or animation through Pillow, any other
    path or a Video through FFmpeg."""
    if isinstance(item, Video) and item.closed:
        raise ValueError(f"{item.path}: the Video is closed")
    if isinstance(item, (str, os.PathLike)) and is_picture(os.fspath(item)):
        return AnimationSource(os.fspath(item), loop=options.loop)
    if isinstance(item, (str, os.PathLike, Video)):
        return FileSource(item, options.hwdec, options.threads)
    if callable(getattr(item, "open", None)) and isinstance(getattr(item, "name", None), str):
        return item  # type: ignore[no-any-return]
    raise TypeError(f"play takes paths, fbgfx.video.Video objects or frame sources, not {type(item).__name__}")


def _telling(opened: Callable[[Video], None] | None) -> Callable[[FramePass], None] | None:
    """``opened`` told of each pass that reads a video file."""
    if opened is None:
        return None

    def tell(opened_pass: FramePass) -> None:
        if opened_pass.video is not None:
            opened(opened_pass.video)

    return tell


class _Presenter:
    """The present loop: each frame of the timeline shown at its time (see the module)."""

    def __init__(
        self,
        player: Player,
        timeline: Timeline,
        audio_out: AudioOut | None,
        stop: float | None,
        progress: Callable[[bool], None] | None,
    ) -> None:
        self.timeline, self.audio_out, self.stop, self.progress = timeline, audio_out, stop, progress
        self.fps = player.options.fps
        self.period = 1 / self.fps if self.fps else 0.0
        rgb = _Painter(player)
        self.painter: _Painter | YuvPainter = rgb
        screen = player.screen
        if player.yuv is not None and player.box == (0, 0, screen.width, screen.height):
            # YUV pictures are the plane's whole size: a play in part of a layer stays RGB
            self.painter = YuvPainter(rgb, player.yuv, player.box, player.options.fit, _layout)
        self.clock: _Clock | None = None  # the timeline's time, from the first picture shown
        self.index = self.shown = self.dropped = 0
        self.sync = _Sync()

    def run(self) -> Played:
        """Show frames until the timeline ends or ``stop``."""
        while True:
            item = self.timeline.get(self.stop)
            if item is None:
                break  # duration over
            if item is SEAM:
                continue
            if item is END:
                self._hold_last()
                break
            if not self._show(item):
                break
        return Played(self.shown, self.dropped, self.sync.result())

    def _timed(self) -> bool:
        """Whether frames wait for their time (not before the first, nor at fps=0)."""
        return self.clock is not None and self.fps != 0

    def _show(self, frame: Frame) -> bool:
        """Show ``frame`` at its time, or drop it when that is over; False when ``stop`` came first."""
        when, period = (self.index * self.period, self.period) if self.fps else (frame.t, frame.duration or 0.04)
        self.index += 1
        if self._timed() and self._late(when, period):
            self._count(dropped=True)
            return True
        self.painter.prepare(frame, self.timeline.pass_, when)
        if self._timed() and not self._wait(when):
            return False
        self.painter.show()
        if self.clock is None:  # time runs from the first picture
            self.clock = _Clock(time.monotonic() - when, self.audio_out)
            if self.audio_out is not None:
                self.audio_out.start()
        elif self.audio_out is not None:
            self.sync.add(when, self.audio_out.position())
        self._count(dropped=False)
        return True

    def _late(self, when: float, period: float) -> bool:
        """Whether the frame of time ``when`` is over (the next is due) and may be dropped:
        never the play's last; a live source's frame after a stall restarts the time."""
        assert self.clock is not None
        now = self.clock.now()
        pass_ = self.timeline.pass_
        if pass_ is not None and pass_.live and now - when > _STALL:
            self.clock.base += now - when  # a paused pipe: start timing afresh from here
            return False
        return now >= when + period and not self.timeline.is_last(self.stop)

    def _hold_last(self) -> None:
        """The last frame lasts its time too (a 2 s animation takes 2 s)."""
        if not self._timed():
            return
        end = self.timeline.end() if self.fps is None else self.index * self.period
        if end is not None:
            self._wait(end)

    def _wait(self, when: float) -> bool:
        """Sleep until the timeline reaches ``when``; False when ``stop`` came first."""
        clock, stop = self.clock, self.stop
        assert clock is not None
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

    def _count(self, dropped: bool) -> None:
        if dropped:
            self.dropped += 1
        else:
            self.shown += 1
        if self.progress is not None:
            self.progress(dropped)


class _Painter:
    """Puts a frame on the screen: a video frame converted into the back buffer (in the
    box, with bars and ``on_frame``) then flipped; an RGB frame through present(), or
    drawn into the box (with ``on_frame``) and flipped."""

    def __init__(self, player: Player) -> None:
        self.screen, self.options, self.box, self.background = (
            player.screen,
            player.options,
            player.box,
            player.background,
        )
        self.array = player.screen.surface.array
        self.converters: dict[tuple[int, int, int], tuple[Converter, tuple[int, int, int, int]]] = {}
        self.prepared_for: Video | None = None
        self.layout: tuple[Converter, tuple[int, int, int, int]] | None = None
        self.rgb: Any = None
        self.when = 0.0
        # One libswscale thread, set explicitly: sws_scale(), the call that writes into
        # memory fbgfx owns, converts in the calling thread whatever "threads" says
        # (measured: no gain); the concurrency is the decoder's frame threads working
        # ahead while this thread converts and flips.
        self.sws_threads = 1

    def prepare(self, frame: Frame, pass_: FramePass | None, when: float) -> None:
        """Make ``frame`` the next picture (shown by :meth:`show`)."""
        if frame.kind == "rgb":
            self.rgb, self.when = frame.data, when
            return
        self.rgb = None
        video = pass_.video if pass_ is not None else None
        if video is None:
            raise ValueError(f"a {frame.kind} frame from a source that reads no video file")
        converter, rect = self._layout_for(video)
        converter(frame.data)
        if self.options.on_frame is not None:
            if rect != self.box:
                self._bars(rect)
            self.options.on_frame(self.screen.surface, when)
        self.screen.mark_dirty(rect)

    def show(self) -> None:
        """Show the prepared picture."""
        if self.rgb is not None:
            if self.options.on_frame is None and self.box == (0, 0, self.screen.width, self.screen.height):
                self.screen.present(self.rgb, fit=self.options.fit, background=self.options.background)
            else:
                self._present_in_box(self.rgb)
        else:
            self.screen.flip()

    def _present_in_box(self, rgb: Any) -> None:
        """An RGB frame (an animation's, raw frames') in the box, then ``on_frame``; the
        rest of the screen as it was."""
        bx0, by0, bx1, by1 = self.box
        picture, x, y = place(rgb, bx1 - bx0, by1 - by0, self.options.fit)
        with self.screen.frame() as s:
            inside = s.subsurface(self.box)
            if x > 0 or y > 0 or picture.shape[1] < bx1 - bx0 or picture.shape[0] < by1 - by0:
                inside.clear(self.options.background)
            inside.blit(picture, (x, y), alpha=False)
            if self.options.on_frame is not None:
                self.options.on_frame(s, self.when)

    def _layout_for(self, video: Video) -> tuple[Converter, tuple[int, int, int, int]]:
        if video is not self.prepared_for or self.layout is None:
            key = (video.width, video.height, video.rotation)
            if key not in self.converters:
                self.converters[key] = self._converter(video)
            self.layout = self.converters[key]
            self.prepared_for = video
            self._bars(self.layout[1])
        return self.layout

    def _converter(self, video: Video) -> tuple[Converter, tuple[int, int, int, int]]:
        """The converter for ``video``'s frames, and the rectangle they are shown in."""
        size, rect, crop = _layout(video.width, video.height, self.box, self.options.fit)
        x0, y0, x1, y1 = rect
        screen = self.screen
        converter = Converter(
            self.array[y0:y1, x0:x1],
            screen.format,
            screen.fb.palette,
            size,
            crop,
            video.rotation // 90,
            self.sws_threads,
        )
        return converter, rect

    def _bars(self, rect: tuple[int, int, int, int]) -> None:
        """Fill the box around the picture with the background."""
        bx0, by0, bx1, by1 = self.box
        x0, y0, x1, y1 = rect
        for r in ((bx0, by0, bx1, y0), (bx0, y1, bx1, by1), (bx0, y0, x0, y1), (x1, y0, bx1, y1)):
            if r[0] < r[2] and r[1] < r[3]:
                convert.fill(self.array[r[1] : r[3], r[0] : r[2]], self.background)
                self.screen.mark_dirty(r)

    def close(self) -> None:
        for converter, _rect in self.converters.values():
            converter.close()


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
    except (TypeError, ValueError, OverflowError):  # (OverflowError: infinity)
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
