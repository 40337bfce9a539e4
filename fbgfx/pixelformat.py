"""Pixel formats built from the kernel's bitfields, and colour packing both ways.

A :class:`PixelFormat` says where red, green, blue and alpha sit inside a pixel value
of ``bpp`` bits, exactly as ``fb_var_screeninfo`` does. Names follow DRM fourcc
(``include/uapi/drm/drm_fourcc.h``): a name lists channels from the most significant
bit of a little-endian pixel word down, so XRGB8888 has red at offset 16 and RGB565
has red at offset 11. Indexed (palette) formats are ``C1``..``C8``, gray ones
``R1``..``R8``. Any other layout of 8, 16, 24 or 32 bits still works and gets a
descriptive name.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .errors import UnsupportedFormatError
from .screeninfo import (
    FB_VISUAL_DIRECTCOLOR,
    FB_VISUAL_MONO01,
    FB_VISUAL_MONO10,
    FB_VISUAL_PSEUDOCOLOR,
    FB_VISUAL_STATIC_PSEUDOCOLOR,
    FB_VISUAL_TRUECOLOR,
    Bitfield,
    VarScreenInfo,
)

__all__ = ["FORMATS", "PixelFormat", "default_palette"]

_NONE = Bitfield()


@dataclass(frozen=True)
class PixelFormat:
    """The layout of one pixel in memory.

    Attributes:
        bpp: Bits per pixel: 1, 2, 4, 8, 16, 24 or 32.
        red, green, blue, transp: Channel bitfields (``transp`` has length 0 when the
            format has no alpha; X channels are padding).
        indexed: True for palette formats: the pixel value indexes a colour map.
        gray: True for gray formats: the pixel value is a luminance level.
        inverted: For 1 bpp gray panels whose 1 is black (``FB_VISUAL_MONO01``).
        name: The DRM fourcc-style name, or a descriptive one for unusual layouts.

    Example:
        >>> rgb565 = fbgfx.FORMATS["RGB565"]
        >>> rgb565.bpp, rgb565.red.offset, hex(rgb565.pack_color((255, 0, 0)))
        (16, 11, '0xf800')
    """

    bpp: int
    red: Bitfield = _NONE
    green: Bitfield = _NONE
    blue: Bitfield = _NONE
    transp: Bitfield = _NONE
    indexed: bool = False
    gray: bool = False
    inverted: bool = False
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        if not self.name:
            object.__setattr__(self, "name", _name_of(self))

    # -- construction ---------------------------------------------------------------

    @classmethod
    def from_name(cls, name: str) -> PixelFormat:
        """Look a format up by name (case-insensitive), e.g. ``"RGB565"``.

        Raises:
            UnsupportedFormatError: The name is not one fbgfx knows.
        """
        try:
            return FORMATS[name.upper()]
        except KeyError:
            known = ", ".join(FORMATS)
            raise UnsupportedFormatError(f"unknown pixel format {name!r}; known formats: {known}") from None

    @classmethod
    def from_var(cls, var: VarScreenInfo, visual: int = FB_VISUAL_TRUECOLOR) -> PixelFormat:
        """Build the format a driver describes in ``var`` (and ``fix.visual``).

        Raises:
            UnsupportedFormatError: The layout is one fbgfx cannot draw in; the message
                names the bitfields.
        """
        bpp = var.bits_per_pixel
        if var.grayscale > 1:
            raise UnsupportedFormatError(f"FOURCC pixel formats are not supported (grayscale={var.grayscale:#x})")
        if visual in (FB_VISUAL_MONO01, FB_VISUAL_MONO10) or (var.grayscale and bpp <= 8):
            fmt = cls(bpp, gray=True, inverted=visual == FB_VISUAL_MONO01)
        elif visual in (FB_VISUAL_PSEUDOCOLOR, FB_VISUAL_STATIC_PSEUDOCOLOR) or (
            visual != FB_VISUAL_TRUECOLOR and visual != FB_VISUAL_DIRECTCOLOR and bpp <= 8
        ):
            fmt = cls(bpp, indexed=True)
        elif visual not in (FB_VISUAL_TRUECOLOR, FB_VISUAL_DIRECTCOLOR):
            raise UnsupportedFormatError(f"visual {visual} at {bpp} bpp is not supported")
        else:
            try:
                fmt = cls(bpp, var.red, var.green, var.blue, var.transp)
            except UnsupportedFormatError as e:
                raise UnsupportedFormatError(f"{e} (bitfields {describe_bitfields(var)})") from None
        return _KNOWN.get(fmt, fmt)

    # -- geometry -------------------------------------------------------------------

    @property
    def bytes_per_pixel(self) -> int:
        """Whole bytes per pixel; 0 for formats of fewer than 8 bits."""
        return self.bpp // 8

    @property
    def dtype(self) -> np.dtype:
        """NumPy dtype of one pixel value (uint8 per byte for 24 bpp and sub-byte formats)."""
        return np.dtype({32: "<u4", 16: "<u2"}.get(self.bpp, "u1"))

    @property
    def has_alpha(self) -> bool:
        """True when the pixel stores alpha (ARGB8888, ...), not just padding."""
        return self.transp.length > 0

    @property
    def is_packed(self) -> bool:
        """True for formats of fewer than 8 bits: several pixels share one byte."""
        return self.bpp < 8

    def row_bytes(self, width: int) -> int:
        """Bytes that ``width`` pixels occupy, without padding."""
        return (width * self.bpp + 7) // 8

    def array_shape(self, height: int, width: int) -> tuple[int, ...]:
        """Shape of the NumPy array holding ``height`` x ``width`` native pixels.

        (h, w) for 8, 16 and 32 bpp; (h, w, 3) for 24 bpp; (h, w) uint8 with one pixel
        per byte for sub-byte formats (see :meth:`pack_bits`).
        """
        return (height, width, 3) if self.bpp == 24 else (height, width)

    # -- colours --------------------------------------------------------------------

    def pack(self, rgb: ArrayLike, palette: np.ndarray | None = None) -> np.ndarray:
        """Convert RGB or RGBA uint8 data to native pixel values.

        Args:
            rgb: Array-like of shape (..., 3) or (..., 4), uint8.
            palette: For indexed formats, the (n, 3) uint8 colour map to match against
                (nearest colour); defaults to :func:`default_palette`. Up to 64 pixels
                are matched exactly; larger images through a cached 32-level colour
                cube, which is fast and picks an entry at most a few levels from the
                nearest.

        Returns:
            An array of shape ``rgb.shape[:-1]`` with :attr:`dtype` (plus a last axis of
            3 bytes at 24 bpp). Sub-byte formats give one pixel value per byte.

        Raises:
            ValueError: ``rgb``'s last axis is not 3 or 4 long.
        """
        rgb = np.asarray(rgb)
        if rgb.ndim == 0 or rgb.shape[-1] not in (3, 4):
            raise ValueError(f"expected RGB or RGBA data with a last axis of 3 or 4, got shape {rgb.shape}")
        rgb = rgb.astype(np.uint8, copy=False)
        if self.indexed:
            return _nearest_index(rgb[..., :3], self._palette(palette))
        if self.gray:
            lum = _luminance(rgb)
            out = (lum >> (8 - self.bpp)).astype(np.uint8)
            return (((1 << self.bpp) - 1) - out).astype(np.uint8) if self.inverted else out
        if self._byte_aligned():
            return self._pack_bytes(rgb)
        value = np.zeros(rgb.shape[:-1], np.uint32)
        channels = (self.red, self.green, self.blue)
        for i, bf in enumerate(channels):
            value |= _to_field(rgb[..., i], bf)
        if self.transp.length:
            alpha = rgb[..., 3] if rgb.shape[-1] == 4 else np.full(rgb.shape[:-1], 255, np.uint8)
            value |= _to_field(alpha, self.transp)
        if self.bpp == 24:
            return value.astype("<u4").view(np.uint8).reshape(value.shape + (4,))[..., :3]
        return value.astype(self.dtype)

    def unpack(self, native: ArrayLike, palette: np.ndarray | None = None, alpha: bool = False) -> np.ndarray:
        """Convert native pixel values to RGB (or RGBA) uint8.

        Args:
            native: Pixel values as :meth:`pack` returns them (or a view of video memory).
            palette: For indexed formats, the (n, 3) uint8 colour map.
            alpha: Return RGBA; formats without alpha give 255.

        Returns:
            A uint8 array of shape (..., 3) or (..., 4).

        Raises:
            ValueError: 24 bpp data whose last axis is not 3 bytes.
        """
        native = np.asarray(native)
        if self.indexed:
            rgb = self._palette(palette)[native.astype(np.intp) % len(self._palette(palette))]
        elif self.gray:
            levels = native.astype(np.uint8)
            if self.inverted:
                levels = ((1 << self.bpp) - 1) - levels
            lum = expand_lut(self.bpp)[levels & ((1 << self.bpp) - 1)]
            rgb = np.repeat(lum[..., None], 3, axis=-1)
        else:
            if self.bpp == 24:
                if native.shape[-1] != 3:
                    raise ValueError(f"24 bpp data needs a last axis of 3 bytes, got shape {native.shape}")
                b = native.astype(np.uint32)
                value = b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16)
            else:
                value = native.astype(np.uint32)
            rgb = np.stack([_from_field(value, bf) for bf in (self.red, self.green, self.blue)], axis=-1)
            if alpha:
                a = _from_field(value, self.transp) if self.transp.length else np.full(value.shape, 255, np.uint8)
                rgba: np.ndarray = np.concatenate([rgb, a[..., None]], axis=-1)
                return rgba
        if alpha:
            opaque: np.ndarray = np.concatenate([rgb, np.full(rgb.shape[:-1] + (1,), 255, np.uint8)], axis=-1)
            return opaque
        return rgb

    def pack_color(self, rgba: Iterable[int], palette: np.ndarray | None = None) -> int:
        """Pack one (r, g, b) or (r, g, b, a) colour to a native pixel value (an int)."""
        value = self.pack(np.array(tuple(rgba), np.uint8), palette)
        if self.bpp == 24:
            return int(value[0]) | int(value[1]) << 8 | int(value[2]) << 16
        return int(value)

    def unpack_color(self, value: int, palette: np.ndarray | None = None) -> tuple[int, int, int]:
        """The (r, g, b) colour a native pixel value shows."""
        if self.bpp == 24:
            native = np.array([value & 0xFF, value >> 8 & 0xFF, value >> 16 & 0xFF], np.uint8)
        else:
            native = np.array(value, self.dtype)
        return tuple(int(c) for c in self.unpack(native, palette))  # type: ignore[return-value]

    # -- sub-byte formats -----------------------------------------------------------

    def pack_bits(self, values: np.ndarray) -> np.ndarray:
        """Pack (h, w) pixel values of a sub-byte format into (h, row_bytes) bytes.

        The first pixel sits in the most significant bits of each byte, as fbdev
        drivers expect unless ``FB_NONSTD_REV_PIX_IN_B`` is set.
        """
        values = np.asarray(values, np.uint8)
        h, w = values.shape
        per_byte = 8 // self.bpp
        padded = np.zeros((h, -(-w // per_byte) * per_byte), np.uint8)
        padded[:, :w] = values & ((1 << self.bpp) - 1)
        groups = padded.reshape(h, -1, per_byte)
        out = np.zeros(groups.shape[:2], np.uint8)
        for i in range(per_byte):
            out |= groups[..., i] << (8 - self.bpp * (i + 1))
        return out

    def unpack_bits(self, packed: np.ndarray, width: int) -> np.ndarray:
        """Inverse of :meth:`pack_bits`: (h, row_bytes) bytes to (h, width) values."""
        packed = np.asarray(packed, np.uint8)
        per_byte = 8 // self.bpp
        mask = (1 << self.bpp) - 1
        parts = [(packed >> (8 - self.bpp * (i + 1))) & mask for i in range(per_byte)]
        return np.stack(parts, axis=-1).reshape(packed.shape[0], -1)[:, :width]

    # -- helpers --------------------------------------------------------------------

    def _palette(self, palette: np.ndarray | None) -> np.ndarray:
        if palette is None:
            return default_palette(self.bpp)
        return np.asarray(palette, np.uint8)[:, :3]

    def _byte_aligned(self) -> bool:
        fields = [self.red, self.green, self.blue] + ([self.transp] if self.transp.length else [])
        return self.bpp in (24, 32) and all(bf.length == 8 and bf.offset % 8 == 0 for bf in fields)

    def _pack_bytes(self, rgb: np.ndarray) -> np.ndarray:
        nbytes = self.bpp // 8
        out = np.empty(rgb.shape[:-1] + (nbytes,), np.uint8)
        if self.bpp == 32 and not self.transp.length:
            pad = ({0, 8, 16, 24} - {self.red.offset, self.green.offset, self.blue.offset}).pop()
            out[..., pad // 8] = 0  # X bits are written as 0, as the shift path does
        for i, bf in enumerate((self.red, self.green, self.blue)):
            out[..., bf.offset // 8] = rgb[..., i]
        if self.transp.length:
            out[..., self.transp.offset // 8] = rgb[..., 3] if rgb.shape[-1] == 4 else 0xFF
        if self.bpp == 24:
            return out
        return out.view("<u4")[..., 0]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"PixelFormat({self.name})"


# -- module helpers ------------------------------------------------------------------


def describe_bitfields(var: VarScreenInfo) -> str:
    """``bpp=16 red=5/11 green=6/5 blue=5/0 transp=0/0`` (length/offset, as fbset)."""
    return f"bpp={var.bits_per_pixel} red={var.red} green={var.green} blue={var.blue} transp={var.transp}"


def _validate(fmt: PixelFormat) -> None:
    if fmt.bpp not in (1, 2, 4, 8, 16, 24, 32):
        raise UnsupportedFormatError(f"{fmt.bpp} bits per pixel is not supported")
    if fmt.indexed or fmt.gray:
        if fmt.bpp > 8:
            raise UnsupportedFormatError(f"palette and gray formats need at most 8 bpp, not {fmt.bpp}")
        return
    if fmt.bpp < 8:
        raise UnsupportedFormatError(f"direct colour at {fmt.bpp} bpp is not supported")
    used = 0
    for name in ("red", "green", "blue", "transp"):
        bf = getattr(fmt, name)
        if bf.msb_right:
            raise UnsupportedFormatError(f"{name} bitfield with msb_right is not supported")
        if name != "transp" and bf.length == 0:
            raise UnsupportedFormatError(f"{name} bitfield has length 0")
        if bf.length > 16 or bf.offset + bf.length > fmt.bpp:
            raise UnsupportedFormatError(f"{name} bitfield {bf} does not fit in {fmt.bpp} bits")
        mask = ((1 << bf.length) - 1) << bf.offset
        if used & mask:
            raise UnsupportedFormatError(f"{name} bitfield {bf} overlaps another channel")
        used |= mask


def _name_of(fmt: PixelFormat) -> str:
    for name, known in FORMATS.items():
        if known == fmt:
            return name
    if fmt.indexed:
        return f"C{fmt.bpp}"
    if fmt.gray:
        return f"R{fmt.bpp}"
    parts = [
        f"{c}{bf.length}@{bf.offset}" for c, bf in zip("RGBA", (fmt.red, fmt.green, fmt.blue, fmt.transp)) if bf.length
    ]
    return f"{fmt.bpp}bpp:" + ",".join(parts)


def _to_field(channel: np.ndarray, bf: Bitfield) -> np.ndarray:
    # Every operand is a uint32, never a Python int: numpy < 2 promotes a 0-d uint32
    # (one colour) with an int to int64, which the in-place shifts here would refuse.
    c = channel.astype(np.uint32)
    if bf.length <= 8:
        c >>= np.uint32(8 - bf.length)
    else:
        c = (c * np.uint32((1 << bf.length) - 1) + np.uint32(127)) // np.uint32(255)
    return c << np.uint32(bf.offset)


def _from_field(value: np.ndarray, bf: Bitfield) -> np.ndarray:
    v = (value >> bf.offset) & ((1 << bf.length) - 1)
    if bf.length <= 8:
        expanded: np.ndarray = expand_lut(bf.length)[v]
        return expanded
    return (v >> (bf.length - 8)).astype(np.uint8)


@functools.cache
def expand_lut(bits: int) -> np.ndarray:
    """Level -> 0..255 so that the top level is 255 (bit replication, as displays do)."""
    top = (1 << bits) - 1
    return np.array([(v * 255 + top // 2) // top for v in range(top + 1)], np.uint8)


def _luminance(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma, as Pillow's RGB -> L conversion computes it."""
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8)


