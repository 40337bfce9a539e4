"""Mirroring one display onto another: ``fbgfx mirror SOURCE DEST`` and :func:`fbgfx.mirror`.

A :class:`Mirror` looks at a source (:mod:`fbgfx.kiosk._sources`: ``/dev/fbN``, a
file-backed ``virtual:`` display, or what a DRM CRTC scans out for another program) up
to a frame rate and shows it on a destination display through a
:class:`~fbgfx.Screen` (so ``rotate``, dirty rectangles and ``DIRTYFB`` come from
there). Each look compares the source with the copy kept from the last one, in tiles
(in C); only the changed tiles are scaled (area-averaging when shrinking, bilinear when
growing, an exact copy at 1:1: :mod:`fbgfx.kiosk._scale`) and written, as rectangles of
the destination. A still source costs one comparison a frame.

The mirror follows the source: a new mode or format (all redrawn), a flip to another
buffer (the next look reads it), a source that shows nothing or went away (the last
picture stays; the source is looked for again). A ``drm:`` destination whose monitor
comes back gets the whole picture again (on a new Screen when at another size).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import fbgfx

from .._open import PathLike
from ..device import Framebuffer
from ..screen import FITS, Screen
from ._scale import Scaler, changed_tiles, source_kind, tile_rects
from ._sources import DEFAULT_REFRESH, MirrorSource, Picture, open_source

__all__ = ["MAX_FPS", "MIRROR_FITS", "Mirror", "MirrorStats", "mirror"]

#: How :class:`Mirror` places the source: ``fit`` (letterboxed), ``fill`` (cropped), ``stretch``.
MIRROR_FITS = tuple(f for f in FITS if f != "center")
#: The frame rate a source's refresh rate is capped at when no ``fps`` is given.
MAX_FPS = 60.0
# More destination rectangles than this in one frame become their bounding box.
_MAX_RECTS = 8

Rect = tuple[int, int, int, int]


@dataclass
class MirrorStats:
    """What a mirror did (``--stats``, and the report on exit).

    Attributes:
        mirrored: Frames in which something changed and was shown.
        skipped: Looks that found nothing changed (or nothing shown).
        changed: The sum over mirrored frames of the fraction of the source that
            changed (tiles compared); see :attr:`average_changed`.
        cpu: CPU seconds spent on mirrored frames (look, compare, scale, write): the
            calling thread's CPU time from the end of the look before to the end of
            this one (in :meth:`Mirror.run` that is the look alone).
        idle_cpu: The same for looks that found nothing to do.
        started: ``time.monotonic()`` at the first look.
        filters: The scaling filters (x, y) in use: ``box``, ``bilinear`` or ``exact``.
    """

    mirrored: int = 0
    skipped: int = 0
    changed: float = 0.0
    cpu: float = 0.0
    idle_cpu: float = 0.0
    started: float = field(default_factory=time.monotonic)
    filters: tuple[str, str] = ("exact", "exact")

    @property
    def average_changed(self) -> float:
        """The average fraction (0..1) of the source that changed in a mirrored frame."""
        return self.changed / self.mirrored if self.mirrored else 0.0

    @property
    def cpu_per_frame(self) -> float:
        """Average CPU seconds per mirrored frame."""
        return self.cpu / self.mirrored if self.mirrored else 0.0

    def __str__(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        busy = (self.cpu + self.idle_cpu) / elapsed
        return (
            f"{self.mirrored} frames mirrored, {self.skipped} skipped (nothing changed), "
            f"{self.average_changed:.1%} of the picture changed on average, "
            f"{self.cpu_per_frame * 1000:.2f} ms CPU per mirrored frame, {busy:.1%} CPU over {elapsed:.1f} s "
            f"(scaling: {'/'.join(self.filters)})"
        )


class Mirror:
    """Shows on ``dest`` what ``source`` shows, one :meth:`step` (a look) at a time.

    Args:
        source: A :class:`~fbgfx.kiosk._sources.MirrorSource`, or a display spec
            (``/dev/fb0``, ``drm:card0:connector=HDMI-A-1``, ``virtual:...:file=PATH``).
        dest: The display to show it on (an open :class:`~fbgfx.Framebuffer`).
        fit: ``"fit"`` (scale to fit, letterboxed; the default), ``"fill"`` (cover,
            cropping the overflow) or ``"stretch"``.
        rotate: Degrees the picture is turned clockwise on ``dest`` (0, 90, 180, 270;
            None: ``$FBGFX_ROTATE``, else 0).
        region: (x0, y0, x1, y1), exclusive ends: mirror only this part of the source.

    Raises:
        ValueError: An unknown fit or an empty region.
    """

    def __init__(
        self,
        source: MirrorSource | str,
        dest: Framebuffer,
        *,
        fit: str = "fit",
        rotate: int | None = None,
        region: tuple[int, int, int, int] | None = None,
    ) -> None:
        if fit not in MIRROR_FITS:
            raise ValueError(f"fit must be one of {', '.join(MIRROR_FITS)}, not {fit!r}")
        if region is not None and (region[0] < 0 or region[1] < 0 or region[2] <= region[0] or region[3] <= region[1]):
            raise ValueError(f"region {region} is empty: give x0,y0,x1,y1 with x1 > x0 >= 0 and y1 > y0 >= 0")
        self._own_source = isinstance(source, str)
        self.source: MirrorSource = open_source(source) if isinstance(source, str) else source
        self.dest, self.fit, self.rotate, self.region = dest, fit, rotate, region
        self.stats = MirrorStats()
        self.refresh: float | None = None  # the source's refresh rate, once seen
        self._screen: Screen | None = None
        self._key: Any = None
        self._kept: np.ndarray | None = None  # the source (region) as last seen, native
        self._rgb: np.ndarray | None = None  # ... as RGB, for formats the scaler cannot read
        self._kind: tuple[int, int, int, int] = (3, 0, 1, 2)
        self._scaler: Scaler | None = None
        self._place = (0, 0)
        self._closed = False
        self._cpu_mark = time.thread_time()
        try:
            self._screen = dest.screen(buffering="copy", rotate=rotate)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the Screen (the destination keeps the last picture) and a source
        opened from a spec; safe twice."""
        if self._closed:
            return
        self._closed = True
        screen, self._screen = self._screen, None
        try:
            if screen is not None:
                screen.close()
        finally:
            if self._own_source:
                self.source.close()

    @property
    def screen(self) -> Screen:
        """The destination's Screen."""
        if self._screen is None:
            raise ValueError("the mirror is closed")
        return self._screen

    # -- one look -------------------------------------------------------------------------------

    def step(self) -> bool:
        """Look at the source once and show what changed.

        Returns:
            True when something was shown (a mirrored frame), False when nothing had
            changed or the source showed nothing (a skipped look).
        """
        shown = self._step()
        # The thread's CPU since the end of the last look: one clock read a look
        # (time.thread_time is a system call, tens of microseconds on some machines).
        now = time.thread_time()
        spent, self._cpu_mark = now - self._cpu_mark, now
        if shown:
            self.stats.mirrored += 1
            self.stats.cpu += spent
        else:
            self.stats.skipped += 1
            self.stats.idle_cpu += spent
        return shown

    def _step(self) -> bool:
        self._follow_dest()
        picture = self.source.look()
        if picture is None:
            return False  # nothing shown: keep the last picture
        if picture.refresh:
            self.refresh = picture.refresh
        view = self._region_of(picture)
        key = (picture.format, view.shape, None if picture.palette is None else picture.palette.tobytes())
        if key != self._key:
            self._start(picture, view, key)
            return True
        assert self._kept is not None  # set by _start with the key
        mask, n = changed_tiles(_byte_rows(view), _byte_rows(self._kept))
        if not n:
            return False
        width_bytes = _byte_rows(view).shape[1]
        rects = tile_rects(mask, width_bytes, view.shape[0])
        self.stats.changed += sum((r[2] - r[0]) * (r[3] - r[1]) for r in rects) / (width_bytes * view.shape[0])
        bpp = picture.format.bpp
        pixel_rects = [(r[0] * 8 // bpp, r[1], min(view.shape[1], -(-r[2] * 8 // bpp)), r[3]) for r in rects]
        if self._rgb is not None:
            for r in pixel_rects:
                self._to_rgb(picture, r)
        self._show(pixel_rects)
        return True

    def _region_of(self, picture: Picture) -> np.ndarray:
        native = picture.native
        if self.region is None:
            return native
        x0, y0, x1, y1 = self.region
        if picture.format.is_packed:
            raise ValueError(f"--region needs a format of 8 bits a pixel or more, not {picture.format.name}")
        x1, y1 = min(x1, picture.width), min(y1, picture.height)
        if x0 >= x1 or y0 >= y1:
            raise ValueError(f"region {self.region} is outside the {picture.width}x{picture.height} source")
        return native[y0:y1, x0:x1]

    def _start(self, picture: Picture, view: np.ndarray, key: Any) -> None:
        """A new source mode (or the first look): keep a copy, make the scaler, show all."""
        self._key = key
        self._kept = np.array(view, copy=True, order="C")
        width = view.shape[1] * 8 // picture.format.bpp if picture.format.is_packed else view.shape[1]
        height = view.shape[0]
        kind = source_kind(picture.format)
        if kind is None:
            self._kind = (3, 0, 1, 2)
            self._rgb = np.empty((height, width, 3), np.uint8)
            self._to_rgb(picture, (0, 0, width, height))
        else:
            self._kind, self._rgb = kind, None
        self._layout(width, height)
        self.stats.changed += 1.0
        self._show(None)

    def _layout(self, width: int, height: int) -> None:
        """Where the source goes on the screen and the scaler that takes it there."""
        screen = self.screen
        sw, sh = screen.width, screen.height
        box: tuple[float, float, float, float] | None = None
        if self.fit == "stretch":
            out, place = (sw, sh), (0, 0)
        elif self.fit == "fill":
            scale = max(sw / width, sh / height)
            cw, ch = min(width, sw / scale), min(height, sh / scale)
            left, top = (width - cw) / 2, (height - ch) / 2
            out, place, box = (sw, sh), (0, 0), (left, top, left + cw, top + ch)
        else:  # fit: the same rounding as Screen.present
            scale = min(sw / width, sh / height)
            out = (max(1, min(sw, round(width * scale))), max(1, min(sh, round(height * scale))))
            place = ((sw - out[0]) // 2, (sh - out[1]) // 2)
        self._scaler = Scaler((width, height), out, box)
        self._place = place
        self.stats.filters = self._scaler.filters

    def _to_rgb(self, picture: Picture, rect: Rect) -> None:
        """Unpack source pixels of ``rect`` (from the kept copy) into the RGB copy."""
        assert self._kept is not None and self._rgb is not None
        x0, y0, x1, y1 = rect
        fmt, rows = picture.format, self._kept[y0:y1]
        if fmt.is_packed:
            rgb = fmt.unpack(fmt.unpack_bits(rows, self._rgb.shape[1]), picture.palette)
            self._rgb[y0:y1, x0:x1] = rgb[:, x0:x1, :3]
        else:
            self._rgb[y0:y1, x0:x1] = fmt.unpack(rows[:, x0:x1], picture.palette)[..., :3]

    def _show(self, source_rects: list[Rect] | None) -> None:
        """Scale what the source rectangles reach (None: everything) and flip."""
        scaler, screen = self._scaler, self.screen
        assert scaler is not None
        full = (0, 0, *scaler.out)
        if source_rects is None:
            rects = [full]
        else:
            reached = [r for r in (scaler.outputs(s) for s in source_rects) if r is not None]
            rects = _merge(reached)
            if not rects:
                return
        src = self._rgb if self._rgb is not None else self._kept
        assert src is not None
        surface = screen.surface
        if source_rects is None:
            surface.clear("black")  # the letterbox
        px, py = self._place
        for rect in rects:
            rgb = scaler.scale(src, self._kind, rect)
            surface.blit(rgb, (px + rect[0], py + rect[1]), alpha=False)
        screen.flip()

    def _follow_dest(self) -> None:
        """A ``drm:`` destination's monitor back: the whole picture shown again (the
        mode set that lit it may have lost what the buffer held: qemu's bochs clears
        its memory, a panel's own memory forgets while it is off); back at another
        size, on a new Screen."""
        events = self.dest.display_events(0)
        if any(e.kind == "resized" for e in events):
            old, self._screen = self._screen, None
            if old is not None:
                old.close()
            self._screen = self.dest.screen(buffering="copy", rotate=self.rotate)
            self._key = None  # the next look lays out and shows everything
        elif any(e.kind == "connected" for e in events):
            self._key = None  # the same layout: everything drawn and written again

    # -- running --------------------------------------------------------------------------------

    def run(
        self,
        fps: float | None = None,
        duration: float | None = None,
        stop: threading.Event | None = None,
        on_second: Any = None,
    ) -> MirrorStats:
        """Look ``fps`` times a second until ``duration`` seconds passed or ``stop`` is set.

        Args:
            fps: Looks a second; default the source's refresh rate (capped at
                :data:`MAX_FPS`), else 60.
            duration: Seconds to run; None: until ``stop`` (or Ctrl-C).
            stop: An event that ends the run when set (from another thread).
            on_second: Called with :attr:`stats` about once a second (``--stats``).

        Returns:
            :attr:`stats`.
        """
        stop = stop or threading.Event()
        start = time.monotonic()
        self.stats.started = start
        end = None if duration is None else start + duration
        next_look, next_report = start, start + 1.0
        while not stop.is_set():
            self.step()
            rate = fps or min(self.refresh or DEFAULT_REFRESH, MAX_FPS)
            now = time.monotonic()
            if on_second is not None and now >= next_report:
                on_second(self.stats)
                next_report = now + 1.0
            if end is not None and now >= end:
                break
            next_look = max(next_look + 1.0 / rate, now)  # a late frame is not made up for
            wait = next_look - now if end is None else min(next_look, end) - now
            if wait > 0 and stop.wait(wait):
                break
        return self.stats


def _merge(rects: list[Rect]) -> list[Rect]:
    """Rectangles to draw: overlapping ones merged; many become their bounding box."""
    out: list[Rect] = []
    for r in sorted(rects):
        for i, o in enumerate(out):
            if r[0] < o[2] and o[0] < r[2] and r[1] < o[3] and o[1] < r[3]:
                out[i] = (min(r[0], o[0]), min(r[1], o[1]), max(r[2], o[2]), max(r[3], o[3]))
                break
        else:
            out.append(r)
    if len(out) > _MAX_RECTS:
        return [(min(r[0] for r in out), min(r[1] for r in out), max(r[2] for r in out), max(r[3] for r in out))]
    return out


def _byte_rows(a: np.ndarray) -> np.ndarray:
    """The same memory as (rows, bytes) uint8, rows keeping their stride."""
    if a.ndim == 2 and a.dtype.itemsize == 1:
        return a
    width = a.shape[1] * (a.shape[2] if a.ndim == 3 else 1) * a.dtype.itemsize
    return np.lib.stride_tricks.as_strided(a.view(np.uint8), (a.shape[0], width), (a.strides[0], 1))


def mirror(
    source: str | MirrorSource,
    dest: PathLike | Framebuffer,
    *,
    fit: str = "fit",
    rotate: int | None = None,
    fps: float | None = None,
    region: tuple[int, int, int, int] | None = None,
    duration: float | None = None,
    stop: threading.Event | None = None,
) -> MirrorStats:
    """Show on ``dest`` what ``source`` shows, continuously, until ``duration`` or ``stop``.

    Only what changed is converted, scaled and written: the source is compared in tiles
    with its last look, and the changed tiles are scaled (area-averaging when shrinking,
    bilinear when growing, exact at 1:1) and written as dirty rectangles.

    Args:
        source: What to mirror: ``/dev/fbN``, ``drm:[CARD][:connector=NAME]`` (what
            another program shows there; needs root), or a file-backed
            ``virtual:...:file=PATH`` display.
        dest: Where to show it: a spec :func:`fbgfx.open` takes, or an open Framebuffer.
        fit: ``"fit"`` (letterboxed; default), ``"fill"`` (cropped) or ``"stretch"``.
        rotate: Degrees the picture is turned clockwise on ``dest``.
        fps: Looks a second (default: the source's refresh rate, at most 60).
        region: (x0, y0, x1, y1): only this part of the source.
        duration: Seconds to run (None: until ``stop`` is set, or Ctrl-C).
        stop: Set it from another thread to end the mirror.

    Returns:
        What was done (:class:`MirrorStats`).

    Example:
        >>> fbgfx.mirror("drm:card0:connector=HDMI-A-1", "/dev/fb1", fps=30)  # doctest: +SKIP
    """
    fb = dest if isinstance(dest, Framebuffer) else fbgfx.open(dest)
    try:
        with Mirror(source, fb, fit=fit, rotate=rotate, region=region) as m:
            return m.run(fps, duration, stop)
    finally:
        if fb is not dest:
            fb.close()
