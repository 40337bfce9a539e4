"""Software composition of layers: what a display engine does with planes, done by fbgfx.

A :class:`LayerStack` belongs to one framebuffer. It knows the layers opened on it
(:class:`Slot`: where each is on the panel, its pixels, shown or hidden, on a display
plane or not) and, while any layer is composed in software, keeps ``base``: the
Screen's picture as the Screen wrote it (a RAM copy of the visible page). The pixels
that reach the display are then ``base`` with the software layers blended over it
in creation order, computed in RAM for the changed rectangles only:

- an opaque layer's pixels replace what is below (same pixel format: a copy);
- an alpha layer holds premultiplied ARGB8888 (what a plane with the "Pre-multiplied"
  blend mode scans out) and is blended with premultiplied "over",
  ``out = src + dst * (255 - alpha) / 255`` per 8-bit channel, rounded: the display
  engine's arithmetic (vkms computes it in 16 bits; the results differ by at most one
  level).

A Screen's buffering strategy is wrapped by :func:`composed` when the Screen opens:
while no layer is composed in software a flip goes straight through; otherwise the
Screen's frame is written into ``base`` and the strategy is asked to show the changed
area with the layers composed over it. A layer update asks the same strategy to show
the layer's rectangle (so page flips, pending regions and ``DIRTYFB`` stay the
strategy's business); without a Screen it is written into the visible page.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import convert
from .buffering import Buffering, Writer
from .region import Region

if TYPE_CHECKING:
    from ..device import Framebuffer

__all__ = ["Composed", "LayerStack", "Slot", "blend_premultiplied", "composed", "stack_for", "to_frame", "to_panel"]

Rect = tuple[int, int, int, int]


def to_panel(rect: Rect, rotate: int, width: int, height: int) -> Rect:
    """Where the logical rectangle ``rect`` (x0, y0, x1, y1) of a ``width`` x ``height``
    screen turned ``rotate`` degrees clockwise lies on the panel."""
    x0, y0, x1, y1 = rect
    w, h = width, height
    if rotate == 90:
        return h - y1, x0, h - y0, x1
    if rotate == 180:
        return w - x1, h - y1, w - x0, h - y0
    if rotate == 270:
        return y0, w - x1, y1, w - x0
    return rect


def to_frame(rect: Rect, rotate: int, width: int, height: int) -> Rect:
    """The logical rectangle shown at the panel's ``rect`` (inverse of :func:`to_panel`)."""
    x0, y0, x1, y1 = rect
    w, h = width, height
    if rotate == 90:
        return y0, h - x1, y1, h - x0
    if rotate == 180:
        return w - x1, h - y1, w - x0, h - y0
    if rotate == 270:
        return w - y1, x0, w - y0, x1
    return rect


def intersect(a: Rect, b: Rect) -> Rect | None:
    """The overlap of two rectangles, or None."""
    x0, y0, x1, y1 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def blend_premultiplied(dst: np.ndarray, src: np.ndarray) -> None:
    """Blend premultiplied ARGB8888 pixels ``src`` (uint32) over RGB ``dst`` ((h, w, 3)
    uint8, in place) with premultiplied "over": ``dst = src + dst * (255 - a) / 255``."""
    a = (src >> 24).astype(np.uint16)
    inv = 255 - a
    for i, shift in enumerate((16, 8, 0)):
        s = ((src >> shift) & 0xFF).astype(np.uint16)
        d = dst[..., i].astype(np.uint16)
        # (d * inv + 127) // 255 fits uint16: d * inv <= 65025
        out = s + (d * inv + 127) // 255
        dst[..., i] = np.minimum(out, 255).astype(np.uint8)


@dataclass(eq=False)
class Slot:
    """One layer as the stack sees it.

    Attributes:
        panel: Where the layer is on the panel: (x0, y0, x1, y1), exclusive corner.
        pixels: Its picture on the panel (the panel rectangle's size): the display's
            pixel format for an opaque layer, premultiplied ARGB8888 for ``alpha``.
        alpha: The layer has an alpha channel.
        shown: Not hidden.
        hardware: A display plane shows it: the stack leaves it out.
        plane: That plane's id.
    """

    panel: Rect
    pixels: np.ndarray
    alpha: bool
    shown: bool = True
    hardware: bool = False
    plane: int = 0
    order: int = field(default=0)

    @property
    def composed(self) -> bool:
        """Blended by the stack (shown, not on a plane)."""
        return self.shown and not self.hardware