def _nearest_index(rgb: np.ndarray, palette: np.ndarray) -> np.ndarray:
    if rgb.size <= 3 * 64:
        d = rgb[..., None, :].astype(np.int32) - palette.astype(np.int32)
        nearest: np.ndarray = np.argmin((d * d).sum(-1), axis=-1).astype(np.uint8)
        return nearest
    lut = nearest_lut(palette.tobytes())
    q = rgb.astype(np.uint32) >> 3
    index: np.ndarray = lut[(q[..., 0] << 10) | (q[..., 1] << 5) | q[..., 2]]
    return index


@functools.lru_cache(maxsize=8)
def nearest_lut(palette_bytes: bytes) -> np.ndarray:
    """A 32x32x32 cube of nearest palette indices, for converting whole images."""
    palette = np.frombuffer(palette_bytes, np.uint8).reshape(-1, 3).astype(np.int32)
    levels = (np.arange(32, dtype=np.int32) << 3) + 4
    cube = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 3)
    best = np.zeros(len(cube), np.uint8)
    best_d = np.full(len(cube), np.iinfo(np.int32).max, np.int32)
    for i, color in enumerate(palette):
        d = ((cube - color) ** 2).sum(-1)
        closer = d < best_d
        best[closer] = i
        best_d[closer] = d[closer]
    return best


