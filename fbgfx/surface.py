"""Surface: Pillow ImageDraw-style drawing straight into native pixel memory.

A :class:`Surface` is a NumPy array in one :class:`~fbgfx.PixelFormat` (a RAM buffer,
a page of video memory, or a view of either) plus drawing. Primitives have
``ImageDraw``'s names and signatures and produce the same pixels Pillow produces on
an RGB image; the rasterisers run in C (``native/draw.c``, and ``native/smooth.c``
through :mod:`fbgfx._draw.smooth` for ``antialias=True``). Colours with alpha blend; on
palette formats the nearest palette entry is used. Text, images and the batch forms are
methods of its bases in ``_draw/text.py``, ``_draw/images.py`` and ``_draw/batch.py``.
"""

from __future__ import annotations

import errno
import functools
import linecache
import math
from collections.abc import Sequence
from typing import Any, Callable, NoReturn, Optional, TypeVar, Union, cast

import numpy as np
from PIL import Image

from . import convert
from ._draw import smooth
from ._draw.batch import BatchDrawing
from ._draw.drawlog import DrawLog
from ._draw.geometry import BIG, NUMBERS, Coords, Flat, check_angle, check_size, check_width, flat, int_box, number
from ._draw.geometry import box as box_of
from ._draw.images import ImageDrawing
from ._draw.target import Kernel, Rect
from ._draw.text import TextDrawing
from ._ffi import (
    check_value,
    fast_ellipse,
    fast_line,
    fast_rect,
    fast_smooth_circle,
    fast_smooth_line,
    fast_smooth_polygon,
    ffi,
    lib,
)
from .color import BLEND, OPAQUE, SKIP, ColorLike, Ink, Packer, whole_channels
from .pixelformat import PixelFormat, default_palette

__all__ = ["Surface"]

#: A colour argument: None means the method's default (white, or no outline).
Fill = Optional[ColorLike]
#: A pixel format or its name.
FormatLike = Union[PixelFormat, str]
_WHITE = "white"


# The Surface method each rasteriser serves, for error messages in the user's words.
_METHODS = {
    "draw_point": "point",
    "draw_points": "points",
    "draw_line": "line",
    "draw_polyline": "line",
    "draw_lines": "lines",
    "draw_rect": "rectangle",
    "draw_rects": "rectangles",
    "draw_polygon": "polygon",
    "draw_ellipse": "ellipse",
    "draw_ellipses": "ellipses",
    "draw_arc": "arc",
    "draw_chord": "chord",
    "draw_pieslice": "pieslice",
    "draw_mask": "bitmap",
    "smooth_line": "line",
    "smooth_polyline": "line",
    "smooth_lines": "lines",
    "smooth_polygon": "polygon",
    "smooth_ellipse": "ellipse",
    "smooth_rounded_rect": "rounded_rectangle",
}


def _fail(rc: int, fn: Any) -> NoReturn:
    """Raise for a rasteriser's ``-errno``: the only bad argument C sees is a coordinate
    that is NaN or infinite (Python checks the rest)."""
    what = _METHODS.get(fn.__name__, "drawing")
    if rc == -errno.EINVAL:
        raise ValueError(f"{what}: coordinates must be finite numbers (no NaN or infinity)")
    check_value(rc, what)
    raise AssertionError(f"{what}: unexpected result {rc}")  # pragma: no cover - rc < 0 raised above


# What makes a fast path give up and take the slow one, which accepts or refuses the
# call properly: a colour or coordinates of another form, or out of range.
_MISS = (LookupError, TypeError, ValueError, OverflowError)

# The one-call fast path of point, line, rectangle, ellipse and circle: an opaque colour
# nobody is listening for, drawn by one C call. *_rgb kernels take an (r, g, b) tuple's
# channels and pack them in C (a fresh colour each call is the common case: gradients,
# gauges, fades); *_c kernels take a colour seen before, packed. It runs on every call,
# where one more Python call would cost a tenth of the call, so it is written once here
# and compiled into each method by _fast_path (as dataclasses writes __init__): the
# method runs it inline, with its kernels as globals (found faster than an attribute of
# the cffi library), and hands every other call to the method as written. Where the
# method has a fast function of native/fastcall.c (``native``), that is tried first: it
# takes xy and fill as given, without cffi's price per call, and leaves to the cffi
# kernels below whatever it does not read exactly.
_FAST_PATH = """\
def {name}({params}):
    if self._quiet{when}:
{native}        try:
            {unpack}
            if type(fill) is tuple:
                r, g, b = fill
                if type(r) is not int or type(g) is not int or type(b) is not int:
                    r, g, b = whole_channels(r, g, b)
                if rgb_kernel(self._t, r, g, b, {coords}) >= 0:
                    return None
            elif packed_kernel(self._t, self._fast[type(fill)][fill], {coords}) >= 0:
                return None
        except MISS:
            pass
    return written({args})
"""

_Method = TypeVar("_Method", bound=Callable[..., None])


def _fast_path(
    kernels: str, coords: str, unpack: str = "", when: str = "", native: Callable[..., int] | None = None
) -> Callable[[_Method], _Method]:
    """Put the one-call fast path (``_FAST_PATH``) in front of a drawing method.

    Args:
        kernels: The kernels' name in ``native/draw.c`` without ``_rgb`` / ``_c``.
        coords: The coordinates the kernels take after the colour, as local names.
        unpack: The statement that sets them from the method's arguments (by default
            ``coords = xy``); what it raises sends the call to the written method.
        when: What else, besides nobody listening, the fast path needs to be true.
        native: The method's function of native/fastcall.c (``fast_line``...), called
            with the draw target's address, ``xy``, ``fill`` and the colour cache first.
    """

    def fast(written: _Method) -> _Method:
        code = written.__code__
        named = code.co_varnames[: code.co_argcount]
        keywords = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        source = _FAST_PATH.format(
            name=written.__name__,
            params=", ".join([*named, *(("*", *keywords) if keywords else ())]),
            when=f" and {when}" if when else "",
            native="        if native(self._ta, xy, fill, self._fast) >= 0:\n            return None\n"
            if native
            else "",
            unpack=unpack or f"{coords} = xy",
            coords=coords,
            args=", ".join([*named, *(f"{k}={k}" for k in keywords)]),
        )
        filename = f"<fbgfx: the fast path of Surface.{written.__name__}>"
        namespace: dict[str, Any] = {
            "rgb_kernel": getattr(lib, f"{kernels}_rgb"),
            "packed_kernel": getattr(lib, f"{kernels}_c"),
            "whole_channels": whole_channels,
            "MISS": _MISS,
            "native": native,
            "written": written,
        }
        exec(compile(source, filename, "exec"), namespace)
        # so that tracebacks through the fast path show its lines
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        method = namespace[written.__name__]
        method.__defaults__, method.__kwdefaults__ = written.__defaults__, written.__kwdefaults__
        functools.update_wrapper(method, written)  # name, docstring, and the signature for help()
        return cast(_Method, method)

    return fast


