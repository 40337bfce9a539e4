"""Surface's batch forms: many lines, rectangles, ellipses or points in one call.

:class:`BatchDrawing` is a base of :class:`fbgfx.Surface`: an (n, k) array of shapes and
optional per-shape colours go to one C call (``native/draw.c``'s batch kernels), or to
one smooth kernel call per colour with ``antialias=True``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import convert
from .._ffi import ffi, lib
from ..color import OPAQUE, ColorLike
from . import smooth
from .geometry import check_width
from .target import Kernel, Mixin

__all__ = ["BatchDrawing"]

Fill = Optional[ColorLike]
_WHITE = "white"


class BatchDrawing(Mixin):
    """``lines``, ``rectangles``, ``ellipses`` and ``points``."""

    def _batch(self, array: Any, cols: int, what: str) -> np.ndarray:
        given = np.asarray(array)
        if given.dtype.kind in "USO" and (
            given.dtype.kind != "O" or any(isinstance(v, (str, bytes)) for v in given.flat)
        ):  # NumPy would read "1" as 1.0
            raise TypeError(f"{what}: coordinates must be numbers, got an array of {given.dtype}")
        a = np.ascontiguousarray(given, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != cols:
            raise ValueError(f"{what}: expected an (n, {cols}) array, got shape {a.shape}")
        return a

    def _colors(self, colors: Any, n: int) -> np.ndarray | None:
        """One packed value per item (C reads exactly ``n``), or None to use ``fill``."""
        return None if colors is None else self._packer.pack_many(colors, n)

    def _batch_run(self, fn: Kernel, a: np.ndarray, colors: Any, fill: Fill, *extra: int) -> None:
        n = len(a)
        cols = self._colors(colors, n)
        ink = self._ink(_WHITE if fill is None else fill)
        if cols is None and ink.mode != OPAQUE:
            # blended colours are drawn one by one; `a` (C-contiguous, from _batch)
            # owns every row C reads and stays referenced across each call
            for i in range(n):
                self._run(ink, fn, ffi.cast("const double *", a[i].ctypes.data), 1, ffi.NULL, *extra)
            return
        ink = ink._replace(mode=OPAQUE)
        # `a` and `cols` are locals: they own the memory C reads until it returns
        cptr = ffi.NULL if cols is None else ffi.cast("const uint32_t *", cols.ctypes.data)
        self._run(ink, fn, ffi.cast("const double *", a.ctypes.data), n, cptr, *extra)

    def lines(
        self, xy: Any, colors: Any = None, fill: Fill = None, width: float = 1, *, antialias: bool = False
    ) -> None:
        """Draw many independent lines in one call.

        Args:
            xy: (n, 4) array of (x0, y0, x1, y1).
            colors: Optional per-line colours: (n,) native ints, (n, 3|4) RGB(A) (alpha
                ignored), or a list of colours.
            fill: The colour of every line when ``colors`` is None (white by default).
            width: Line width.
            antialias: Smooth lines, as :meth:`line` draws them.
        """
        a = self._batch(xy, 4, "lines")
        if antialias:
            return self._smooth_lines(a, colors, fill, smooth.width(width, "lines"))
        width = check_width(width)
        if width != 0 and len(a):
            self._batch_run(lib.draw_lines, a, colors, fill, width)

    def _smooth_lines(self, a: np.ndarray, colors: Any, fill: Fill, w: float) -> None:
        if w == 0 or not len(a):
            return
        cols = self._colors(colors, len(a))
        if cols is None:
            self._smooth_run(self._ink(_WHITE if fill is None else fill), smooth.lines(a, w))
            return
        # per-line colours: their RGB, from the packed values _colors checked
        fmt = self.format
        if fmt.bpp == 24:
            native = cols.astype("<u4").view(np.uint8).reshape(1, -1, 4)[:, :, :3]
        else:
            native = cols.astype(fmt.dtype).reshape(fmt.array_shape(1, len(cols)))
        rgb = convert.from_native(np.ascontiguousarray(native), fmt, palette=self.palette)[0]
        for row, (r, g, b) in zip(a, rgb.tolist()):
            self._smooth_run(self._ink((r, g, b)), smooth.lines(row[None], w))

    def rectangles(
        self, xy: Any, fill: Fill = None, colors: Any = None, outline: bool = False, width: float = 1
    ) -> None:
        """Draw many rectangles (inclusive corners) in one call: (n, 4) array of boxes.

        Filled with ``fill`` or per-rectangle ``colors``; with ``outline=True`` only
        their outlines of ``width`` are drawn.
        """
        a = self._batch(xy, 4, "rectangles")
        if len(a):
            self._batch_run(lib.draw_rects, a, colors, fill, 0 if outline else 1, check_width(width))

    def ellipses(self, xy: Any, fill: Fill = None, colors: Any = None, outline: bool = False, width: float = 1) -> None:
        """Draw many filled (or outlined) ellipses in one call: (n, 4) array of boxes."""
        a = self._batch(xy, 4, "ellipses")
        if len(a):
            self._batch_run(lib.draw_ellipses, a, colors, fill, 0 if outline else 1, check_width(width))

    def points(self, xy: Any, colors: Any = None, fill: Fill = None) -> None:
        """Draw many single pixels in one call: (n, 2) array of (x, y)."""
        a = self._batch(xy, 2, "points")
        if len(a):
            self._batch_run(lib.draw_points, a, colors, fill)