@functools.cache
def default_palette(bpp: int = 8) -> np.ndarray:
    """The colour map fbgfx installs on palette devices, as (2**bpp, 3) uint8.

    At 8 bpp: a 6x7x6 colour cube (252 entries) plus 4 grays, so photos and UI colours
    both land close. Below 8 bpp: an even gray ramp.
    """
    if bpp < 8:
        return np.repeat(expand_lut(bpp)[:, None], 3, axis=1)
    r = np.repeat(np.arange(6), 42) * 51
    g = np.tile(np.repeat(np.arange(7), 6), 6) * 255 // 6
    b = np.tile(np.arange(6), 42) * 51
    cube = np.stack([r, g, b], axis=-1)
    grays = np.array([[v, v, v] for v in (36, 73, 146, 219)])
    palette = np.concatenate([cube, grays]).astype(np.uint8)
    palette.setflags(write=False)
    return palette


def _rgb(
    bpp: int, r: tuple[int, int], g: tuple[int, int], b: tuple[int, int], a: tuple[int, int] = (0, 0)
) -> PixelFormat:
    return PixelFormat(bpp, Bitfield(*r), Bitfield(*g), Bitfield(*b), Bitfield(*a), name="_")


_SPECS: dict[str, tuple[Any, ...]] = {
    "XRGB8888": (32, (16, 8), (8, 8), (0, 8)),
    "ARGB8888": (32, (16, 8), (8, 8), (0, 8), (24, 8)),
    "XBGR8888": (32, (0, 8), (8, 8), (16, 8)),
    "ABGR8888": (32, (0, 8), (8, 8), (16, 8), (24, 8)),
    "RGBX8888": (32, (24, 8), (16, 8), (8, 8)),
    "RGBA8888": (32, (24, 8), (16, 8), (8, 8), (0, 8)),
    "BGRX8888": (32, (8, 8), (16, 8), (24, 8)),
    "BGRA8888": (32, (8, 8), (16, 8), (24, 8), (0, 8)),
    "RGB888": (24, (16, 8), (8, 8), (0, 8)),
    "BGR888": (24, (0, 8), (8, 8), (16, 8)),
    "RGB565": (16, (11, 5), (5, 6), (0, 5)),
    "BGR565": (16, (0, 5), (5, 6), (11, 5)),
    "XRGB1555": (16, (10, 5), (5, 5), (0, 5)),
    "ARGB1555": (16, (10, 5), (5, 5), (0, 5), (15, 1)),
    "XBGR1555": (16, (0, 5), (5, 5), (10, 5)),
    "ABGR1555": (16, (0, 5), (5, 5), (10, 5), (15, 1)),
    "XRGB4444": (16, (8, 4), (4, 4), (0, 4)),
    "ARGB4444": (16, (8, 4), (4, 4), (0, 4), (12, 4)),
}

FORMATS: dict[str, PixelFormat] = {}
for _name, _spec in _SPECS.items():
    _fmt = _rgb(*_spec)
    object.__setattr__(_fmt, "name", _name)
    FORMATS[_name] = _fmt
for _bpp in (8, 4, 2, 1):
    FORMATS[f"C{_bpp}"] = PixelFormat(_bpp, indexed=True, name=f"C{_bpp}")
    FORMATS[f"R{_bpp}"] = PixelFormat(_bpp, gray=True, name=f"R{_bpp}")

# Lookup by layout (names do not take part in equality).
_KNOWN = {fmt: fmt for fmt in FORMATS.values()}
