"""Scaling a picture piece by piece for :mod:`fbgfx.kiosk.mirror`, and finding what changed.

An :class:`Axis` holds, for each output column (or row), the source pixels it is made
of and their weights: area-averaging (box) where the picture shrinks, bilinear where it
grows, one weight of 1 where the size stays (an exact copy). A :class:`Scaler` holds
two axes and makes any rectangle of the output in C (``native/mirror.c``), so a change
in the source costs the output pixels it touches. :func:`changed_tiles` compares a
picture with the copy kept from the last look in C, updating the copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._ffi import check_value, ffi, lib
from .._screen.region import mask_runs
from ..pixelformat import PixelFormat

__all__ = ["BITS", "TILE_BYTES", "TILE_ROWS", "Axis", "Scaler", "changed_tiles", "source_kind", "tile_rects"]

#: Fraction bits of the fixed-point weights (they sum to ``1 << BITS``).
BITS = 16
#: Tile width in bytes and height in rows of the comparison.
TILE_BYTES = 64
TILE_ROWS = 16

Rect = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive ends)


@dataclass(frozen=True)
class Axis:
    """Output pixel ``d`` is ``sum(weights[d, t] * src[first[d] + t] for t < count[d])``.

    Attributes:
        first, count: int32 arrays, one entry an output pixel.
        weights: (outputs, taps) int32, fixed point (``1 << BITS`` is 1).
        filter: ``"box"``, ``"bilinear"`` or ``"exact"``.
    """

    first: np.ndarray
    count: np.ndarray
    weights: np.ndarray
    filter: str

    @property
    def taps(self) -> int:
        """Weights stored per output pixel."""
        return int(self.weights.shape[1])

    def outputs(self, lo: int, hi: int) -> tuple[int, int]:
        """The output pixels [d0, d1) that read any source pixel in [lo, hi)."""
        d0 = int(np.searchsorted(self.first + self.count, lo, side="right"))
        d1 = int(np.searchsorted(self.first, hi, side="left"))
        return d0, max(d0, d1)


def axis(size: int, out: int, start: float = 0.0, span: float | None = None) -> Axis:
    """The weights that scale source pixels [start, start + span) of ``size`` to ``out`` pixels.

    Raises:
        ValueError: A size below 1, or a span outside the source.
    """
    span = float(size) if span is None else span
    if size < 1 or out < 1 or not (0 <= start and 0 < span and start + span <= size + 1e-9):
        raise ValueError(f"cannot scale pixels {start}..{start + (span or 0)} of {size} to {out}")
    d = np.arange(out, dtype=np.float64)
    scale = span / out
    if scale == 1 and start == int(start):
        first = (d + start).astype(np.int32)
        return Axis(first, np.ones(out, np.int32), np.full((out, 1), 1 << BITS, np.int32), "exact")
    if scale > 1:  # shrinking: each output pixel averages the source area it covers
        a, b = start + d * scale, start + (d + 1) * scale
        first_f = np.floor(a)
        taps = int(math.ceil(scale)) + 1
        idx = first_f[:, None] + np.arange(taps)[None, :]
        w = np.clip(np.minimum(b[:, None], idx + 1) - np.maximum(a[:, None], idx), 0, None)
        w[idx >= size] = 0
        kind = "box"
    else:  # growing: bilinear between the two nearest source pixel centres
        center = start + (d + 0.5) * scale - 0.5
        first_f = np.floor(center)
        frac = center - first_f
        w = np.stack([1 - frac, frac], axis=1)
        idx = first_f[:, None] + np.arange(2)[None, :]
        w[(idx < 0) | (idx >= size)] = 0
        kind = "bilinear"
    # Leading taps of weight 0 (an edge, or a boundary met exactly) start the pixel later.
    lead = np.argmax(w > 1e-12, axis=1)
    rows = np.arange(out)[:, None]
    cols = np.clip(lead[:, None] + np.arange(w.shape[1])[None, :], 0, w.shape[1] - 1)
    valid = (lead[:, None] + np.arange(w.shape[1])[None, :]) < w.shape[1]
    w = np.where(valid, w[rows, cols], 0)
    first_f = first_f + lead
    count = np.maximum(1, w.shape[1] - np.argmax(w[:, ::-1] > 1e-12, axis=1))
    w = w / w.sum(axis=1, keepdims=True)
    fixed = np.round(w * (1 << BITS)).astype(np.int64)
    # Make every row sum to exactly 1 << BITS: a flat picture stays flat.
    biggest = np.argmax(fixed, axis=1)
    fixed[np.arange(out), biggest] += (1 << BITS) - fixed.sum(axis=1)
    return Axis(first_f.astype(np.int32), count.astype(np.int32), np.ascontiguousarray(fixed, np.int32), kind)


def source_kind(fmt: PixelFormat) -> tuple[int, int, int, int] | None:
    """How ``mirror_scale`` reads pixels of ``fmt`` directly: (kind, r, g, b) shifts, or
    None when they must be unpacked to RGB first (palettes, other layouts)."""
    r, g, b = fmt.red, fmt.green, fmt.blue
    lengths = (r.length, g.length, b.length)
    if fmt.indexed or fmt.is_packed:
        return None
    if fmt.bpp == 32 and lengths == (8, 8, 8):
        return 4, r.offset, g.offset, b.offset
    if fmt.bpp == 24 and lengths == (8, 8, 8) and all(c.offset % 8 == 0 for c in (r, g, b)):
        return 3, r.offset // 8, g.offset // 8, b.offset // 8
    if fmt.bpp == 16 and lengths == (5, 6, 5) and g.offset == 5 and {r.offset, b.offset} == {0, 11}:
        return 2, r.offset, g.offset, b.offset
    return None


class Scaler:
    """Scales a source picture (or part of it) to an output size, one rectangle at a time.

    Args:
        size: The source's (width, height).
        out: The output's (width, height).
        box: The part of the source to scale, (left, top, right, bottom) in source
            pixels, fractions allowed (``fit="fill"`` crops); default all of it.
    """

    def __init__(
        self, size: tuple[int, int], out: tuple[int, int], box: tuple[float, float, float, float] | None = None
    ) -> None:
        left, top, right, bottom = box if box is not None else (0.0, 0.0, float(size[0]), float(size[1]))
        self.size, self.out = size, out
        self.x = axis(size[0], out[0], left, right - left)
        self.y = axis(size[1], out[1], top, bottom - top)

    @property
    def filters(self) -> tuple[str, str]:
        """The filter of each axis (``"box"``, ``"bilinear"``, ``"exact"``)."""
        return self.x.filter, self.y.filter

    def outputs(self, rect: Rect) -> Rect | None:
        """The output rectangle that source rectangle ``rect`` reaches (None: none)."""
        x0, x1 = self.x.outputs(rect[0], rect[2])
        y0, y1 = self.y.outputs(rect[1], rect[3])
        return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None

    def scale(self, src: np.ndarray, kind: tuple[int, int, int, int], rect: Rect) -> np.ndarray:
        """Output rectangle ``rect`` as (h, w, 3) RGB uint8.

        Args:
            src: The source pixels: (height, width) native words, or (height, width, 3)
                bytes; rows may be strided, pixels must be packed.
            kind: From :func:`source_kind` (``(3, 0, 1, 2)`` for RGB bytes).
            rect: (x0, y0, x1, y1) of the output.
        """
        x0, y0, x1, y1 = rect
        if not (0 <= x0 < x1 <= self.out[0] and 0 <= y0 < y1 <= self.out[1]):
            raise ValueError(f"rectangle {rect} is not inside the {self.out[0]}x{self.out[1]} output")
        if src.shape[1] != self.size[0] or src.shape[0] != self.size[1]:
            raise ValueError(f"source is {src.shape[1]}x{src.shape[0]}, the scaler's {self.size[0]}x{self.size[1]}")
        itemsize = 3 if src.ndim == 3 else src.dtype.itemsize
        if src.strides[1] != itemsize or (src.ndim == 3 and src.strides[2] != 1):
            raise ValueError("source pixels must be packed along each row")
        out = np.empty((y1 - y0, x1 - x0, 3), np.uint8)
        x, y = self.x, self.y
        check_value(
            lib.mirror_scale(
                _ptr(src),
                src.strides[0],
                kind[0],
                kind[1],
                kind[2],
                kind[3],
                _ptr(x.first, "int32_t *"),
                _ptr(x.count, "int32_t *"),
                _ptr(x.weights, "int32_t *"),
                x.taps,
                _ptr(y.first, "int32_t *"),
                _ptr(y.count, "int32_t *"),
                _ptr(y.weights, "int32_t *"),
                y.taps,
                x0,
                y0,
                x1 - x0,
                y1 - y0,
                _ptr(out),
                out.strides[0],
            ),
            "scaling",
        )
        return out


def changed_tiles(current: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, int]:
    """Compare ``current`` with ``kept`` (2-D byte arrays of one shape) in tiles and copy
    the changed tiles into ``kept``.

    Returns:
        (the (bands, columns) bool mask of changed tiles, how many changed).
    """
    h, w = current.shape
    if kept.shape != current.shape or current.strides[1] != 1 or kept.strides[1] != 1:
        raise ValueError("the two pictures must be byte arrays of one shape")
    mask = np.empty((-(-h // TILE_ROWS), -(-w // TILE_BYTES)), np.uint8)
    n = check_value(
        lib.mirror_tiles(
            _ptr(current), current.strides[0], _ptr(kept), kept.strides[0], w, h, TILE_BYTES, TILE_ROWS, _ptr(mask)
        ),
        "comparing tiles",
    )
    return mask.view(bool), n


def tile_rects(mask: np.ndarray, width_bytes: int, height: int) -> list[Rect]:
    """Byte rectangles (x0, y0, x1, y1) covering a tile mask: runs along bands, merged down."""
    return [
        (c0 * TILE_BYTES, t0 * TILE_ROWS, min(c1 * TILE_BYTES, width_bytes), min(t1 * TILE_ROWS, height))
        for t0, t1, c0, c1 in mask_runs(mask)
    ]


def _ptr(a: np.ndarray, ctype: str = "uint8_t *") -> Any:
    """A pointer into ``a``'s memory; the caller keeps ``a`` referenced across the call."""
    return ffi.cast(ctype, a.__array_interface__["data"][0])
