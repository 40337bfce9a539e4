"""Colours as users write them, turned into native pixel values.

fbgfx accepts what Pillow's ``ImageDraw`` accepts: colour names and CSS strings
(``"red"``, ``"#f00"``, ``"#ff0000"``, ``"#ff000080"``, ``"rgb(255,0,0)"``,
``"hsl(0,100%,50%)"``), ``(r, g, b)`` and ``(r, g, b, a)`` tuples of 0..255, and plain
ints, which are native pixel values written as they are (``0xF800`` is red in
RGB565, an index in C8).
"""

from __future__ import annotations

import decimal
import fractions
import functools
import math
import numbers
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple, Union

import numpy as np
from PIL import ImageColor

from ._ffi import ffi, lib
from .pixelformat import PixelFormat, default_palette

__all__ = ["ColorLike", "Ink", "Packer", "parse_color", "resolve", "whole_channels"]

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
    packer = _packer(fmt) if palette is None else Packer(fmt, palette)
    return packer.ink(color)


@functools.lru_cache(maxsize=64)
def _packer(fmt: PixelFormat) -> Packer:
    return Packer(fmt)


# The types of channel besides int that colours take as the whole numbers they equal:
# the real ones parse_color takes (not 0-d arrays, NumPy complex or other things that
# merely convert to a number).
_CHANNEL = frozenset(
    {int, float, bool, fractions.Fraction, decimal.Decimal, np.bool_}
    | {t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, numbers.Real)}
)


def whole_channels(r: Any, g: Any, b: Any) -> tuple[int, int, int]:
    """(r, g, b) as ints when each is a real number equal to a whole number (as
    :func:`parse_color` takes them: ``255.0``, NumPy scalars, ``True``). Range is not
    checked.

    Raises:
        ValueError: Anything else; the caller's general path says what is wrong.
    """
    if not {type(r), type(g), type(b)} <= _CHANNEL:
        raise ValueError("colour channels must be real numbers")
    rgb = int(r), int(g), int(b)  # NaN: ValueError, infinity: OverflowError
    if rgb != (r, g, b):
        raise ValueError("colour channels must be whole numbers")
    return rgb


