"""Screen: double-buffered drawing on a framebuffer, with a console and a device that
are always put back.

A :class:`Screen` hands out a back :class:`~fbgfx.Surface` to draw a frame on and
shows it with :meth:`Screen.flip`:

- ``"flip"``: page flipping. Two pages live in video memory (the virtual height is
  grown to hold them when the driver allows, and put back on close); a flip writes
  the new frame into the hidden page and pans to it (``FBIOPAN_DISPLAY``) after the
  vertical blank where the driver can wait for one. No tearing.
- ``"copy"``: a flip copies what changed since the last one from the RAM back buffer
  to the visible page, so its cost follows the changed area.
- ``"single"``: drawing goes straight to the visible page; flip does nothing.
- ``"auto"``: ``"flip"`` where the driver pans and has (or can get) room for two
  pages, else ``"copy"``. :attr:`Screen.buffering` tells which.

Frames are composed in RAM in the device's pixel format (the back Surface's array);
video memory is only ever written, never read, because reading it is very slow on
real hardware. Only the area drawing calls changed is copied (each drawing call
reports its bounding box through ``Surface.on_draw``; direct writes to the array are
reported with :meth:`Screen.mark_dirty`). Between flips the back buffer keeps the last
frame, so a frame can change just a few pixels; ``clear=True`` starts each frame blank.

:meth:`Screen.present` shows a whole image (the video path): an image of the screen's
size is converted straight into the page that is shown next.

Closing the Screen (also on an exception, fatal signals and interpreter exit, see
:mod:`fbgfx._restore`) puts back the virtual size, the pan offset, the palette and the
console's KD mode.
"""

from __future__ import annotations

import contextlib
import errno
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import _restore, convert
from .console import Console
from .errors import FramebufferError
from .pixelformat import default_palette

__all__ = ["BUFFERING", "FITS", "Screen"]

#: Buffering strategies :class:`Screen` takes.
BUFFERING = ("auto", "flip", "copy", "single")
#: How :meth:`Screen.present` places an image of another size.
FITS = ("fit", "fill", "stretch", "center")

# More separate row runs than this in one flip are merged into horizontal bands:
# a copy per run costs a little Python time, a band copies some unchanged pixels.
_MAX_RUNS = 48
_BANDS = 16


