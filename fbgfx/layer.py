"""Layers: rectangles of the screen with their own buffers, above the Screen.

``fb.layer(box)`` gives a :class:`Layer`. It is drawn exactly like a
:class:`~fbgfx.Screen` (``frame()``, ``present()``, ``play()``, ``surface``): it *has*
a Screen, on a small framebuffer of its own (the layer's pixels, in RAM). When that
Screen shows a frame it tells the layer which rectangles changed, and the layer puts
them on the display:

- on a display plane (``layer.hardware``: DRM/KMS with atomic modesetting and a free
  plane that takes the layer's format and position in a ``TEST_ONLY`` commit): the
  changed rectangles are copied into the plane's next buffer and that plane alone is
  flipped; the display engine blends it;
- else composed by fbgfx (:mod:`fbgfx._screen.compose`) over the Screen's picture, with the
  display engine's arithmetic, in the changed rectangles only; ``layer.reason`` says
  why it is not on a plane.

An ``alpha=True`` layer holds premultiplied ARGB8888, as planes scan it out: it starts
transparent, drawing with a colour's alpha blends over what the layer holds
(premultiplied "over"), and ``frame(clear=True)`` starts a frame transparent.
"""

from __future__ import annotations

import contextlib
import errno
import numbers
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _restore
from ._closing import ClosesOnExit
from ._screen import compose as _compose
from .drm.card import FOURCC_FORMATS
from .errors import FramebufferError, UnsupportedFormatError
from .screen import Screen, resolve_rotate
from .surface import Surface
from .virtual import VirtualDevice

if TYPE_CHECKING:
    from .device import Framebuffer
    from .drm.planes import HardwarePlane
    from .video import Played, Player, PlayOptions

__all__ = ["Layer", "LayerInfo"]

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class LayerInfo:
    """What a layer's own framebuffer answers for ``fb.drm``: a display that tells which
    rectangles changed (its Screen then flushes them, as on ``drm:``), one page."""

    pages: int = 1
    page: int = 0
    page_rows: int = 0


