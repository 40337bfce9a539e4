"""Pixel counts past 2**31 in the C kernels: sizes and offsets are ptrdiff_t, never int.

A 100000 x 21475 C8 surface has more than 2**31 pixels. These tests reach that count
without the memory: every row of the view is the same row (row stride 0), so the
kernels do all the work of the big surface on 100 KB.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from fbgfx import Surface, convert
from fbgfx.pixelformat import PixelFormat

W, H = 100000, 21475  # W * H > 2**31 - 1

# NumPy cannot shape one array past 2**31 elements where pointers are 32 bits (armhf).
pytestmark = pytest.mark.skipif(sys.maxsize < 2**32, reason="a 32-bit process has no arrays of 2**31 pixels")


def _rows(row: np.ndarray, height: int) -> np.ndarray:
    """``row`` repeated ``height`` times in place (row stride 0), writeable."""
    return as_strided(row, (height,) + row.shape, (0,) + row.strides, writeable=True)


def test_fill_of_more_than_2_31_pixels() -> None:
    """Surface.clear on 100000 x 21475 C8 pixels fills them without overflowing."""
    assert W * H > 2**31
    row = np.zeros(W, np.uint8)
    s = Surface.wrap(_rows(row, H), "C8")
    s.clear(7)
    assert (row == 7).all()


def test_pack_of_more_than_2_31_pixels() -> None:
    """convert.to_native writes 100000 x 21475 RGB pixels into RGB565 without overflowing."""
    fmt = PixelFormat.from_name("RGB565")
    src_row = np.random.default_rng(3).integers(0, 256, (W, 3), np.uint8)
    out_row = np.zeros(W, np.uint16)
    convert.to_native(_rows(src_row, H), fmt, _rows(out_row, H))
    np.testing.assert_array_equal(out_row, fmt.pack(src_row[None], None)[0])