class LayerStack:
    """The layers of one framebuffer and their software composition (see the module).

    Attributes:
        rotate: The turn of the screen the layers' boxes are given in (the Screen's,
            else ``$FBGFX_ROTATE``).
        lock: Held while the picture is composed: a layer's update from another thread
            (a video) and a Screen flip take turns.
    """

    def __init__(self, fb: Framebuffer, rotate: int) -> None:
        self._fb = weakref.ref(fb)
        self.rotate = rotate
        self.lock = threading.RLock()
        self.slots: list[Slot] = []
        self.base: np.ndarray | None = None
        # weak: the stacks are kept by framebuffer (weakly), and a presenter holds its framebuffer
        self._presenter: weakref.ref[Composed] | None = None
        self._order = 0
        self.planes: Any = None  # the display planes in use (fbgfx.drm.planes), set by the layer module

    @property
    def fb(self) -> Framebuffer:
        fb = self._fb()
        assert fb is not None  # the stack lives as long as its framebuffer
        return fb

    @property
    def presenter(self) -> Composed | None:
        """The open Screen's strategy that shows the composed picture, if any."""
        ref = self._presenter
        return ref() if ref is not None else None

    @presenter.setter
    def presenter(self, value: Composed | None) -> None:
        self._presenter = weakref.ref(value) if value is not None else None

    @property
    def logical_size(self) -> tuple[int, int]:
        """(width, height) of the screen in the layers' coordinates."""
        fb = self.fb
        return (fb.height, fb.width) if self.rotate in (90, 270) else (fb.width, fb.height)

    def panel_rect(self, box: Rect) -> Rect:
        """Where the logical ``box`` is on the panel."""
        w, h = self.logical_size
        return to_panel(box, self.rotate, w, h)

    # -- the layers --------------------------------------------------------------------------------

    def add(self, slot: Slot) -> None:
        """Put ``slot`` on top and show it."""
        with self.lock:
            self._order += 1
            slot.order = self._order
            self.slots.append(slot)
            self.refresh([slot.panel])

    def remove(self, slot: Slot) -> None:
        """Take ``slot`` away and show what it covered."""
        with self.lock:
            if slot not in self.slots:
                return
            self.slots.remove(slot)
            if not slot.hardware:
                self.refresh([slot.panel])
            if not any(not s.hardware for s in self.slots):
                self.base = None  # nothing to compose: Screen flips go straight through

    @property
    def active(self) -> bool:
        """Some layer is composed by the stack (shown or hidden, but not on a plane)."""
        return any(not s.hardware for s in self.slots)

    # -- composing -----------------------------------------------------------------------------------

    def refresh(self, panel_rects: Sequence[Rect]) -> None:
        """Show the panel's ``panel_rects`` again, composed (a layer there changed,
        moved, came or went)."""
        fb = self.fb
        rects = [r for r in (intersect(r, (0, 0, fb.width, fb.height)) for r in panel_rects) if r is not None]
        if not rects:
            return
        with self.lock:
            if self.base is None:
                if not self.active:
                    return
                # The Screen's picture, read once from video memory; every later Screen
                # frame is written here first (Composed.show).
                self.base = np.array(fb.pixels, copy=True)
            presenter = self.presenter
            if presenter is not None and not presenter.closed:
                region = Region(presenter.width, presenter.height)
                w, h = self.logical_size
                for r in rects:
                    x0, y0, x1, y1 = to_frame(r, self.rotate, w, h)
                    region.add(max(x0, 0), max(y0, 0), min(x1, presenter.width), min(y1, presenter.height))
                presenter.show_layers(region, self.write)
                return
            page = fb.pixels
            for r in rects:
                self.compose_into(page, r)
            fb.flush(rects)

    def write(self, page: np.ndarray, region: Region) -> None:
        """Write ``region`` (the Screen's logical coordinates) of the composed picture
        into ``page`` (a page of video memory)."""
        w, h = self.logical_size
        for y0, y1, x0, x1 in region.runs():
            self.compose_into(page, to_panel((x0, y0, x1, y1), self.rotate, w, h))

    def compose_into(self, page: np.ndarray, r: Rect) -> None:
        """Compose the panel rectangle ``r`` from ``base`` and the software layers into
        ``page``, computing in RAM and writing the result once."""
        base = self.base
        assert base is not None
        x0, y0, x1, y1 = r
        over = [(s, o) for s in self.slots if s.composed for o in [intersect(s.panel, r)] if o is not None]
        if not over:
            page[y0:y1, x0:x1] = base[y0:y1, x0:x1]
            return
        out = np.array(base[y0:y1, x0:x1], copy=True)
        fmt = self.fb.format
        for slot, (ox0, oy0, ox1, oy1) in over:
            sx, sy = slot.panel[0], slot.panel[1]
            src = slot.pixels[oy0 - sy : oy1 - sy, ox0 - sx : ox1 - sx]
            dst = out[oy0 - y0 : oy1 - y0, ox0 - x0 : ox1 - x0]
            if slot.alpha:
                rgb = convert.from_native(dst, fmt, palette=self.fb.palette)
                blend_premultiplied(rgb, src)
                convert.to_native(rgb, fmt, dst, palette=self.fb.palette)
            else:
                dst[...] = src
        page[y0:y1, x0:x1] = out

    def screen_show(self, inner: Buffering, changed: Region | None, write: Writer) -> None:
        """A Screen's frame: straight to ``inner`` while nothing is composed, else into
        ``base`` first and shown with the layers over it."""
        if not self.active:
            inner.show(changed, write)
            return
        with self.lock:
            if self.base is None:
                self.base = np.array(self.fb.pixels, copy=True)
            region = changed
            if region is None:
                region = Region(inner.width, inner.height)
                region.add_all()
            write(self.base, region)
            inner.show(changed, self.write)