class _Region:
    """A dirty region as one column span per row: row ``y`` needs ``[x0[y], x1[y])``.

    While the region is a single rectangle (the common case: one drawing, or drawings
    inside one another) it is kept as that rectangle in Python and costs next to
    nothing. Beyond that, adding a rectangle is two vectorised min/max operations
    whatever its size, and a flip copies runs of rows that share a span, so small
    drawings cost small copies and overlapping ones never copy a pixel twice.
    """

    __slots__ = ("x0", "x1", "top", "bottom", "width", "height", "box")

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.x0 = np.full(height, width, np.int32)
        self.x1 = np.zeros(height, np.int32)
        self.top, self.bottom = height, 0  # rows the arrays hold spans in
        # (x0, y0, x1, y1) while the region is exactly this rectangle (arrays unused),
        # None while it is empty or held in the arrays.
        self.box: Optional[Tuple[int, int, int, int]] = None

    @property
    def empty(self) -> bool:
        return self.box is None and self.top >= self.bottom

    def add(self, x0: int, y0: int, x1: int, y1: int) -> None:
        """Add the rectangle [x0, x1) x [y0, y1), already clipped to the screen."""
        if x0 >= x1 or y0 >= y1:
            return
        box = self.box
        if box is None:
            if self.top >= self.bottom:
                self.box = (x0, y0, x1, y1)
                return
        elif box[0] <= x0 and box[1] <= y0 and x1 <= box[2] and y1 <= box[3]:
            return  # inside: nothing new
        elif x0 <= box[0] and y0 <= box[1] and box[2] <= x1 and box[3] <= y1:
            self.box = (x0, y0, x1, y1)  # around: the region becomes the new one
            return
        else:
            self.box = None
            self._spans(*box)
        self._spans(x0, y0, x1, y1)

    def _spans(self, x0: int, y0: int, x1: int, y1: int) -> None:
        a = self.x0[y0:y1]
        np.minimum(a, x0, out=a)
        b = self.x1[y0:y1]
        np.maximum(b, x1, out=b)
        if y0 < self.top:
            self.top = y0
        if y1 > self.bottom:
            self.bottom = y1

    def add_all(self) -> None:
        self.clear()
        self.box = (0, 0, self.width, self.height)

    def merge(self, other: "_Region") -> None:
        """Add every span of ``other``."""
        if other.box is not None:
            self.add(*other.box)
            return
        if other.top >= other.bottom:
            return
        if self.box is not None:
            box, self.box = self.box, None
            self._spans(*box)
        t, b = other.top, other.bottom
        np.minimum(self.x0[t:b], other.x0[t:b], out=self.x0[t:b])
        np.maximum(self.x1[t:b], other.x1[t:b], out=self.x1[t:b])
        self.top, self.bottom = min(self.top, t), max(self.bottom, b)

    def clear(self) -> None:
        self.box = None
        if self.top < self.bottom:
            self.x0[self.top : self.bottom] = self.width
            self.x1[self.top : self.bottom] = 0
            self.top, self.bottom = self.height, 0

    def copy_from(self, other: "_Region") -> None:
        self.clear()
        self.merge(other)

    def runs(self) -> List[Tuple[int, int, int, int]]:
        """The region as (y0, y1, x0, x1) rectangles, top to bottom."""
        box = self.box
        if box is not None:
            return [(box[1], box[3], box[0], box[2])]
        if self.top >= self.bottom:
            return []
        t, b = self.top, self.bottom
        x0, x1 = self.x0[t:b], self.x1[t:b]
        edges = np.flatnonzero((x0[1:] != x0[:-1]) | (x1[1:] != x1[:-1])) + 1
        starts = np.concatenate(([0], edges))
        ends = np.concatenate((edges, [b - t]))
        s0, s1 = x0[starts], x1[starts]
        keep = s1 > s0
        if np.count_nonzero(keep) > _MAX_RUNS:
            return self._bands()
        return [
            (t + int(a), t + int(z), int(c0), int(c1))
            for a, z, c0, c1 in zip(starts[keep], ends[keep], s0[keep], s1[keep])
        ]

    def _bands(self) -> List[Tuple[int, int, int, int]]:
        """Many separate runs: at most _BANDS rectangles, split where rows are unchanged."""
        t, b = self.top, self.bottom
        x0, x1 = self.x0[t:b], self.x1[t:b]
        rows = np.flatnonzero(x1 > x0)
        gaps = np.diff(rows)
        # Cut at the widest stretches of unchanged rows, so they are never copied.
        cuts = min(_BANDS - 1, int(np.count_nonzero(gaps > 1)))
        split = np.sort(np.argpartition(gaps, -cuts)[-cuts:]) + 1 if cuts else []
        out = []
        for chunk in np.split(rows, split):
            lo, hi = int(chunk[0]), int(chunk[-1]) + 1
            out.append((t + lo, t + hi, int(x0[lo:hi].min()), int(x1[lo:hi].max())))
        return out


class _Page:
    """A page of video memory the Screen writes frames to, and what it lacks."""

    __slots__ = ("y", "pending")

    def __init__(self, y: int, width: int, height: int) -> None:
        self.y = y
        self.pending = _Region(width, height)  # where it differs from the back buffer
        self.pending.add_all()  # its content is unknown at first


