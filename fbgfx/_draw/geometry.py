"""Geometry helpers for :class:`~fbgfx.Surface`: coordinate forms, argument checks, clipping.

Surface methods take coordinates the way Pillow's ``ImageDraw`` does (a flat list, a
list of pairs, or a NumPy array) and hand the C rasterisers plain doubles and ints;
these functions turn the one into the other and refuse what C must never see.
Nothing here draws or touches pixel memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

__all__ = [
    "BIG",
    "MAX_SIDE",
    "NUMBERS",
    "box",
    "check_angle",
    "check_size",
    "check_width",
    "clip_segment",
    "flat",
    "int_box",
    "number",
]

#: Types taken as plain coordinates without conversion (the fast paths test ``type(v) in NUMBERS``).
NUMBERS = (int, float)
#: Larger than any clip rectangle: line widths are clamped to it, bounding boxes start from it.
BIG = 1 << 30
#: The rasterisers clamp coordinates to +-2**28 (native/draw.c, DRAW_LIMIT): no longer side.
MAX_SIDE = 1 << 28

#: Coordinates as callers give them: ``[x0, y0, x1, y1, ...]``, ``[(x0, y0), ...]`` or an array.
Coords = Union[Sequence[Any], np.ndarray]
#: Coordinates flattened to ``[x0, y0, x1, y1, ...]`` (an array stays an array of float64).
Flat = Union[list[float], np.ndarray]


def flat(xy: Coords, what: str = "xy") -> Flat:
    """Both Pillow coordinate forms (and NumPy arrays) as a flat list of numbers.

    Args:
        xy: ``[x0, y0, x1, y1, ...]``, ``[(x0, y0), (x1, y1), ...]`` or an array of either.
        what: The argument's name for error messages.

    Returns:
        A list of numbers, or a C-contiguous float64 array when ``xy`` is an array
        (the caller passes its memory to C, so it keeps the result referenced).

    Raises:
        TypeError: Not a sequence of numbers or pairs.
        ValueError: An odd number of coordinates, or a point that is not a pair.
    """
    if isinstance(xy, np.ndarray):
        a = np.ascontiguousarray(xy, dtype=np.float64).ravel()
        if a.size % 2:
            raise ValueError(f"{what}: odd number of coordinates")
        return a
    out: list[float] = []
    try:
        for p in xy:
            if type(p) in NUMBERS:
                out.append(p)
            elif isinstance(p, (tuple, list, np.ndarray)):
                if len(p) != 2:
                    raise ValueError(f"{what}: points must be (x, y) pairs, got {p!r}")
                out.append(number(p[0], what))
                out.append(number(p[1], what))
            else:
                out.append(number(p, what))
    except _Text:
        raise
    except TypeError:
        raise TypeError(f"{what}: expected [(x0, y0), (x1, y1), ...] or [x0, y0, x1, y1, ...], got {xy!r}") from None
    if len(out) % 2:
        raise ValueError(f"{what}: odd number of coordinates")
    return out


class _Text(TypeError):
    """Text where a coordinate was expected (its message names the call)."""


def number(v: Any, what: str) -> float:
    """A coordinate as a float: text is refused (``float("1")`` would take it).

    Raises:
        TypeError: Text, or not a number.
    """
    if isinstance(v, (str, bytes)):
        raise _Text(f"{what}: coordinates must be numbers, got {v!r}")
    return float(v)


def int_box(xy: Coords, what: str) -> tuple[int, int, int, int]:
    """A two-point box as four ints (a clip or subsurface rectangle).

    Raises:
        ValueError: NaN or infinity.
        TypeError: Not exactly two points.
    """
    x0, y0, x1, y1 = (number(v, what) for v in box(xy, what))
    if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
        raise ValueError(f"{what}: coordinates must be finite numbers, got {(x0, y0, x1, y1)!r}")
    return int(x0), int(y0), int(x1), int(y1)


def box(xy: Coords, what: str = "xy") -> Sequence[float] | np.ndarray:
    """A two-point box (x0, y0, x1, y1) from either form.

    Raises:
        TypeError: Not exactly two points.
    """
    if len(xy) == 4 and type(xy[0]) in NUMBERS:
        return xy  # four plain numbers: the fast path
    f = flat(xy, what)
    if len(f) != 4:
        raise TypeError(f"{what}: coordinate list must contain exactly 2 coordinates")
    return f


def check_width(width: Any) -> int:
    """A line width as an int the rasterisers take: whole numbers, huge ones clamped to :data:`BIG`.

    Raises:
        ValueError: A bool, a fraction, NaN, infinity or not a number.
    """
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, np.integer)):
        if not (isinstance(width, (float, np.floating)) and math.isfinite(width) and width == int(width)):
            raise ValueError(f"width must be a whole number, got {width!r}")
    return max(-1, min(int(width), BIG))


def check_angle(a: Any) -> float:
    """An angle in degrees as a finite float.

    Raises:
        ValueError: NaN, infinity, or text that is not a number.
        TypeError: Not a number.
    """
    value = float(a)
    if not math.isfinite(value):
        raise ValueError(f"angles must be finite, got {value!r}")
    return value


def check_size(width: Any, height: Any) -> tuple[int, int]:
    """A surface size as two ints 0..:data:`MAX_SIDE`.

    Raises:
        TypeError: Not ints (bools and floats included).
        ValueError: Negative, or longer than :data:`MAX_SIDE`.
    """
    for v in (width, height):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"width and height must be ints, got {v!r}")
        if v < 0:
            raise ValueError(f"width and height must not be negative, got {v}")
        if v > MAX_SIDE:
            raise ValueError(f"width and height must be at most {MAX_SIDE}, got {v}")
    return int(width), int(height)


def clip_segment(
    x0: float, y0: float, x1: float, y1: float, left: float, top: float, right: float, bottom: float
) -> tuple[float, float, float, float] | None:
    """Liang-Barsky: the part of a segment inside a rectangle, or None."""
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            if t > t1:
                return None
            t0 = max(t0, t)
        else:
            if t < t0:
                return None
            t1 = min(t1, t)
    return x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy
