"""Antialiased shapes: each drawing call's geometry as one call of a coverage kernel.

``Surface`` methods called with ``antialias=True`` come here to turn their arguments
into the continuous shape they stand for and the ``native/smooth.c`` kernel that
covers it exactly (each pixel gets the shape's area inside it, in 1/255 steps). The
Surface then runs the kernel with its colour (``Surface._smooth_run``).

The geometry, in the pixel grid where pixel (i, j) is the square [i, i+1) x [j, j+1):

- a point (x, y) of a line or polygon is the pixel centre (x + 0.5, y + 0.5);
- a line of width w is the rectangle of width w around its segment (butt ends); with
  ``joint="curve"`` its joints are discs of diameter w;
- an ellipse with box (x0, y0, x1, y1) is the one inscribed in [x0, x1 + 1] x
  [y0, y1 + 1], the pixels Pillow's box covers; arcs, chords and pie slices are parts
  of it between parametric angles, as in Pillow;
- a circle at (x, y) with radius r is centred on (x + 0.5, y + 0.5);
- a rounded rectangle (x0, y0, x1, y1) covers [x0, x1 + 1] x [y0, y1 + 1] with
  corners of radius ``radius``;
- an outline of width w is the shape minus the shape moved inward by w (an arc's
  band lies inside its curve), as Pillow keeps outlines inside the shape.

Coordinates may be floats. Nothing here touches pixels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .._ffi import ffi, lib
from .geometry import Coords, flat, number
from .geometry import box as box_of

__all__ = ["Call", "arc", "bands", "circle", "ellipse", "line", "lines", "polygon", "rounded_rectangle"]

#: A kernel and its shape arguments (after the paint arguments the Surface adds).
Call = tuple[Callable[..., int], tuple[Any, ...]]

#: Shapes of more points than this are drawn in bands of rows, one kernel call each:
#: the interpreter sees Ctrl-C between two (a kernel runs without the GIL), and each
#: row is covered by exactly one call, so the pixels are the same. BANDS of them, and
#: more for more points (one a BAND_SHARE of points), so that a band stays short.
BAND_POINTS = 4096
BANDS = 16
BAND_SHARE = 16384
_ALL_ROWS = ((-(1 << 31), (1 << 31) - 1),)

_ELLIPSE, _ARC, _CHORD, _PIE = 0, 1, 2, 3
_CUTS = {"arc": _ARC, "chord": _CHORD, "pieslice": _PIE}


def width(w: Any, what: str) -> float:
    """A width as a float: any finite number >= 0 (fractions are drawn as such).

    Raises:
        ValueError: Negative, NaN, infinity, a bool or not a number.
    """
    if type(w) is int or type(w) is float:  # the common case, quickly
        if w >= 0 and w != math.inf:
            return float(w)
    elif isinstance(w, (bool, np.bool_)):
        raise ValueError(f"{what}: width must be a number, got {w!r}")
    try:
        v = float(w)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: width must be a number, got {w!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{what}: width must be a finite number >= 0, got {w!r}")
    return v


def bands(call: Call, top: int, bottom: int) -> Sequence[tuple[int, int]]:
    """The bands of rows [row0, row1) that ``call`` is drawn in, clip rows ``top`` to ``bottom``."""
    fn, args = call
    rows = bottom - top
    if fn not in _MANY or args[1] <= BAND_POINTS or rows < 2:
        return _ALL_ROWS
    k = min(max(BANDS, args[1] // BAND_SHARE), rows)
    edges = [top + rows * i // k for i in range(k + 1)]
    return list(zip(edges, edges[1:]))


def _points(xy: Coords, what: str) -> Any:
    """Points moved onto the pixel centres, as C reads them (a list of floats, which
    cffi copies into a C array for the call, or an array's memory)."""
    f = flat(xy, what)
    if isinstance(f, np.ndarray):
        return ffi.from_buffer("double[]", f + 0.5)
    return [v + 0.5 for v in f]


def line(xy: Coords, w: float, joint: str | None) -> Call | None:
    """A line or connected segments of width ``w``; None when there is nothing to draw."""
    if len(xy) == 4 and all(type(v) in (int, float) for v in xy):
        x0, y0, x1, y1 = xy
        return lib.smooth_line, (x0 + 0.5, y0 + 0.5, x1 + 0.5, y1 + 0.5, w)
    a = _points(xy, "line")
    n = len(a) // 2
    if n < 2:
        return None
    if n == 2:
        return lib.smooth_line, (a[0], a[1], a[2], a[3], w)
    return lib.smooth_polyline, (a, n, w, 1 if joint == "curve" else 0)


def lines(a: np.ndarray, w: float) -> Call:
    """Independent segments, an (n, 4) float64 array, in one colour."""
    p = np.ascontiguousarray(a, np.float64) + 0.5
    return lib.smooth_lines, (ffi.from_buffer("double[]", p), len(p), w)


def polygon(xy: Coords, w: float) -> Call:
    """A polygon filled even-odd (``w`` 0) or its outline of width ``w`` inside it."""
    a = _points(xy, "polygon")
    return lib.smooth_polygon, (a, len(a) // 2, w)


def _ellipse_of(xy: Coords, what: str) -> tuple[float, float, float, float]:
    """Centre and radii of the ellipse inscribed in a Pillow box."""
    x0, y0, x1, y1 = (number(v, what) for v in box_of(xy, what))
    if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
        raise ValueError(f"{what}: coordinates must be finite numbers (no NaN or infinity)")
    if x1 < x0:
        raise ValueError("x1 must be greater than or equal to x0")
    if y1 < y0:
        raise ValueError("y1 must be greater than or equal to y0")
    return (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (x1 + 1 - x0) / 2, (y1 + 1 - y0) / 2


def ellipse(xy: Coords, w: float) -> Call:
    """An ellipse by its box, filled (``w`` 0) or outlined."""
    cx, cy, rx, ry = _ellipse_of(xy, "ellipse")
    return lib.smooth_ellipse, (cx, cy, rx, ry, 0.0, 360.0, _ELLIPSE, w)


def circle(xy: Sequence[float], radius: float, w: float) -> Call:
    """A circle by its centre pixel and radius."""
    x, y = number(xy[0], "circle"), number(xy[1], "circle")
    r = number(radius, "circle")
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError("circle: coordinates must be finite numbers (no NaN or infinity)")
    if not (math.isfinite(r) and r >= 0):
        raise ValueError(f"circle: radius must be a finite number >= 0, got {radius!r}")
    return lib.smooth_ellipse, (float(x) + 0.5, float(y) + 0.5, r, r, 0.0, 360.0, _ELLIPSE, w)


def arc(kind: str, xy: Coords, start: float, end: float, w: float) -> Call:
    """An arc, chord or pie slice (``kind``) of the ellipse in ``xy``."""
    cx, cy, rx, ry = _ellipse_of(xy, kind)
    return lib.smooth_ellipse, (cx, cy, rx, ry, start, end, _CUTS[kind], w)


def rounded_rectangle(xy: Coords, radius: float, w: float, corners: Sequence[bool] | None) -> Call:
    """A rectangle with rounded corners, filled or outlined."""
    x0, y0, x1, y1 = (number(v, "rounded_rectangle") for v in box_of(xy, "rounded_rectangle"))
    if x1 < x0:
        x0, x1 = x1, x0
    if y1 < y0:
        y0, y1 = y1, y0
    bits = 15 if corners is None else sum(1 << i for i, c in enumerate(tuple(corners)[:4]) if c)
    return lib.smooth_rounded_rect, (x0, y0, x1 + 1, y1 + 1, float(radius), bits, w)


# the kernels that take many points (their count after the first argument)
_MANY = (lib.smooth_polyline, lib.smooth_polygon, lib.smooth_lines)