class Screen:
    """Double-buffered drawing on a :class:`~fbgfx.Framebuffer`.

    Get one with :meth:`fbgfx.Framebuffer.screen`; use it as a context manager.

    Args:
        fb: The framebuffer.
        buffering: ``"auto"``, ``"flip"``, ``"copy"`` or ``"single"`` (see the module).
        console: Switch the VT showing on this framebuffer to graphics mode while the
            Screen is open (True, the default), leave it alone (False), or a tty object
            with ``get_mode()``/``set_mode()`` to use instead of finding the VT.
        palette: On palette devices: ``"default"`` installs
            :func:`fbgfx.default_palette` (a 6x7x6 colour cube plus grays), None keeps
            the device's colour map, an (n, 3) array installs that. The original
            colour map comes back on close.
        clear: Start every frame blank instead of with the last frame's content: True
            (black) or a colour.
        vsync: Wait for the vertical blank before showing a frame, where the driver
            can wait (most cannot; then this costs nothing).

    Raises:
        ValueError: An unknown buffering or palette option.
        FramebufferError: ``buffering="flip"`` on a device that cannot pan or has no
            room for two pages.

    Formats of fewer than 8 bits cannot be drawn in place (a Surface holds one pixel
    per byte), so with them ``"single"`` also draws in RAM and shows on :meth:`flip`.
    Change the mode before opening a Screen, not while it is open.
    """

    def __init__(
        self,
        fb: Any,
        buffering: str = "auto",
        *,
        console: Any = True,
        palette: Any = "default",
        clear: Any = False,
        vsync: bool = True,
    ) -> None:
        if buffering not in BUFFERING:
            raise ValueError(f"buffering must be one of {', '.join(BUFFERING)}, not {buffering!r}")
        if isinstance(palette, str) and palette != "default":
            raise ValueError(f"palette must be 'default', None or an (n, 3) array, not {palette!r}")
        self.fb = fb
        self._closed = False
        self._vsync = bool(vsync)
        self._console: Optional[Console] = None
        self._original_palette: Optional[np.ndarray] = None
        self._original_var = fb.var
        self._grew = False
        self._pages: List[_Page] = []
        self._front: Optional[int] = None
        self._surface: Any = None
        self._shadow: Optional[np.ndarray] = None
        self._mirror: Optional[np.ndarray] = None
        self._stale = False  # the back buffer lags behind a present()ed image
        self._stale_src: Optional[np.ndarray] = None
        self._views: dict = {}
        _restore.register(self, self.close)
        try:
            self._setup(buffering, console, palette, clear)
        except BaseException:
            self.close()
            raise
        _restore.register(self, self.close, newest=True)  # closed before fb is restored

    # -- set-up and tear-down ----------------------------------------------------------------

    def _setup(self, buffering: str, console: Any, palette: Any, clear: Any) -> None:
        fb = self.fb
        if console is True:
            self._console = Console.for_framebuffer(fb)
        elif console:
            self._console = Console(console)
        if self._console is not None:
            self._console.graphics()
        fmt = fb.format
        if fmt.indexed and palette is not None:
            self._install_palette(palette)
        self.format = fmt
        self.width, self.height = fb.width, fb.height
        self._palette = fb.palette
        self._clear_color = None if clear is False or clear is None else ("black" if clear is True else clear)
        self._background = self._native_color(self._clear_color or "black")

        chosen = buffering
        if buffering in ("auto", "flip"):
            why = self._setup_pages()
            if why is None:
                chosen = "flip"
            elif buffering == "flip":
                raise FramebufferError(errno.EINVAL, f"cannot page-flip: {why}; use buffering='copy' or 'auto'", fb.path)
            else:
                chosen = "copy"
        self.buffering = chosen
        w, h = self.width, self.height
        self._direct = chosen == "single" and not fmt.is_packed
        if self._direct:
            # Sub-byte formats cannot be drawn in place (one pixel per byte in a
            # Surface); they take the RAM path and write packed bytes on flip.
            array = fb.pixels
        else:
            self._shadow = np.empty(fmt.array_shape(h, w), fmt.dtype)
            convert.fill(self._shadow, self._background)
            if self._clear_color is None:
                self._mirror = self._shadow.copy()
            array = self._shadow
            if chosen != "flip":
                self._pages = [_Page(fb.var.yoffset, w, h)]
                self._front = 0
        self._current = _Region(w, h)  # drawn since the last flip
        self._drawn = _Region(w, h)  # drawn since the last clear (clear=True)
        self._carry = _Region(w, h)  # cleared at the last flip, not shown yet
        from .surface import Surface

        self._surface = Surface.wrap(array, fmt, palette=self._palette)
        if not self._direct:
            self._surface.on_draw = self._on_draw

    def _install_palette(self, palette: Any) -> None:
        fb = self.fb
        colors = default_palette(fb.format.bpp) if isinstance(palette, str) else np.asarray(palette)
        if colors.ndim != 2 or colors.shape[1] not in (3, 4):
            raise ValueError(f"palette must be an (n, 3) array, got shape {colors.shape}")
        try:
            self._original_palette = fb.get_palette()
        except OSError:
            return  # no colour map to set: draw with the one the device has
        fb.set_palette(colors[: len(self._original_palette)])

    def _setup_pages(self) -> Optional[str]:
        """Find or make room for two pages; returns why not, or None on success."""
        fb = self.fb
        var, fix = fb.var, fb.fix
        if fb.format.is_packed and (var.xoffset * fb.format.bpp) % 8:
            return "the pan offset does not start on a byte"
        step = fix.ypanstep
        if not step:
            return "the driver cannot pan (ypanstep 0)"
        second = -(-var.yres // step) * step
        need = second + var.yres
        if var.yres_virtual < need:
            try:
                fb.set_mode(virtual_height=need)  # tested with FB_ACTIVATE_TEST first
            except (OSError, ValueError) as e:
                return f"no room for a second page and the driver refused {var.yres_virtual} -> {need} virtual lines ({e})"
            self._grew = True
            var, fix = fb.var, fb.fix
            if var.yres_virtual < need or not fix.ypanstep:
                return "the driver did not make room for a second page"
        self._page_x = var.xoffset
        self._pages = [_Page(0, var.xres, var.yres), _Page(second, var.xres, var.yres)]
        self._front = next((i for i, p in enumerate(self._pages) if p.y == var.yoffset), None)
        return None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def close(self) -> None:
        """Put back the virtual size, pan offset, palette and console mode; safe twice.

        The framebuffer stays open (and keeps the last frame on screen where the pan
        offset allows).
        """
        if self._closed:
            return
        self._closed = True
        fb = self.fb
        try:
            if not fb.closed:
                self._restore_geometry()
                if self._original_palette is not None:
                    self._try("the palette", fb.set_palette, self._original_palette)
        finally:
            try:
                if self._console is not None:
                    self._console.restore()
            finally:
                _restore.unregister(self)
                self._surface = self._shadow = self._mirror = self._stale_src = None
                self._views = {}

    def _restore_geometry(self) -> None:
        fb, orig = self.fb, self._original_var
        var = fb.var
        if getattr(self, "buffering", None) == "flip" and (var.xoffset, var.yoffset) != (orig.xoffset, orig.yoffset):
            # The last frame stays on screen: copy the shown page to where the original
            # offset shows it before panning back (one read of video memory, at close).
            self._try("the last frame", self._copy_front_to, orig.xoffset, orig.yoffset)
        if self._grew:
            self._try("the virtual size", fb.set_mode, virtual_width=orig.xres_virtual, virtual_height=orig.yres_virtual)
        var = fb.var
        if (var.xoffset, var.yoffset) != (orig.xoffset, orig.yoffset):
            self._try("the pan offset", fb.pan, orig.xoffset, orig.yoffset)

    def _copy_front_to(self, x: int, y: int) -> None:
        fb = self.fb
        fb.view(x, y, self.width, self.height)[...] = fb.pixels

    def _try(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except (OSError, ValueError) as e:
            warnings.warn(f"fbgfx: could not restore {what} on {self.fb.path}: {e}", RuntimeWarning, stacklevel=3)

    def __enter__(self) -> "Screen":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._closed or not hasattr(self, "buffering"):
            state = "closed" if self._closed else "opening"
        else:
            state = f"{self.width}x{self.height} {self.format.name} {self.buffering}"
        return f"<Screen {self.fb.path} {state}>"

    # -- drawing ----------------------------------------------------------------------------------

    @property
    def surface(self) -> Any:
        """The back :class:`~fbgfx.Surface`: draw the next frame here, then :meth:`flip`.

        In ``"single"`` buffering it is the visible page itself.
        """
        self._check_open()
        if self._stale:
            self._catch_up()
        return self._surface

    @property
    def size(self) -> Tuple[int, int]:
        """(width, height) in pixels."""
        return self.width, self.height

    @contextlib.contextmanager
    def frame(self) -> Iterator[Any]:
        """Draw one frame: yields the back Surface and flips when the block ends cleanly.

        On an exception nothing is shown: the visible page stays as it was and the
        back buffer goes back to the last shown frame (blank with ``clear``). In
        ``"single"`` buffering drawing is already visible, so nothing can be undone.

        Example:
            >>> with screen.frame() as s:
            ...     s.rectangle((10, 10, 50, 50), fill="red")
        """
        surface = self.surface
        try:
            yield surface
        except BaseException:
            if not self._closed:
                self.discard()
            raise
        self.flip()

    def mark_dirty(self, box: Optional[Sequence[int]] = None) -> None:
        """Report pixels written into ``surface.array`` directly (drawing calls report
        themselves), so the next flip shows them.

        Args:
            box: (left, top, right, bottom), right and bottom exclusive as for
                ``PIL.Image.crop``; clipped to the screen. None: the whole screen.
        """
        self._check_open()
        if self._direct:
            return
        if box is None:
            x0, y0, x1, y1 = 0, 0, self.width, self.height
        else:
            try:
                x0, y0, x1, y1 = (int(v) for v in box)
            except (TypeError, ValueError):
                raise TypeError(f"box must be (left, top, right, bottom) integers, not {box!r}") from None
            x0, x1 = max(x0, 0), min(x1, self.width)
            y0, y1 = max(y0, 0), min(y1, self.height)
        self._on_draw(x0, y0, x1, y1)

    def _on_draw(self, x0: int, y0: int, x1: int, y1: int) -> None:
        if self._stale:
            # Drawn on through a Surface kept from before present(): bring the rest of
            # the back buffer up to the presented image around what was drawn.
            self._catch_up(exclude=(x0, y0, x1, y1))
        self._current.add(x0, y0, x1, y1)
        if self._clear_color is not None:
            self._drawn.add(x0, y0, x1, y1)

    def discard(self) -> None:
        """Drop what was drawn since the last flip: the back buffer becomes the last
        shown frame again (blank with ``clear``)."""
        self._check_open()
        if self._direct or self._stale:
            return
        shadow = self._shadow
        for y0, y1, x0, x1 in self._current.runs():
            if self._mirror is not None:
                shadow[y0:y1, x0:x1] = self._mirror[y0:y1, x0:x1]
            else:
                convert.fill(shadow[y0:y1, x0:x1], self._background)
        self._current.copy_from(self._carry)
        self._drawn.clear()

    # -- showing -----------------------------------------------------------------------------------

    def flip(self) -> None:
        """Show the back buffer.

        Writes only what changed into video memory: in ``"copy"`` into the visible page,
        in ``"flip"`` into the hidden page, which is then panned to. Afterwards the back
        buffer holds the frame just shown (or is blank with ``clear``).
        """
        self._check_open()
        if self._direct:
            return
        if self._stale and self._current.empty:
            self._vsync_wait()
            return  # nothing drawn since present(): it is on screen already
        current = self._current
        if current.empty:
            self._vsync_wait()
            return
        if self.buffering == "flip":
            back = self._back_index()
            for page in self._pages:
                page.pending.merge(current)
            page = self._pages[back]
            self._write(page.pending, self._view(self._page_x, page.y))
            page.pending.clear()
            self._vsync_wait()
            self.fb.pan(self._page_x, page.y)
            self._front = back
        else:
            page = self._pages[0]
            page.pending.merge(current)
            self._vsync_wait()
            var = self.fb.var
            self._write(page.pending, self._view(var.xoffset, var.yoffset))
            page.pending.clear()
        self._after_flip()

    def present(self, image: Any, fit: str = "fit", background: Any = "black") -> None:
        """Show a whole picture: draw it as the next frame and flip.

        The fast path for video: an RGB image of the screen's size is converted
        straight into the page shown next, without touching the back buffer (it
        catches up when it is next drawn on). A NumPy array is read again then, so
        keep it unchanged until the next frame or present().

        Args:
            image: A PIL image (any mode) or a (h, w, 3) RGB / (h, w, 4) RGBA uint8
                array, any size. Alpha is blended over ``background``.
            fit: For another size: ``"fit"`` (scale to fit inside, keep the aspect
                ratio), ``"fill"`` (scale to cover, crop the overflow), ``"stretch"``
                (scale to the screen size) or ``"center"`` (no scaling, crop).
            background: The colour around a picture that does not cover the screen.

        Raises:
            ValueError: Unknown ``fit``, or an unusable image.
            TypeError: Not an image.
        """
        self._check_open()
        if fit not in FITS:
            raise ValueError(f"fit must be one of {', '.join(FITS)}, not {fit!r}")
        rgb = convert.as_rgb(image)
        if rgb.shape[2] == 4:
            rgb = _flatten(rgb, self._rgb_of(background))
        if rgb.shape[:2] != (self.height, self.width):
            rgb, x, y = _place(rgb, self.width, self.height, fit)
            if rgb.shape[:2] != (self.height, self.width):
                self._present_part(rgb, x, y, background)
                return
        self._present_full(rgb)

    def _present_full(self, rgb: np.ndarray) -> None:
        fmt, pal = self.format, self._palette
        if self._direct:
            convert.to_native(rgb, fmt, self.fb.pixels, palette=pal)
            return
        if fmt.is_packed:
            self._stale, self._stale_src = False, None
            convert.to_native(rgb, fmt, self._shadow, palette=pal)
            self._current.add_all()
            if self._clear_color is not None:
                self._drawn.add_all()
            self.flip()
            return
        if self.buffering == "flip":
            back = self._back_index()
            page = self._pages[back]
            convert.to_native(rgb, fmt, self._view(self._page_x, page.y), palette=pal)
            for other in self._pages:
                other.pending.add_all()
            page.pending.clear()
            self._vsync_wait()
            self.fb.pan(self._page_x, page.y)
            self._front = back
        else:
            self._vsync_wait()
            var = self.fb.var
            convert.to_native(rgb, fmt, self._view(var.xoffset, var.yoffset), palette=pal)
            self._pages[0].pending.clear()
        self._current.clear()
        self._drawn.clear()
        self._stale = True
        self._stale_src = rgb if self._clear_color is None else None

    def _present_part(self, rgb: np.ndarray, x: int, y: int, background: Any) -> None:
        """A picture smaller than the screen: background around it, then flip."""
        fmt, pal = self.format, self._palette
        h, w = rgb.shape[:2]
        if self._direct:
            target = self.fb.pixels
        else:
            self._stale, self._stale_src = False, None  # every pixel is drawn below
            target = self._shadow
        value = self._native_color(background)
        for bx0, by0, bx1, by1 in _around((x, y, x + w, y + h), self.width, self.height):
            convert.fill(target[by0:by1, bx0:bx1], value)
        convert.to_native(rgb, fmt, target[y : y + h, x : x + w], palette=pal)
        if not self._direct:
            self._current.add_all()
            if self._clear_color is not None:
                self._drawn.add_all()
            self.flip()

    # -- internals --------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise FramebufferError(errno.EBADF, "the screen is closed", self.fb.path)

    def _view(self, x: int, y: int) -> np.ndarray:
        """A page of video memory, shaped as ``fb.pixels``; kept while the mapping lasts."""
        fb = self.fb
        key = (x, y, fb.stride, id(fb.memory))  # a cached view keeps its memory alive
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= 4:
                self._views.clear()
            view = self._views[key] = fb.view(x, y, self.width, self.height)
        return view

    def _back_index(self) -> int:
        return 1 if self._front == 0 else 0

    def _vsync_wait(self) -> None:
        if self._vsync:
            self._vsync = self.fb.wait_for_vsync() or False

    def _write(self, region: _Region, target: np.ndarray) -> None:
        """Copy ``region`` of the back buffer into ``target`` (a page of video memory)."""
        shadow, fmt = self._shadow, self.format
        if not fmt.is_packed:
            for y0, y1, x0, x1 in region.runs():
                target[y0:y1, x0:x1] = shadow[y0:y1, x0:x1]
            return
        per_byte = 8 // fmt.bpp
        for y0, y1, x0, x1 in region.runs():
            b0, b1 = x0 // per_byte, -(-x1 // per_byte)
            target[y0:y1, b0:b1] = fmt.pack_bits(shadow[y0:y1, b0 * per_byte : min(b1 * per_byte, self.width)])

    def _after_flip(self) -> None:
        shadow = self._shadow
        if self._mirror is not None:
            for y0, y1, x0, x1 in self._current.runs():
                self._mirror[y0:y1, x0:x1] = shadow[y0:y1, x0:x1]
            self._current.clear()
            return
        # clear=True: blank what this frame drew; the screen still shows it there,
        # so those areas are what the next flip must write at least.
        for y0, y1, x0, x1 in self._drawn.runs():
            convert.fill(shadow[y0:y1, x0:x1], self._background)
        self._current.copy_from(self._drawn)
        self._carry.copy_from(self._drawn)
        self._drawn.clear()

    def _catch_up(self, exclude: Optional[Tuple[int, int, int, int]] = None) -> None:
        """Bring the back buffer to the last present()ed image (blank with ``clear``)."""
        src, self._stale_src = self._stale_src, None
        self._stale = False
        shadow, fmt, pal = self._shadow, self.format, self._palette
        keep = exclude if exclude is not None else (0, 0, 0, 0)
        rects = _around(keep, self.width, self.height)
        if src is None:
            for x0, y0, x1, y1 in rects:
                convert.fill(shadow[y0:y1, x0:x1], self._background)
            self._current.add_all()  # the screen shows the picture, the buffer is blank
            self._carry.add_all()
            return
        if self._mirror is not None:
            convert.to_native(src, fmt, self._mirror, palette=pal)
            for x0, y0, x1, y1 in rects:
                shadow[y0:y1, x0:x1] = self._mirror[y0:y1, x0:x1]
        else:  # pragma: no cover - a source is kept only with a mirror
            for x0, y0, x1, y1 in rects:
                convert.to_native(src[y0:y1, x0:x1], fmt, shadow[y0:y1, x0:x1], palette=pal)

    def _rgb_of(self, color: Any) -> Tuple[int, int, int]:
        from PIL import ImageColor

        if isinstance(color, str):
            return ImageColor.getrgb(color)[:3]
        if isinstance(color, (int, np.integer)):
            return self.format.unpack_color(int(color), self._palette)
        values = tuple(int(c) for c in color)
        if len(values) not in (3, 4) or any(not 0 <= c <= 255 for c in values):
            raise ValueError(f"a colour must be (r, g, b) with values 0..255, not {color!r}")
        return values[:3]  # type: ignore[return-value]

    def _native_color(self, color: Any) -> int:
        if isinstance(color, (int, np.integer)) and not isinstance(color, bool):
            return int(color)
        return self.format.pack_color(self._rgb_of(color), self._palette)


# -- picture placement ----------------------------------------------------------------------------


def _flatten(rgba: np.ndarray, background: Tuple[int, int, int]) -> np.ndarray:
    """RGBA over a solid colour, as RGB."""
    a = rgba[..., 3:4].astype(np.uint16)
    bg = np.array(background, np.uint16)
    out = (rgba[..., :3].astype(np.uint16) * a + bg * (255 - a) + 127) // 255
    return out.astype(np.uint8)


def _place(rgb: np.ndarray, width: int, height: int, fit: str) -> Tuple[np.ndarray, int, int]:
    """Scale and crop a picture for a width x height screen; returns it and where it goes."""
    from PIL import Image

    h, w = rgb.shape[:2]
    if fit == "stretch":
        size, box = (width, height), (0, 0, w, h)
    elif fit == "center":
        size, box = (w, h), None
    else:
        scale = (min if fit == "fit" else max)(width / w, height / h)
        if fit == "fill":
            # Crop the source to what shows before scaling, so nothing is scaled twice.
            cw, ch = min(w, width / scale), min(h, height / scale)
            left, top = (w - cw) / 2, (h - ch) / 2
            size, box = (width, height), (left, top, left + cw, top + ch)
        else:
            size = (max(1, min(width, round(w * scale))), max(1, min(height, round(h * scale))))
            box = (0, 0, w, h)
    if box is not None and (size != (w, h) or box != (0, 0, w, h)):
        rgb = np.asarray(Image.fromarray(np.ascontiguousarray(rgb)).resize(size, Image.BILINEAR, box=box))
    h, w = rgb.shape[:2]
    x, y = (width - w) // 2, (height - h) // 2
    if x < 0 or y < 0:  # "center" of a larger picture: crop the middle
        cx, cy = max(0, -x), max(0, -y)
        rgb = rgb[cy : cy + min(h, height), cx : cx + min(w, width)]
        x, y = max(x, 0), max(y, 0)
    return rgb, x, y


def _around(box: Tuple[int, int, int, int], width: int, height: int) -> List[Tuple[int, int, int, int]]:
    """The screen minus ``box`` as up to four (x0, y0, x1, y1) rectangles."""
    x0, y0, x1, y1 = box
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x0 >= x1 or y0 >= y1:
        return [(0, 0, width, height)]
    rects = [(0, 0, width, y0), (0, y1, width, height), (0, y0, x0, y1), (x1, y0, width, y1)]
    return [r for r in rects if r[0] < r[2] and r[1] < r[3]]