class _LayerDevice(VirtualDevice):
    """The layer's pixels, as a backend its Screen draws on: in-memory video memory
    whose changed rectangles go to the layer (``dirty``)."""

    fbdev = False

    def __init__(self, width: int, height: int, fmt: str, layer: Layer) -> None:
        super().__init__(width, height, fmt, can_pan=False)
        self.path = "layer"
        self._layer = layer

    def drm_info(self) -> Any | None:
        return LayerInfo(page_rows=self.get_var().yres)

    def dirty(self, rects: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        self._layer._changed(rects)  # noqa: SLF001 (same module: this backend is the Layer's own)

    def wait_flip(self) -> bool:
        return self._layer._wait_plane()  # noqa: SLF001 (same module: this backend is the Layer's own)


class Layer(ClosesOnExit):
    """A rectangle of the screen with its own buffers, stacked above the Screen.

    Get one with :meth:`fbgfx.Framebuffer.layer`. Draw on it as on a Screen; the end
    of a frame shows this layer's changed rectangles and nothing else.

    Attributes:
        box: (x0, y0, x1, y1) on the screen, exclusive corner, in the screen's logical
            (turned) coordinates.
        width, height: The layer's size.
        alpha: It has an alpha channel (premultiplied ARGB8888).
        hardware: True when a display plane shows it, False when fbgfx composes it.
        reason: Why it is not on a plane ("" when it is).
        plane_id: The plane showing it (0 in software).
    """

    def __init__(self, fb: Framebuffer, box: Sequence[int], *, alpha: bool = False) -> None:
        if fb.closed:
            raise FramebufferError(errno.EBADF, "cannot open a layer: the framebuffer is closed", fb.path)
        fmt = fb.format
        if fmt.indexed or fmt.gray or fmt.bpp < 16:
            raise UnsupportedFormatError(
                f"layers need a true-colour display of 16 bits or more; {fb.path} is {fmt.name}"
            )
        existing = _compose.existing_stack(fb)
        stack = existing if existing is not None else _compose.stack_for(fb, resolve_rotate(None))
        self.box = _check_box(box, *stack.logical_size)
        self.alpha = bool(alpha)
        self.width, self.height = self.box[2] - self.box[0], self.box[3] - self.box[1]
        self.fb = fb
        self.hardware = False
        self.reason = ""
        self.plane_id = 0
        self._stack = stack
        self._closed = False
        self._lock = threading.RLock()
        self._ready = False
        panel = stack.panel_rect(self.box)
        pw, ph = panel[2] - panel[0], panel[3] - panel[1]
        self._device = _LayerDevice(pw, ph, "ARGB8888" if self.alpha else fmt.name, self)
        self._fb = fb.sibling(self._device, f"{fb.path} layer {self.box}")
        try:
            self._screen = Screen(self._fb, "copy", console=False, palette=None, vsync=False, rotate=stack.rotate)
            self._slot = _compose.Slot(panel, self._fb.pixels, self.alpha)
            with self._screen.frame() as s:  # the first picture: transparent, or black
                s.array[...] = 0 if self.alpha else _black(s)
                self._screen.mark_dirty()
            self._plane: HardwarePlane | None = None
            self._take_plane(fb, panel)
            self._ready = True
            stack.add(self._slot)
            fb.adopt(self)
            _restore.register(self, self.close, newest=True)
        except BaseException:
            self._release()
            raise

    def _take_plane(self, fb: Framebuffer, panel: Box) -> None:
        """Put the layer on a display plane where the driver takes it (TEST_ONLY)."""
        pool = fb.plane_pool()
        if pool is None:
            self.reason = f"composed by fbgfx: {fb.path} has no display planes"
            return
        code = "AR24" if self.alpha else FOURCC_FORMATS.get(fb.format.name, ("XR24",))[0]
        above = max((s.plane for s in self._stack.slots if s.hardware), default=0)
        plane, why = pool.take(panel, code, above)
        if plane is None:
            self.reason = why
            return
        try:
            plane.show(self._fb.pixels)
        except OSError as e:
            plane.free()
            self.reason = f"the driver refused to show the plane ({e}): composed by fbgfx"
            return
        self._plane = plane
        self.hardware = self._slot.hardware = True
        self.plane_id = self._slot.plane = plane.id

    # -- drawing: as a Screen ------------------------------------------------------------------

    @property
    def surface(self) -> Surface:
        """The layer's back :class:`~fbgfx.Surface` (draw, then :meth:`flip`)."""
        self._check()
        return self._screen.surface

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.width, self.height

    @property
    def screen(self) -> Screen:
        """The :class:`~fbgfx.Screen` the layer is drawn through (its size is the
        layer's); for code written for a Screen."""
        self._check()
        return self._screen

    @contextlib.contextmanager
    def frame(self, *, clear: bool = False) -> Iterator[Surface]:
        """Draw one frame of the layer: yields its Surface and shows the changed area
        when the block ends cleanly (nothing on an exception).

        Args:
            clear: Start from a transparent layer (``alpha``) or a black one, instead
                of the last frame.
        """
        self._check()
        with self._screen.frame() as s:
            if clear:
                s.array[...] = 0 if self.alpha else _black(s)
                self._screen.mark_dirty()
            yield s

    def flip(self) -> None:
        """Show what was drawn on :attr:`surface` since the last frame."""
        self._check()
        self._screen.flip()

    def mark_dirty(self, box: Sequence[int] | None = None) -> None:
        """Report pixels written into ``surface.array`` directly (see
        :meth:`fbgfx.Screen.mark_dirty`)."""
        self._check()
        self._screen.mark_dirty(box)

    def present(self, image: Any, fit: str = "fit", background: Any = "black") -> None:
        """Show a whole picture in the layer, as :meth:`fbgfx.Screen.present` does."""
        self._check()
        self._screen.present(image, fit, background)

    def play(self, source: Any, **options: Any) -> Played:
        """Play video in the layer: :meth:`fbgfx.Screen.play` with the same keywords
        (``box`` is within the layer). On a plane, each video frame flips this plane
        alone: what the Screen and the other layers show is not composed again; where
        the plane lists NV12 or YUV420 and the decoder gives 4:2:0 YUV, the frames go
        to the plane as YUV, with no RGB step (not with ``on_frame``, which draws in RGB)."""
        from .video import PlayOptions  # noqa: PLC0415 (the video layer loads only when a layer plays)

        return self.player(source, PlayOptions(**options)).run()

    def player(self, source: Any, options: PlayOptions | None = None) -> Player:
        """The :class:`fbgfx.video.Player` that :meth:`play` runs (for ``run()``'s
        callbacks): ``source`` in the layer as ``options`` say, on the layer's plane in
        YUV where it takes the frames so."""
        self._check()
        from .video import Player, PlayOptions  # noqa: PLC0415 (the video layer loads only when a layer plays)

        settings = options if options is not None else PlayOptions()
        plane = self._plane
        yuv = None
        if plane is not None and not self.alpha and settings.on_frame is None:
            # loaded with the plane (fbgfx.drm.device.plane_pool): a program without planes never imports it
            from .drm.planes import YuvVideo  # noqa: PLC0415

            yuv = YuvVideo(plane)
        return Player(self._screen, source, settings, yuv=yuv)

    # -- placing ---------------------------------------------------------------------------------

    def move(self, x: int, y: int) -> None:
        """Put the layer's top-left corner at (x, y) (logical coordinates).

        Raises:
            ValueError: The layer would not be wholly on the screen.
        """
        self._check()
        box = _check_box((x, y, int(x) + self.width, int(y) + self.height), *self._stack.logical_size)
        with self._stack.lock, self._lock:
            old = self._slot.panel
            new = self._stack.panel_rect(box)
            self.box = box
            self._slot.panel = new
            if self._plane is not None:
                self._plane.move(new)
            else:
                self._stack.refresh([old, new])

    def hide(self) -> None:
        """Stop showing the layer (what it covered shows again)."""
        self._set_shown(False)

    def show(self) -> None:
        """Show the layer again."""
        self._set_shown(True)

    @property
    def shown(self) -> bool:
        """Not hidden."""
        return self._slot.shown

    def _set_shown(self, shown: bool) -> None:
        self._check()
        with self._stack.lock, self._lock:
            if self._slot.shown == shown:
                return
            self._slot.shown = shown
            plane = self._plane
            if plane is None:
                self._stack.refresh([self._slot.panel])
            elif shown:
                plane.show(self._fb.pixels)
            else:
                plane.hide()

    # -- closing -----------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once closed (also by the framebuffer's close)."""
        return self._closed or self.fb.closed

    def close(self) -> None:
        """Take the layer off the display (what it covered shows again) and free its
        buffers; safe twice. The framebuffer's close closes its layers."""
        if self._closed or _restore.defer(self.close):
            return
        self._closed = True
        try:
            plane, self._plane = getattr(self, "_plane", None), None
            if plane is not None and not self.fb.closed:
                with self._lock:
                    plane.free()  # the plane off first: its buffers are freed then
            if not self.fb.closed:
                self._stack.remove(self._slot)
        finally:
            self._release()
            self.fb.disown(self)

    def _release(self) -> None:
        _restore.unregister(self)
        screen = getattr(self, "_screen", None)
        try:
            if screen is not None:
                screen.close()
        finally:
            inner = getattr(self, "_fb", None)
            if inner is not None:
                inner.close()

    def __repr__(self) -> str:
        where = "closed" if self.closed else (f"plane {self.plane_id}" if self.hardware else "composed")
        return f"<Layer {self.box} {'alpha ' if self.alpha else ''}{where}>"

    # -- what the layer's Screen tells -------------------------------------------------------------

    def _changed(self, rects: Sequence[tuple[int, int, int, int]] | None) -> None:
        """The layer's Screen wrote ``rects`` (the layer's panel coordinates; None: all)."""
        if not self._ready or self._closed:
            return
        sx, sy, ex, ey = self._slot.panel
        if rects is None:
            rects = [(0, 0, ex - sx, ey - sy)]
        plane = self._plane
        if plane is not None:
            with self._lock:
                plane.update(self._fb.pixels, rects)
            return
        if self._slot.shown:
            self._stack.refresh([(x0 + sx, y0 + sy, x1 + sx, y1 + sy) for x0, y0, x1, y1 in rects])

    def _wait_plane(self) -> bool:
        return False

    def _check(self) -> None:
        if self.closed:
            what = "the framebuffer is closed" if self.fb.closed else "the layer is closed"
            raise FramebufferError(errno.EBADF, what, self.fb.path)


def _black(s: Surface) -> Any:
    return s.format.pack_color((0, 0, 0))


def _check_box(box: Sequence[Any], width: int, height: int) -> Box:
    try:
        values = tuple(box)
    except TypeError:
        raise TypeError(f"box must be (x0, y0, x1, y1) integers, not {box!r}") from None
    if len(values) != 4 or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        raise TypeError(f"box must be (x0, y0, x1, y1) integers, not {box!r}")
    x0, y0, x1, y1 = (int(v) for v in values)
    if x0 >= x1 or y0 >= y1:
        raise ValueError(f"box {box!r} is empty (x1 and y1 are exclusive and must be larger than x0 and y0)")
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise ValueError(f"box {(x0, y0, x1, y1)} is not inside the {width}x{height} screen")
    return x0, y0, x1, y1