_stacks: weakref.WeakKeyDictionary[Any, LayerStack] = weakref.WeakKeyDictionary()
_stacks_lock = threading.Lock()


def stack_for(fb: Framebuffer, rotate: int | None = None) -> LayerStack:
    """The layer stack of ``fb`` (made on first use, with ``rotate``, default 0)."""
    with _stacks_lock:
        stack = _stacks.get(fb)
        if stack is None:
            stack = _stacks[fb] = LayerStack(fb, rotate or 0)
        return stack


def existing_stack(fb: Framebuffer) -> LayerStack | None:
    """The layer stack of ``fb`` if layers were ever opened on it."""
    with _stacks_lock:
        return _stacks.get(fb)


class Composed(Buffering):
    """A Screen's buffering strategy with its frames shown through the framebuffer's
    layer stack (see the module). Everything else is the wrapped strategy's."""

    def __init__(self, inner: Buffering, fb: Framebuffer, rotate: int) -> None:
        # not Buffering.__init__: the wrapped strategy holds the device's state
        self.inner = inner
        self.fb = fb
        self.width, self.height = inner.width, inner.height
        self.to_panel = inner.to_panel
        self.closed = False
        self._stack = stack_for(fb, rotate)
        with self._stack.lock:
            self._stack.rotate = rotate
            self._stack.presenter = self

    def show(self, changed: Region | None, write: Writer) -> None:
        stack = self._stack
        if not stack.slots:  # no layers (as a rule): straight through, one call less a frame
            self.inner.show(changed, write)
            return
        stack.screen_show(self.inner, changed, write)

    def show_layers(self, region: Region, write: Writer) -> None:
        """Show ``region`` again with ``write`` (a layer changed there)."""
        self.inner.show(region, write)

    def visible(self) -> np.ndarray:
        return self.inner.visible()

    def flush(self) -> None:
        self.inner.flush()

    def wait_for_vsync(self) -> None:
        self.inner.wait_for_vsync()

    def close(self) -> None:
        self.closed = True
        stack = self._stack
        with stack.lock:
            if stack.presenter is self:
                stack.presenter = None
        self.inner.close()


@functools.cache
def _composed_class(inner: type[Buffering]) -> type[Composed]:
    # the wrapped strategy's name and drawing place, as class attributes (Screen reads them)
    return type(f"Composed{inner.__name__}", (Composed,), {"name": inner.name, "draws_in_place": inner.draws_in_place})


def composed(fb: Framebuffer, inner: Buffering, rotate: int) -> Buffering:
    """``inner`` (a Screen's strategy) with the layers of ``fb`` composed over its frames."""
    return _composed_class(type(inner))(inner, fb, rotate)