class Packer:
    """Colours packed for one pixel format (and colour map) without NumPy.

    A drawing call with a colour of its own must not pay for building arrays. What
    packing needs is made once, in :attr:`native` (a ``color_ink`` for ``native/color.c``,
    which the drawing calls that take (r, g, b) pack with): direct formats OR three
    tables of their bitfields, gray formats weigh the channels as ITU-R 601 luma as
    :meth:`PixelFormat.pack` does, palette formats search the colour map. Every value
    equals what :meth:`PixelFormat.pack_color` gives for the same colour.

    Args:
        fmt: The pixel format.
        palette: For palette formats, the (n, 3) colour map; :func:`default_palette`
            when None.
    """

    def __init__(self, fmt: PixelFormat, palette: np.ndarray | None = None) -> None:
        self.format = fmt
        self._bits = fmt.bpp
        self._pal: np.ndarray | None = None
        #: What C packs (r, g, b) with; it points into this Packer (tables, colour map),
        #: so whoever hands it to C keeps the Packer alive for the call.
        self.native = ink = ffi.new("color_ink *")
        pack: Callable[[int, int, int], int]
        if fmt.indexed:
            pal = default_palette(fmt.bpp) if palette is None else np.asarray(palette, np.uint8)[:, :3]
            self._pal = np.ascontiguousarray(pal)
            self._pal_rows: list[tuple[int, int, int]] = [tuple(int(c) for c in row) for row in self._pal]  # type: ignore[misc]
            self._pal_ptr = ffi.from_buffer("uint8_t[]", self._pal)
            ink.kind, ink.palette, ink.n = lib.COLOR_PALETTE, self._pal_ptr, len(self._pal)
        elif fmt.gray:
            ink.kind, ink.shift, ink.top, ink.invert = lib.COLOR_GRAY, 8 - fmt.bpp, (1 << fmt.bpp) - 1, fmt.inverted
            ink.lut = [c * w for w in (19595, 38470, 7471) for c in range(256)]
        else:
            alpha = _field(255, fmt.transp.length, fmt.transp.offset) if fmt.transp.length else 0
            # alpha is folded into the red table: one OR fewer per colour
            self._r = _table(fmt.red.length, fmt.red.offset, alpha)
            self._g = _table(fmt.green.length, fmt.green.offset, 0)
            self._b = _table(fmt.blue.length, fmt.blue.offset, 0)
            ink.kind, ink.lut = lib.COLOR_DIRECT, self._r + self._g + self._b
        if ink.kind == lib.COLOR_DIRECT:  # three list lookups beat a call into C
            tr, tg, tb = self._r, self._g, self._b

            def pack(r: int, g: int, b: int) -> int:
                return tr[r] | tg[g] | tb[b]

        else:
            color_pack = lib.color_pack

            def pack(r: int, g: int, b: int) -> int:
                return color_pack(ink, r, g, b)

        self.pack_rgb = pack
        #: Packed values of opaque colours that are not plain (r, g, b) tuples (names,
        #: RGBA with alpha 255...), filled by the owner (a Surface's ink cache).
        self.cache: dict[type, dict[Any, int]] = {}
        self.opaque = self._opaque()

    # opaque(color) -> int: the packed value of an (r, g, b) tuple of whole numbers
    # 0..255, or of a colour in `cache`; anything else raises LookupError or TypeError and
    # the caller takes ink(), which accepts or refuses it properly. It is a closure over
    # locals, built once, because drawing calls with a fresh colour each go through it.

    def _opaque(self) -> Callable[[Any], int]:
        pack, cache = self.pack_rgb, self.cache

        def opaque(color: Any) -> int:
            if type(color) is tuple and len(color) == 3:
                r, g, b = color
                try:
                    if type(r) is not int or type(g) is not int or type(b) is not int:
                        r, g, b = whole_channels(r, g, b)
                except (ValueError, OverflowError):
                    pass
                else:
                    if 0 <= r < 256 and 0 <= g < 256 and 0 <= b < 256:
                        return pack(r, g, b)
            return cache[type(color)][color]

        return opaque

    def ink(self, color: Any) -> Ink:
        """The :class:`Ink` of any accepted colour, as :func:`resolve` defines it."""
        if type(color) is tuple and len(color) == 3:  # the common case, without parse_color
            r, g, b = color
            if type(r) is int and type(g) is int and type(b) is int and 0 <= r < 256 and 0 <= g < 256 and 0 <= b < 256:
                return Ink(self.pack_rgb(r, g, b), (r, g, b, 255), OPAQUE)
        if isinstance(color, numbers.Integral) and not isinstance(color, bool):
            value = int(color)
            if not 0 <= value < 1 << self._bits:
                raise ValueError(
                    f"native pixel value {value:#x} does not fit in {self.format.name} ({self._bits} bits)"
                )
            r, g, b = self.unpack(value)
            return Ink(value, (r, g, b, 255), OPAQUE)
        rgba = parse_color(color)
        value = self.pack_rgb(rgba[0], rgba[1], rgba[2])
        a = rgba[3]
        return Ink(value, rgba, OPAQUE if a == 255 else SKIP if a == 0 else BLEND)

    def pack_many(self, colors: Any, n: int) -> np.ndarray:
        """``n`` colours packed at once: one native value each (24 bpp: the three bytes
        little-endian), as uint32 in C order, for the kernels that draw many shapes.

        Args:
            colors: (n,) native pixel values, an (n, 3) or (n, 4) array of RGB(A)
                channels 0..255, or a sequence of any colours :meth:`ink` takes. Alpha
                is ignored.
            n: How many colours there must be.

        Raises:
            TypeError: Not a sequence (a string, a number).
            ValueError: Not ``n`` colours, a native value that does not fit in the
                format's bits, a channel that is not a whole number 0..255, or a
                colour :meth:`ink` refuses.
        """
        if isinstance(colors, (str, bytes)) or not hasattr(colors, "__len__"):
            raise TypeError(f"colors must be a sequence of {n} colours, got {type(colors).__name__}")
        if len(colors) != n:
            raise ValueError(f"expected {n} colours, got {len(colors)}")
        try:
            c = np.asarray(colors)
        except (ValueError, TypeError):  # a list of mixed colour forms
            c = None
        if c is not None and c.ndim == 1 and c.dtype != bool and np.issubdtype(c.dtype, np.integer):
            if c.size and (c.min() < 0 or c.max() >= 1 << self._bits):
                raise ValueError(f"native colour values must fit in {self._bits} bits")
            return np.ascontiguousarray(c, np.uint32)
        if c is not None and c.ndim == 2 and c.shape[1] in (3, 4) and c.dtype.kind in "uif":
            with np.errstate(invalid="ignore"):
                if c.size and not ((c >= 0) & (c <= 255) & (c == np.round(c))).all():
                    raise ValueError("colour channels must be whole numbers 0..255")
            packed = self.format.pack(c[:, :3].astype(np.uint8), self._pal)
            if self._bits == 24:
                p = packed.astype(np.uint32)
                return np.ascontiguousarray(p[:, 0] | p[:, 1] << 8 | p[:, 2] << 16)
            return np.ascontiguousarray(packed, np.uint32)
        # names, floats, mixed forms: each as a single colour would be (alpha ignored)
        return np.array([self.ink(col).value for col in colors], np.uint32)

    def unpack(self, value: int) -> tuple[int, int, int]:
        """The (r, g, b) a native value in range shows (:meth:`PixelFormat.unpack_color`)."""
        fmt = self.format
        if self._pal is not None:
            return self._pal_rows[value % len(self._pal_rows)]
        if fmt.gray:
            top = (1 << fmt.bpp) - 1
            level = value & 0xFF
            if fmt.inverted:
                level = (top - level) & 0xFF
            v = _expand(fmt.bpp)[level & top]
            return (v, v, v)
        return (
            _unfield(value, fmt.red.length, fmt.red.offset),
            _unfield(value, fmt.green.length, fmt.green.offset),
            _unfield(value, fmt.blue.length, fmt.blue.offset),
        )


def _field(c: int, length: int, offset: int) -> int:
    """One 0..255 channel in a bitfield, as PixelFormat.pack puts it there."""
    c = c >> (8 - length) if length <= 8 else (c * ((1 << length) - 1) + 127) // 255
    return c << offset


def _table(length: int, offset: int, extra: int) -> list[int]:
    return [_field(c, length, offset) | extra for c in range(256)]


@functools.cache
def _expand(bits: int) -> list[int]:
    top = (1 << bits) - 1
    return [(v * 255 + top // 2) // top for v in range(top + 1)]


def _unfield(value: int, length: int, offset: int) -> int:
    v = (value >> offset) & ((1 << length) - 1)
    return _expand(length)[v] if length <= 8 else v >> (length - 8)
