"""Colours as users write them, turned into native pixel values.

fbgfx accepts what Pillow's ``ImageDraw`` accepts: colour names and CSS strings
(``"red"``, ``"#f00"``, ``"#ff0000"``, ``"#ff000080"``, ``"rgb(255,0,0)"``,
``"hsl(0,100%,50%)"``), ``(r, g, b)`` and ``(r, g, b, a)`` tuples of 0..255, and plain
ints, which are native pixel values written as they are (``0xF800`` is red in
RGB565, an index in C8).
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

import numpy as np
from PIL import ImageColor

from .pixelformat import PixelFormat

__all__ = ["ColorLike", "Ink", "parse_color", "resolve"]

#: A colour as users write it: a name or CSS string, an (r, g, b[, a]) sequence or array,
#: or a native pixel value (an int).
ColorLike = Union[str, int, Sequence[Any], np.ndarray]

# Ink.mode values
SKIP, OPAQUE, BLEND = 0, 1, 2


class Ink(NamedTuple):
    """A colour ready to draw with in one pixel format.

    Attributes:
        value: The packed native pixel value (24 bpp: three bytes, little-endian).
        rgba: The (r, g, b, a) colour, used when blending.
        mode: 0 draw nothing (alpha 0), 1 write ``value``, 2 blend ``rgba``.
    """

    value: int
    rgba: tuple[int, int, int, int]
    mode: int


def parse_color(color: ColorLike) -> tuple[int, int, int, int]:
    """Parse a Pillow-style colour to an (r, g, b, a) tuple.

    Args:
        color: A colour name or CSS string, or an (r, g, b) / (r, g, b, a) sequence of
            numbers 0..255: any number equal to a whole number counts (``255.0``,
            NumPy scalars, ``True`` as 1, as Pillow takes them).

    Returns:
        (r, g, b, a) ints; alpha is 255 when not given.

    Raises:
        ValueError: Unknown name, malformed string, NaN, infinity, a fraction, or a
            channel outside 0..255.
        TypeError: Anything else.
    """
    if isinstance(color, str):
        try:
            rgb = ImageColor.getrgb(color)
        except ValueError as e:
            raise ValueError(f"unknown colour {color!r}: {e}") from None
        # Pillow parses "rgb(300,0,0)" to 300: out of range is the caller's error here
        if any(not 0 <= c <= 255 for c in rgb):
            raise ValueError(f"colour channels must be 0..255, got {color!r}")
        return tuple(rgb) + (255,) if len(rgb) == 3 else tuple(rgb)  # type: ignore[return-value]
    if isinstance(color, (tuple, list, np.ndarray)):
        values = list(np.asarray(color).ravel()) if isinstance(color, np.ndarray) else list(color)
        if len(values) not in (3, 4):
            raise ValueError(f"a colour tuple needs 3 or 4 channels, got {len(values)}: {color!r}")
        out = []
        for v in values:
            # Every number equal to a whole number is that number: surfaces cache inks
            # by colour, and (True, 0, 0) == (1, 0, 0) as a dict key, so refusing what
            # compares equal to an accepted colour would make acceptance depend on
            # what was drawn before.
            if isinstance(v, np.bool_):
                v = int(v)
            elif isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
                if v.imag != 0:
                    raise ValueError(f"colour channels must be whole numbers 0..255, got {v!r} in {color!r}")
                v = v.real
            elif not isinstance(v, (numbers.Real, decimal.Decimal)):
                raise TypeError(f"colour channels must be numbers, got {v!r} in {color!r}")
            f = float(v)
            if not math.isfinite(f) or f != int(f) or not 0 <= f <= 255:
                raise ValueError(f"colour channels must be whole numbers 0..255, got {v!r} in {color!r}")
            out.append(int(f))
        if len(out) == 3:
            out.append(255)
        return tuple(out)  # type: ignore[return-value]
    raise TypeError(f"expected a colour name, '#rrggbb' string, (r, g, b[, a]) tuple or native int, got {color!r}")


def resolve(color: ColorLike, fmt: PixelFormat, palette: np.ndarray | None = None) -> Ink:
    """Turn any accepted colour into an :class:`Ink` for ``fmt``.

    Ints are native pixel values and must fit in the format's bits. On palette formats
    a colour becomes the index of the nearest palette entry (``palette`` or
    :func:`fbgfx.default_palette`).

    Raises:
        ValueError, TypeError: As :func:`parse_color`, or an int that does not fit.
    """
    if isinstance(color, numbers.Integral) and not isinstance(color, bool):
        value = int(color)
        if not 0 <= value < 1 << fmt.bpp:
            raise ValueError(f"native pixel value {value:#x} does not fit in {fmt.name} ({fmt.bpp} bits)")
        rgb = fmt.unpack_color(value, palette)
        return Ink(value, (rgb[0], rgb[1], rgb[2], 255), OPAQUE)
    rgba = parse_color(color)
    value = fmt.pack_color(rgba[:3] + (255,), palette)
    mode = OPAQUE if rgba[3] == 255 else SKIP if rgba[3] == 0 else BLEND
    return Ink(value, rgba, mode)