def _ptr(a: Any) -> Any:
    return ffi.cast("const double *", a.ctypes.data) if isinstance(a, np.ndarray) else a


class Surface(TextDrawing, ImageDrawing, BatchDrawing):
    """A drawable NumPy array in a native pixel format.

    Args:
        width, height: Size in pixels.
        format: A :class:`PixelFormat` or its name (``"RGB565"``, ``"XRGB8888"``...).
        palette: For palette formats, the (n, 3) uint8 colour map colours are matched
            against; defaults to :func:`fbgfx.default_palette`.

    Attributes:
        array: The native pixels, shape ``format.array_shape(height, width)``.
        on_draw: Called as ``on_draw(x0, y0, x1, y1)`` with the clipped bounding box
            (exclusive end) of every drawing call that changed pixels.

    Threads: different surfaces can be drawn from different threads at the same time
    (the C kernels run without the GIL, except for a small shape's one call, where
    letting the GIL go would cost more than the drawing; each call keeps alive
    everything C reads).
    One surface is drawn from one thread at a time: concurrent calls on the same
    surface share its drawing state and may mix up colours or ``on_draw`` boxes,
    though they never write outside it.

    Errors: every drawing method raises ValueError for a colour it cannot read
    (``"nocolour"``, a tuple of 2 channels) or coordinates that are not finite numbers,
    TypeError for a coordinate list of the wrong length, and
    :class:`~fbgfx.FramebufferError` once the display a Screen's surface belongs to is
    closed. Shapes are clipped to the surface: drawing outside it is no error.

    Example:
        >>> s = fbgfx.Surface(64, 48, "RGB565")
        >>> s.rectangle((8, 8, 55, 39), fill="red", outline="white")
        >>> s.to_image().getpixel((20, 20))
        (255, 0, 0)
    """

    def __init__(self, width: int, height: int, format: FormatLike = "XRGB8888", *, palette: Any = None) -> None:
        fmt = _as_format(format)
        width, height = check_size(width, height)
        self._setup(np.zeros(fmt.array_shape(height, width), fmt.dtype), fmt, palette)

    @classmethod
    def wrap(cls, array: np.ndarray, format: FormatLike, *, palette: Any = None, log: DrawLog | None = None) -> Surface:
        """A surface over an existing native array (video memory, a back buffer...).

        Args:
            array: Shape ``format.array_shape(h, w)`` and dtype ``format.dtype``; rows
                may be any distance apart, pixels must be contiguous within a row.
                The first pixel and every row must be aligned to the pixel size (2
                or 4 bytes): the C rasterisers store whole pixels. Sub-byte formats
                hold one pixel value per byte.
            format: A :class:`PixelFormat` or its name.
            palette: As for the constructor.
            log: For fbgfx's Screen: a :class:`fbgfx._draw.drawlog.DrawLog` that records
                what every drawing call changes.

        Raises:
            TypeError: Not an array, or the wrong dtype.
            ValueError: Wrong shape, read-only, pixels not contiguous in a row, or
                pixels not aligned to their size (copy such an array first, e.g.
                ``np.array(a)``, and write the copy back).
        """
        fmt = _as_format(format)
        if not isinstance(array, np.ndarray):
            raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
        if array.dtype != fmt.dtype:
            raise TypeError(f"{fmt.name} needs dtype {fmt.dtype}, got {array.dtype}")
        if array.ndim < 2 or array.shape != fmt.array_shape(array.shape[0], array.shape[1]):
            raise ValueError(
                f"{fmt.name} needs an array of shape {fmt.array_shape(*(array.shape[:2] or (0, 0)))}, got {array.shape}"
            )
        if not array.flags.writeable:
            raise ValueError("the array is read-only")
        check_size(array.shape[1], array.shape[0])
        bpp = max(1, fmt.bpp // 8)
        if array.shape[1] > 1 and array.strides[1] != bpp or (fmt.bpp == 24 and array.strides[2] != 1):
            raise ValueError("pixels must be contiguous within a row (only rows may be strided)")
        size = array.dtype.itemsize
        rows = array.strides[0] if array.shape[0] > 1 else 0
        if array.__array_interface__["data"][0] % size or rows % size:
            raise ValueError(
                f"{fmt.name} pixels must be aligned to {size} bytes (the first pixel and every row); "
                "wrap an aligned copy instead"
            )
        self = cls.__new__(cls)
        self._setup(array, fmt, palette, log=log)
        return self

    def _setup(
        self,
        array: np.ndarray,
        fmt: PixelFormat,
        palette: Any,
        parent: Surface | None = None,
        offset: tuple[int, int] = (0, 0),
        log: DrawLog | None = None,
    ) -> None:
        # _t.data points into this array: the surface owns it for its whole life, and
        # `array` is read-only so that no assignment can leave C a dangling pointer.
        self._array = array
        self.format = fmt
        self.height, self.width = array.shape[0], array.shape[1]
        if palette is not None:
            palette = convert.check_palette(palette, 1 << fmt.bpp if fmt.indexed else 256)
        elif fmt.indexed:
            palette = default_palette(fmt.bpp)
        self.palette = palette
        self._parent = parent
        self._offset = offset
        # Colour caches, one dict per type of colour: True == 1 and 1.0 == 1 as dict
        # keys, but a cache must not accept what resolve() refuses.
        self._inks: dict[type, dict[Any, Ink]] = {}  # type -> {colour: Ink}
        # Colours are packed without NumPy (fresh colours are the common case: gradients,
        # gauges, fades); _opaque(colour) packs an (r, g, b) tuple of ints, or finds an
        # opaque colour in _fast, or raises LookupError/TypeError for the slow path.
        self._packer = Packer(fmt, palette)
        self._fast: dict[type, dict[Any, int]] = self._packer.cache  # opaque colours only
        self._opaque = self._packer.opaque
        self._cached = 0
        # what drawing calls change, logged in C for a Screen (fbgfx._draw.drawlog)
        self._log: DrawLog | None = None
        self.on_draw = None
        t = ffi.new("draw_target *")
        t.data = ffi.cast("uint8_t *", array.__array_interface__["data"][0])
        t.stride = array.strides[0] if self.height > 1 else 0
        t.bpp = max(1, fmt.bpp // 8)
        t.ink = self._packer.native  # kept alive by self._packer
        self._t = t
        self._ta = int(ffi.cast("uintptr_t", t))  # for the fast_* calls, which take its address
        self._bpp = t.bpp
        if log is not None:
            log.attach(t, self.height, self._listeners_changed)
            self._log = log
        # Text and masks blend in one C call with the surface's packed colour, without
        # convert.blend_mask's per-call checks and colour packing (direct and gray formats
        # of whole bytes; palettes keep convert.blend_mask's exact nearest-entry search).
        self._mask_spec = convert.native_spec(fmt, None, 0) if fmt.bpp >= 8 and not fmt.indexed else None
        # its address for the fast_smooth_* calls (0: they leave such a surface to the general path)
        self._fa = 0 if self._mask_spec is None else int(ffi.cast("uintptr_t", self._mask_spec.c))
        self._clip: Rect | None = None
        self._cbox: Rect = (0, 0, 0, 0)
        self.reset_clip()

    @property
    def array(self) -> np.ndarray:
        """The native pixels, shape ``format.array_shape(height, width)`` (read-only
        attribute; write into the array itself)."""
        return self._array

    @property
    def on_draw(self) -> Callable[[int, int, int, int], None] | None:
        """Called as ``on_draw(x0, y0, x1, y1)`` (exclusive end, clipped) after every
        drawing call that changed pixels; None to stop."""
        return self._on_draw

    @on_draw.setter
    def on_draw(self, fn: Callable[[int, int, int, int], None] | None) -> None:
        if fn is not None and not callable(fn):
            raise TypeError("on_draw must be callable or None")
        self._on_draw = fn
        self._listeners_changed()

    def _listeners_changed(self) -> None:
        # _quiet: no Python code wants each call's box, so the one-call fast paths may
        # draw (they log their boxes in C); _boxes: calls work out what they changed.
        hooked = self._log is not None and self._log.before_write is not None
        self._quiet = self._on_draw is None and not hooked and self._parent is None
        self._boxes = not self._quiet or self._log is not None

    # -- geometry --------------------------------------------------------------------

    @property
    def size(self) -> tuple[int, int]:
        """(width, height)."""
        return (self.width, self.height)

    @property
    def clip(self) -> Rect | None:
        """The clip rectangle (x0, y0, x1, y1), exclusive end, or None for the whole surface."""
        return self._clip

    @clip.setter
    def clip(self, rect: Coords | None) -> None:
        self.set_clip(rect)

    def set_clip(self, rect: Coords | None) -> None:
        """Restrict drawing to ``rect`` (x0, y0, x1, y1 with exclusive end; None for all).

        The rectangle is intersected with the surface; an empty one draws nothing.
        """
        if rect is None:
            self.reset_clip()
            return
        x0, y0, x1, y1 = int_box(rect, "set_clip")
        x0, y0 = max(0, min(x0, self.width)), max(0, min(y0, self.height))
        x1, y1 = max(x0, min(x1, self.width)), max(y0, min(y1, self.height))
        self._clip = (x0, y0, x1, y1)
        self._set_target_clip(x0, y0, x1, y1)

    def reset_clip(self) -> None:
        """Draw on the whole surface again."""
        self._clip = None
        self._set_target_clip(0, 0, self.width, self.height)

    def _set_target_clip(self, x0: int, y0: int, x1: int, y1: int) -> None:
        t = self._t
        t.cx0, t.cy0, t.cx1, t.cy1 = x0, y0, x1, y1
        self._cbox = (x0, y0, x1, y1)

    def subsurface(self, rect: Coords) -> Surface:
        """A surface over part of this one (x0, y0, x1, y1 exclusive, or ((x0, y0), (x1, y1))).

        It shares the pixels; drawing on it reports to this surface's ``on_draw`` with
        the offset added.

        Raises:
            ValueError: The rectangle does not lie inside the surface.
        """
        x0, y0, x1, y1 = int_box(rect, "subsurface")
        if not (0 <= x0 <= x1 <= self.width and 0 <= y0 <= y1 <= self.height):
            raise ValueError(f"subsurface {(x0, y0, x1, y1)} is not inside the {self.width}x{self.height} surface")
        sub = Surface.__new__(Surface)
        sub._setup(self.array[y0:y1, x0:x1], self.format, self.palette, parent=self, offset=(x0, y0))  # noqa: SLF001 (Surface's own member, on another Surface)
        return sub

    # -- plumbing ----------------------------------------------------------------------

    def _ink(self, color: ColorLike) -> Ink:
        try:
            cached: Ink = self._inks[type(color)][color]
            return cached
        except (KeyError, TypeError):  # TypeError: unhashable (a list)
            pass
        ink = self._packer.ink(color)
        if not isinstance(color, (str, int, tuple, np.integer)):
            return ink  # lists, arrays: not hashable; other types: rare
        if self._cached > 256:
            self._inks.clear()
            self._fast.clear()
            self._cached = 0
        self._cached += 1
        self._inks.setdefault(type(color), {})[color] = ink
        if ink.mode == OPAQUE:
            self._fast.setdefault(type(color), {})[color] = ink.value
        return ink

    def _before_write(self) -> None:
        s: Surface | None = self
        while s is not None:
            log = s._log  # noqa: SLF001 (Surface's own member, on another Surface)
            if log is not None and log.before_write is not None:
                log.before_write()
            s = s._parent  # noqa: SLF001 (Surface's own member, on another Surface)

    def _notify(self, x0: int, y0: int, x1: int, y1: int) -> None:
        if self._log is not None:
            lib.draw_log(self._t, x0, y0, x1, y1)
        if self._parent is not None:
            # the parent (a Screen's frame) hears first: a user's on_draw may raise
            ox, oy = self._offset
            self._parent._notify(x0 + ox, y0 + oy, x1 + ox, y1 + oy)  # noqa: SLF001 (Surface's own member, on another Surface)
        if self._on_draw is not None:
            self._on_draw(x0, y0, x1, y1)

    def _own_target(self) -> Any:
        """A copy of the draw target for one call: C draws without the GIL, so threads
        drawing on this surface must not set each other's colour or bounding box."""
        return ffi.new("draw_target *", self._t[0])

    def _run(self, ink: Ink, fn: Kernel, *args: Any) -> None:
        """Rasterise with ``fn(target, *args)``: straight into memory, or via a mask when blending."""
        mode = ink.mode
        if mode == OPAQUE:
            t = self._own_target()
            t.color = ink.value
            if not self._boxes:
                rc = fn(t, *args)
                if rc < 0:
                    _fail(rc, fn)
                return
            if not self._quiet:
                self._before_write()  # (blending: _blend does it)
            t.bx0 = t.by0 = BIG
            t.bx1 = t.by1 = -BIG
            rc = fn(t, *args)
            # reported even when a later item of a batch is refused: what was drawn
            # before it is in the pixels, and a Screen must show it
            if t.bx0 < t.bx1:
                self._notify(t.bx0, t.by0, t.bx1, t.by1)
            if rc < 0:
                _fail(rc, fn)
        elif mode == BLEND:
            mask, box = self._coverage(fn, *args)
            if box is not None:
                self._blend(mask, box, ink)

    def _coverage(self, fn: Kernel, *args: Any) -> tuple[np.ndarray, Rect | None]:
        """Draw into a coverage mask over the clip rectangle; (mask, bbox or None)."""
        cx0, cy0, cx1, cy1 = self._cbox
        mask = np.zeros((cy1 - cy0, cx1 - cx0), np.uint8)
        m = ffi.new("draw_target *")
        m.data = ffi.cast("uint8_t *", mask.ctypes.data)
        m.stride, m.bpp, m.ox, m.oy = max(mask.shape[1], 1), 1, cx0, cy0
        m.cx0, m.cy0, m.cx1, m.cy1 = cx0, cy0, cx1, cy1
        m.color = 255
        m.bx0 = m.by0 = BIG
        m.bx1 = m.by1 = -BIG
        rc = fn(m, *args)
        if rc < 0:
            _fail(rc, fn)
        if m.bx0 >= m.bx1:
            return mask, None
        return mask, (m.bx0, m.by0, m.bx1, m.by1)

    def _blend(self, mask: np.ndarray, box: Rect, ink: Ink) -> None:
        """Blend ``ink`` through ``mask`` (covering the clip rectangle) inside ``box``."""
        x0, y0, x1, y1 = box
        cx0, cy0 = self._cbox[:2]
        if not self._quiet:
            self._before_write()
        convert.blend_mask(
            self.array[y0:y1, x0:x1],
            np.ascontiguousarray(mask[y0 - cy0 : y1 - cy0, x0 - cx0 : x1 - cx0]),
            ink.rgba,
            self.format,
            palette=self.palette,
        )
        self._notify(x0, y0, x1, y1)

    def _write_mask(self, mask: np.ndarray, box: Rect | None, ink: Ink) -> None:
        """Write (or blend) ``ink`` wherever ``mask`` (over the clip rectangle) is set."""
        if box is None or ink.mode == SKIP:
            return
        if ink.mode == BLEND:
            self._blend(mask, box, ink)
            return
        # C reads exactly the mask's own h x w bytes: its size, not the clip's (which
        # another thread may have changed since the mask was made)
        mask = np.ascontiguousarray(mask)
        h, w = mask.shape
        cx0, cy0 = self._cbox[:2]
        self._run(ink, lib.draw_mask, ffi.cast("const uint8_t *", mask.ctypes.data), max(w, 1), cx0, cy0, w, h)

    def _outline_ink(self, fill: Fill, outline: Fill) -> tuple[Ink | None, Ink | None]:
        """Pillow's ink rules: no colours at all means a white outline."""
        if fill is None and outline is None:
            return None, self._ink(_WHITE)
        return (None if fill is None else self._ink(fill)), (None if outline is None else self._ink(outline))

    def _smooth_run(self, ink: Ink, call: smooth.Call | None) -> None:
        """Cover a shape with ``ink`` by a kernel of ``native/smooth.c`` (``antialias=True``)."""
        if call is None or ink.mode == SKIP:
            return
        fn, args = call
        spec = self._mask_spec
        # a long shape goes in bands of rows: Ctrl-C stops it between two of them
        bands = smooth.bands(call, self._cbox[1], self._cbox[3])
        if spec is None:
            # palettes (and sub-byte pixels): coverage into a mask, blended to the nearest entries
            cx0, cy0, cx1, cy1 = self._cbox
            mask = np.zeros((cy1 - cy0, cx1 - cx0), np.uint8)
            box = ffi.new("int32_t[4]")
            x0 = y0 = BIG
            x1 = y1 = -BIG
            for row0, row1 in bands:
                rc = fn(self._t, ffi.NULL, ffi.from_buffer("uint8_t[]", mask), 0, 0, 0, 255, 0, box, row0, row1, *args)
                if rc < 0:
                    _fail(rc, fn)
                if box[0] < box[2]:
                    x0, y0, x1, y1 = min(x0, box[0]), min(y0, box[1]), max(x1, box[2]), max(y1, box[3])
            if x0 < x1:
                self._blend(mask, (x0, y0, x1, y1), ink)
            return
        r, g, b, a = ink.rgba
        if self._quiet:  # (C logs what it wrote for a Screen itself)
            for row0, row1 in bands:
                rc = fn(self._t, spec.c, ffi.NULL, r, g, b, a, ink.value, ffi.NULL, row0, row1, *args)
                if rc < 0:
                    _fail(rc, fn)
            return
        self._before_write()
        box = ffi.new("int32_t[4]")
        for row0, row1 in bands:
            rc = fn(self._t, spec.c, ffi.NULL, r, g, b, a, ink.value, box, row0, row1, *args)
            if box[0] < box[2]:
                self._notify(box[0], box[1], box[2], box[3])
            if rc < 0:
                _fail(rc, fn)

    def _smooth_named(self, fast: Callable[..., int], xy: Any, fill: Fill, *sizes: Any) -> bool:
        """Second chance for a fast_smooth_* call, which reads (r, g, b) tuples only: a
        colour name this surface has drawn with before, opaque, as its (r, g, b). True
        when it drew."""
        if type(fill) is str:
            ink = self._inks.get(str, {}).get(fill)
            if ink is not None and ink.mode == OPAQUE:
                return fast(self._ta, self._fa, xy, ink.rgba[:3], *sizes) >= 0
        return False

    def _smooth_shape(self, fill: Fill, outline: Fill, width: float, shape: Callable[[float], smooth.Call]) -> None:
        """A smooth shape's fill, then its outline (``shape(w)``: the kernel call for
        outline width ``w``, 0 for the fill)."""
        fill_ink, ink = self._outline_ink(fill, outline)
        w = smooth.width(width, "outline")
        if fill_ink is not None:
            self._smooth_run(fill_ink, shape(0.0))
        if ink is not None and ink != fill_ink and w > 0:
            self._smooth_run(ink, shape(w))

    # -- whole-surface ---------------------------------------------------------------

    def clear(self, fill: ColorLike = "black") -> None:
        """Fill the clip rectangle (the whole surface by default) with one colour."""
        ink = self._ink(fill)
        x0, y0, x1, y1 = self._cbox
        if ink.mode == OPAQUE and x0 < x1 and y0 < y1:
            if not self._quiet:
                self._before_write()
            convert.fill(self.array[y0:y1, x0:x1], ink.value)
            self._notify(x0, y0, x1, y1)
        elif ink.mode == BLEND:
            self._run(ink, lib.draw_rect, x0, y0, x1 - 1, y1 - 1, 1, 1)

    def to_image(self) -> Image.Image:
        """The pixels as a new PIL image: RGB, or RGBA when the format stores alpha."""
        a = self.format.has_alpha
        rgb = convert.from_native(self.array, self.format, palette=self.palette, alpha=a)
        return Image.fromarray(np.ascontiguousarray(rgb), "RGBA" if a else "RGB")

    # -- primitives --------------------------------------------------------------------

    @_fast_path("draw_point", "x, y")
    def point(self, xy: Coords, fill: Fill = None) -> None:
        """Draw one or more single pixels (``ImageDraw.point``)."""
        ink = self._ink(_WHITE if fill is None else fill)
        if len(xy) == 2 and type(xy[0]) in NUMBERS:
            self._run(ink, lib.draw_point, xy[0], xy[1])
            return
        f = flat(xy, "point")
        self._run(ink, lib.draw_points, _ptr(f), len(f) // 2, ffi.NULL)

    @_fast_path(
        "draw_line", "x0, y0, x1, y1", when="not antialias and width == 1 and width is not True", native=fast_line
    )
    def line(
        self, xy: Coords, fill: Fill = None, width: float = 1, joint: str | None = None, antialias: bool = False
    ) -> None:
        """Draw a line or connected line segments (``ImageDraw.line``).

        Args:
            xy: Two or more points, either form.
            fill: Colour (white when None, as in Pillow).
            width: Line width in pixels; 0 draws nothing.
            joint: ``"curve"`` rounds the joints of wide lines, as Pillow does.
            antialias: Smooth edges by exact coverage: the line is the rectangle of
                width ``width`` (any number) around the segment between the pixel
                centres, with butt ends and, with ``joint="curve"``, round joints.
        """
        if antialias:
            if self._quiet and (
                fast_smooth_line(self._ta, self._fa, xy, fill, width) >= 0
                or self._smooth_named(fast_smooth_line, xy, fill, width)
            ):
                return
            w = smooth.width(width, "line")
            if w > 0:
                self._smooth_run(self._ink(_WHITE if fill is None else fill), smooth.line(xy, w, joint))
            return
        ink = self._ink(_WHITE if fill is None else fill)
        w = 1
        if width != 1 or width is True:
            w = check_width(width)
            if w == 0:
                return
        f = flat(xy, "line")
        if len(f) == 4:
            self._run(ink, lib.draw_line, f[0], f[1], f[2], f[3], w)
        else:
            self._run(ink, lib.draw_polyline, _ptr(f), len(f) // 2, w)
        if joint == "curve" and w > 4 and len(f) > 4:
            self._curve_joints(f, fill, w)

    def _curve_joints(self, f: Flat, fill: Fill, width: int) -> None:
        # The round joints ImageDraw.line(joint="curve") adds, computed the same way.
        points = [(f[i], f[i + 1]) for i in range(0, len(f), 2)]
        for i in range(1, len(points) - 1):
            point = points[i]
            angles = [
                math.degrees(math.atan2(end[0] - start[0], start[1] - end[1])) % 360
                for start, end in ((points[i - 1], point), (point, points[i + 1]))
            ]
            if angles[0] == angles[1]:
                continue

            def coord_at_angle(coord: tuple[float, float], angle: float) -> tuple[float, ...]:
                x, y = coord
                angle -= 90
                distance = width / 2 - 1
                return tuple(
                    p + (math.floor(p_d) if p_d > 0 else math.ceil(p_d))
                    for p, p_d in (
                        (x, distance * math.cos(math.radians(angle))),
                        (y, distance * math.sin(math.radians(angle))),
                    )
                )

            flipped = (angles[1] > angles[0] and angles[1] - 180 > angles[0]) or (
                angles[1] < angles[0] and angles[1] + 180 > angles[0]
            )
            coords = [
                (point[0] - width / 2 + 1, point[1] - width / 2 + 1),
                (point[0] + width / 2 - 1, point[1] + width / 2 - 1),
            ]
            if flipped:
                start, end = (angles[1] + 90, angles[0] + 90)
            else:
                start, end = (angles[0] - 90, angles[1] - 90)
            self.pieslice(coords, start - 90, end - 90, fill)
            if width > 8:
                if flipped:
                    gap = [coord_at_angle(point, angles[0] + 90), point, coord_at_angle(point, angles[1] + 90)]
                else:
                    gap = [coord_at_angle(point, angles[0] - 90), point, coord_at_angle(point, angles[1] - 90)]
                self.line(gap, fill, width=3)

    @_fast_path("draw_rect", "x0, y0, x1, y1", when="outline is None", native=fast_rect)
    def rectangle(self, xy: Coords, fill: Fill = None, outline: Fill = None, width: float = 1) -> None:
        """Draw a rectangle with inclusive corners (``ImageDraw.rectangle``)."""
        self._box_shape(lib.draw_rect_c, lib.draw_rect, 1, xy, fill, outline, width)

    def rounded_rectangle(  # noqa: C901 - Pillow's rounded_rectangle, step for step
        self,
        xy: Coords,
        radius: float = 0,
        fill: Fill = None,
        outline: Fill = None,
        width: float = 1,
        *,
        corners: Sequence[bool] | None = None,
        antialias: bool = False,
    ) -> None:
        """Draw a rectangle with rounded corners (``ImageDraw.rounded_rectangle``); with
        ``antialias=True`` smoothly, covering [x0, x1 + 1] x [y0, y1 + 1] with corners of
        radius ``radius``.

        Raises:
            ValueError: A coordinate or the radius is not a finite number.
        """
        if antialias:
            return self._smooth_shape(fill, outline, width, lambda w: smooth.rounded_rectangle(xy, radius, w, corners))
        (x0, y0, x1, y1) = [number(v, "rounded_rectangle") for v in box_of(xy)]
        if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
            raise ValueError("rounded_rectangle: coordinates must be finite numbers")
        if not math.isfinite(radius):
            raise ValueError(f"rounded_rectangle: radius must be a finite number, got {radius!r}")
        if x1 < x0:
            x0, x1 = x1, x0
        if y1 < y0:
            y0, y1 = y1, y0
        box = (x0, y0, x1, y1)
        corners = (True, True, True, True) if corners is None else tuple(corners)
        d = min(x1 - x0, y1 - y0, radius * 2)
        x0, y0, x1, y1 = round(x0), round(y0), round(x1), round(y1)
        full_x = full_y = False
        if all(corners):
            full_x = d >= x1 - x0 - 1
            if full_x:
                d = x1 - x0
            full_y = d >= y1 - y0 - 1
            if full_y:
                d = y1 - y0
            if full_x and full_y:
                return self.ellipse(box, fill, outline, width)
        if d == 0 or not any(corners):
            return self.rectangle(box, fill, outline, width)
        r = int(d // 2)
        fill_ink, ink = self._outline_ink(fill, outline)
        width = check_width(width)

        def parts() -> tuple[tuple[tuple[float, float, float, float], int, int], ...]:
            if full_x:
                return (((x0, y0, x0 + d, y0 + d), 180, 360), ((x0, y1 - d, x0 + d, y1), 0, 180))
            if full_y:
                return (((x0, y0, x0 + d, y0 + d), 90, 270), ((x1 - d, y0, x1, y0 + d), 270, 90))
            four = (
                ((x0, y0, x0 + d, y0 + d), 180, 270),
                ((x1 - d, y0, x1, y0 + d), 270, 360),
                ((x1 - d, y1 - d, x1, y1), 0, 90),
                ((x0, y1 - d, x0 + d, y1), 90, 180),
            )
            return tuple(p for i, p in enumerate(four) if corners[i])

        def rect(b: Sequence[float], k: Ink) -> None:
            self._run(k, lib.draw_rect, b[0], b[1], b[2], b[3], 1, 1)

        if fill_ink is not None:
            for b, s, e in parts():
                self._run(fill_ink, lib.draw_pieslice, b[0], b[1], b[2], b[3], s, e, 1, 0)
            if full_x:
                rect((x0, y0 + r + 1, x1, y1 - r - 1), fill_ink)
            elif x1 - r - 1 >= x0 + r + 1:
                rect((x0 + r + 1, y0, x1 - r - 1, y1), fill_ink)
            if not full_x and not full_y:
                left = [x0, y0, x0 + r, y1]
                if corners[0]:
                    left[1] += r + 1
                if corners[3]:
                    left[3] -= r + 1
                rect(left, fill_ink)
                right = [x1 - r, y0, x1, y1]
                if corners[1]:
                    right[1] += r + 1
                if corners[2]:
                    right[3] -= r + 1
                rect(right, fill_ink)
        if ink is not None and ink != fill_ink and width != 0:
            for b, s, e in parts():
                self._run(ink, lib.draw_arc, b[0], b[1], b[2], b[3], s, e, width)
            if not full_x:
                top = [x0, y0, x1, y0 + width - 1]
                if corners[0]:
                    top[0] += r + 1
                if corners[1]:
                    top[2] -= r + 1
                rect(top, ink)
                bottom = [x0, y1 - width + 1, x1, y1]
                if corners[3]:
                    bottom[0] += r + 1
                if corners[2]:
                    bottom[2] -= r + 1
                rect(bottom, ink)
            if not full_y:
                left = [x0, y0, x0 + width - 1, y1]
                if corners[0]:
                    left[1] += r + 1
                if corners[3]:
                    left[3] -= r + 1
                rect(left, ink)
                right = [x1 - width + 1, y0, x1, y1]
                if corners[1]:
                    right[1] += r + 1
                if corners[2]:
                    right[3] -= r + 1
                rect(right, ink)

    @_fast_path("draw_ellipse", "x0, y0, x1, y1", when="not antialias and outline is None", native=fast_ellipse)
    def ellipse(
        self, xy: Coords, fill: Fill = None, outline: Fill = None, width: float = 1, *, antialias: bool = False
    ) -> None:
        """Draw an ellipse inside a bounding box (``ImageDraw.ellipse``); with
        ``antialias=True`` smoothly: the ellipse inscribed in [x0, x1 + 1] x [y0, y1 + 1]."""
        if antialias:
            return self._smooth_shape(fill, outline, width, lambda w: smooth.ellipse(xy, w))
        self._box_shape(lib.draw_ellipse_c, lib.draw_ellipse, 0, xy, fill, outline, width)

    def _box_shape(
        self, fast: Kernel, draw: Kernel, fill_width: int, xy: Coords, fill: Fill, outline: Fill, width: float
    ) -> None:
        """A shape given by its bounding box: the one-call C path for an opaque fill
        nobody is watching, else fill and outline through inks."""
        if outline is None and self._quiet:
            # second chance for colours the callers' fast paths leave out: (r, g, b, 255)
            try:
                x0, y0, x1, y1 = xy
                if fast(self._t, self._opaque(fill), x0, y0, x1, y1) >= 0:
                    return
            except _MISS:
                pass
        b = box_of(xy)
        fill_ink, ink = self._outline_ink(fill, outline)
        if fill_ink is not None:
            self._run(fill_ink, draw, b[0], b[1], b[2], b[3], 1, fill_width)
        if ink is not None and ink != fill_ink and width != 0:
            self._run(ink, draw, b[0], b[1], b[2], b[3], 0, check_width(width))

    @_fast_path(
        "draw_ellipse",
        "x0, y0, x1, y1",
        unpack="x, y = xy; x0, y0, x1, y1 = x - radius, y - radius, x + radius, y + radius",
        when="not antialias and outline is None",
    )
    def circle(
        self,
        xy: Sequence[float],
        radius: float,
        fill: Fill = None,
        outline: Fill = None,
        width: float = 1,
        *,
        antialias: bool = False,
    ) -> None:
        """Draw a circle given its centre and radius (``ImageDraw.circle``); with
        ``antialias=True`` smoothly: the circle of that radius around (x + 0.5, y + 0.5)."""
        if antialias:
            if (
                outline is None
                and self._quiet
                and (
                    fast_smooth_circle(self._ta, self._fa, xy, fill, radius, width) >= 0
                    or self._smooth_named(fast_smooth_circle, xy, fill, radius, width)
                )
            ):
                return None
            return self._smooth_shape(fill, outline, width, lambda w: smooth.circle(xy, radius, w))
        x, y = xy
        if not math.isfinite(radius):
            raise ValueError(f"circle: radius must be a finite number, got {radius!r}")
        self.ellipse((x - radius, y - radius, x + radius, y + radius), fill, outline, width)

    def arc(
        self, xy: Coords, start: float, end: float, fill: Fill = None, width: float = 1, *, antialias: bool = False
    ) -> None:
        """Draw an arc of the ellipse in ``xy`` from ``start`` to ``end`` degrees (``ImageDraw.arc``);
        with ``antialias=True`` smoothly: the band of ``width`` inside the ellipse's edge."""
        ink = self._ink(_WHITE if fill is None else fill)
        if antialias:
            w = smooth.width(width, "arc")
            if w > 0:
                self._smooth_run(ink, smooth.arc("arc", xy, check_angle(start), check_angle(end), w))
            return
        b = box_of(xy)
        if width != 0:
            self._run(
                ink, lib.draw_arc, b[0], b[1], b[2], b[3], check_angle(start), check_angle(end), check_width(width)
            )

    def chord(
        self,
        xy: Coords,
        start: float,
        end: float,
        fill: Fill = None,
        outline: Fill = None,
        width: float = 1,
        *,
        antialias: bool = False,
    ) -> None:
        """Draw a chord: an arc closed by a straight line (``ImageDraw.chord``); smoothly
        with ``antialias=True``."""
        if antialias:
            return self._smooth_cut("chord", xy, start, end, fill, outline, width)
        self._cut(lib.draw_chord, xy, start, end, fill, outline, width)

    def pieslice(
        self,
        xy: Coords,
        start: float,
        end: float,
        fill: Fill = None,
        outline: Fill = None,
        width: float = 1,
        *,
        antialias: bool = False,
    ) -> None:
        """Draw a pie slice (``ImageDraw.pieslice``); smoothly with ``antialias=True``."""
        if antialias:
            return self._smooth_cut("pieslice", xy, start, end, fill, outline, width)
        self._cut(lib.draw_pieslice, xy, start, end, fill, outline, width)

    def _smooth_cut(
        self, kind: str, xy: Coords, start: float, end: float, fill: Fill, outline: Fill, width: float
    ) -> None:
        s, e = check_angle(start), check_angle(end)
        self._smooth_shape(fill, outline, width, lambda w: smooth.arc(kind, xy, s, e, w))

    def _cut(self, draw: Kernel, xy: Coords, start: float, end: float, fill: Fill, outline: Fill, width: float) -> None:
        """A closed part of an ellipse (chord, pie slice): fill, then outline."""
        b = box_of(xy)
        s, e = check_angle(start), check_angle(end)
        fill_ink, ink = self._outline_ink(fill, outline)
        if fill_ink is not None:
            self._run(fill_ink, draw, b[0], b[1], b[2], b[3], s, e, 1, 0)
        if ink is not None and ink != fill_ink and width != 0:
            self._run(ink, draw, b[0], b[1], b[2], b[3], s, e, 0, check_width(width))

    def polygon(
        self, xy: Coords, fill: Fill = None, outline: Fill = None, width: float = 1, *, antialias: bool = False
    ) -> None:
        """Draw a polygon, concave or self-intersecting, filled even-odd (``ImageDraw.polygon``);
        with ``antialias=True`` smoothly, its points on the pixel centres and its outline
        the band of ``width`` inside its edges.

        Raises:
            TypeError: Fewer than two points.
        """
        if (
            antialias
            and outline is None
            and self._quiet
            and (
                fast_smooth_polygon(self._ta, self._fa, xy, fill, width) >= 0
                or self._smooth_named(fast_smooth_polygon, xy, fill, width)
            )
        ):
            return
        f = flat(xy, "polygon")
        n = len(f) // 2
        if n < 2:
            raise TypeError("polygon: coordinate list must contain at least 2 coordinates")
        if antialias:
            return self._smooth_shape(fill, outline, width, lambda w: smooth.polygon(f, w))
        if outline is None and not self._boxes:
            # fast path: an opaque fill nobody is watching, one C call
            try:
                value = self._opaque(fill)
            except _MISS:
                pass
            else:
                t = self._own_target()
                t.color = value
                rc = lib.draw_polygon(t, _ptr(f), n, 1, 0)
                if rc < 0:
                    _fail(rc, lib.draw_polygon)
                return
        fill_ink, ink = self._outline_ink(fill, outline)
        if fill_ink is not None:
            self._run(fill_ink, lib.draw_polygon, _ptr(f), n, 1, 0)
        if ink is not None and ink != fill_ink and width != 0:
            width = check_width(width)
            if width == 1:
                self._run(ink, lib.draw_polygon, _ptr(f), n, 0, 1)
            elif width > 1:
                # as Pillow: a doubled-width outline kept inside the filled shape
                inside, box = self._coverage(lib.draw_polygon, _ptr(f), n, 1, 0)
                if box is None:
                    return
                edge, box2 = self._coverage(lib.draw_polygon, _ptr(f), n, 0, width * 2 - 1)
                if box2 is None:
                    return
                np.minimum(edge, inside, out=edge)
                ys, xs = np.nonzero(edge)
                if len(xs):
                    cx0, cy0 = self._cbox[:2]
                    bb = (int(xs.min()) + cx0, int(ys.min()) + cy0, int(xs.max()) + 1 + cx0, int(ys.max()) + 1 + cy0)
                    self._write_mask(edge, bb, ink)

    def regular_polygon(
        self,
        bounding_circle: Sequence[Any],
        n_sides: int,
        rotation: float = 0,
        fill: Fill = None,
        outline: Fill = None,
        width: float = 1,
        *,
        antialias: bool = False,
    ) -> None:
        """Draw a regular polygon inscribed in ``bounding_circle`` = (x, y, r) or ((x, y), r)
        (smoothly with ``antialias=True``)."""
        from PIL import ImageDraw  # noqa: PLC0415 (ImageDraw only for regular polygons)

        if not math.isfinite(rotation):
            raise ValueError(f"regular_polygon: rotation must be a finite number, got {rotation!r}")
        # Pillow's own vertex maths (private API), so the polygon's points are exactly
        # those of ImageDraw.regular_polygon, whose pixels fbgfx matches.
        xy = ImageDraw._compute_regular_polygon_vertices(bounding_circle, n_sides, rotation)  # noqa: SLF001
        self.polygon(xy, fill, outline, width, antialias=antialias)

    def bitmap(self, xy: Coords, bitmap: Any, fill: Fill = None) -> None:
        """Paint ``fill`` through a mask image (mode "1" or "L") at ``xy`` (``ImageDraw.bitmap``).

        Raises:
            TypeError: ``bitmap`` is neither a PIL image nor an (h, w) uint8/bool array,
                or ``xy`` is not one point.
            ValueError: ``xy`` is not finite.
        """
        if isinstance(bitmap, Image.Image):
            mask = np.asarray(bitmap.convert("L") if bitmap.mode != "L" else bitmap)
        else:
            mask = np.asarray(bitmap)
            if mask.dtype == bool:
                mask = mask.astype(np.uint8) * 255
            if mask.dtype != np.uint8 or mask.ndim != 2:
                raise TypeError("bitmap must be a PIL image or an (h, w) uint8/bool array")
        f = flat(xy, "bitmap")
        if len(f) != 2:
            raise TypeError("bitmap: coordinate list must contain exactly 1 coordinate")
        if not all(math.isfinite(v) for v in f):
            raise ValueError("bitmap: coordinates must be finite")
        ink = self._ink(_WHITE if fill is None else fill)
        self._paint_mask(mask, int(f[0]), int(f[1]), ink)

    def _paint_mask(self, mask: np.ndarray, x: int, y: int, ink: Ink, check_empty: bool = True) -> None:
        """Blend ``ink`` through coverage ``mask`` placed with its top-left at (x, y)."""
        if ink.mode == SKIP:
            return
        cx0, cy0, cx1, cy1 = self._cbox
        h, w = mask.shape
        x0 = x if x > cx0 else cx0
        y0 = y if y > cy0 else cy0
        x1 = x + w if x + w < cx1 else cx1
        y1 = y + h if y + h < cy1 else cy1
        if x0 >= x1 or y0 >= y1:
            return
        sub = mask[y0 - y : y1 - y, x0 - x : x1 - x]
        if check_empty and not sub.any():
            return
        if not self._quiet:
            self._before_write()
        spec = self._mask_spec
        if spec is not None and mask.dtype == np.uint8 and mask.flags.c_contiguous:
            t = self._t
            r, g, b, a = ink.rgba
            # pointers from the surface's and the mask's bases: mask stays referenced here
            src = ffi.from_buffer("uint8_t[]", mask) + ((y0 - y) * w + (x0 - x))
            dst = t.data + (y0 * t.stride + x0 * self._bpp)
            rc = lib.convert_blend_mask(src, w, dst, t.stride, x1 - x0, y1 - y0, r, g, b, a, ink.value, spec.c)
            check_value(rc, "blend_mask")
        else:
            convert.blend_mask(self.array[y0:y1, x0:x1], sub, ink.rgba, self.format, palette=self.palette)
        if self._boxes:
            self._notify(x0, y0, x1, y1)

    def __repr__(self) -> str:
        return f"<Surface {self.width}x{self.height} {self.format.name}>"


def _as_format(format: FormatLike) -> PixelFormat:
    if isinstance(format, PixelFormat):
        return format
    if isinstance(format, str):
        return PixelFormat.from_name(format)
    raise TypeError(f"format must be a PixelFormat or a format name, got {format!r}")
