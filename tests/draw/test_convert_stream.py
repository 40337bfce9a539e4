"""Frames larger than the caches are converted with non-temporal stores: same pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fbgfx import convert
from fbgfx.pixelformat import FORMATS


@pytest.mark.parametrize("name", ["XRGB8888", "XBGR8888", "ARGB8888", "RGB565", "BGR565"])
@pytest.mark.parametrize("shift", [0, 1, 4])
def test_large_frames_convert_to_pack_s_values_at_any_alignment(name: str, shift: int) -> None:
    """A 1080p frame (past the streaming threshold) written at an aligned address and at
    addresses off by one pixel or more equals PixelFormat.pack, and nothing beside it moves."""
    fmt = FORMATS[name]
    rgb = np.random.default_rng(3).integers(0, 256, (1080, 1920, 3), dtype=np.uint8)
    backing = np.full((1080, 1920 + 8), 7, fmt.dtype)
    out = backing[:, shift : shift + 1920]
    convert.to_native(rgb, fmt, out)
    assert np.array_equal(out, fmt.pack(rgb))
    assert (backing[:, :shift] == 7).all() and (backing[:, shift + 1920 :] == 7).all()


@pytest.mark.parametrize("name", ["RGB565", "BGR565", "XRGB8888"])
@pytest.mark.parametrize("width", [1917, 33])
def test_streamed_rows_at_every_start_alignment(name: str, width: int) -> None:
    """Rows whose pixel stride puts each row at another offset from a 32-byte boundary
    (the first pixels take the plain loop, the rest are streamed), widths not a multiple
    of the vector step, rows read at an odd byte stride: pack's values, padding untouched."""
    fmt = FORMATS[name]
    size = fmt.dtype.itemsize
    height = -(-(2 << 20) // (width * size)) + 3  # past the streaming threshold
    rng = np.random.default_rng(width)
    src_rows = rng.integers(0, 256, (height, 3 * width + 1), dtype=np.uint8)  # 3w + 1 bytes a row
    rgb = np.lib.stride_tricks.as_strided(src_rows, (height, width, 3), (3 * width + 1, 3, 1))
    pitch = width + 3  # an odd number of pixels (RGB565) between rows: every start offset occurs
    backing = np.full((height, pitch), 7, fmt.dtype)
    out = backing[:, 1 : width + 1]
    convert.to_native(rgb, fmt, out)
    assert np.array_equal(out, fmt.pack(np.ascontiguousarray(rgb)))
    assert (backing[:, 0] == 7).all() and (backing[:, width + 1 :] == 7).all()


@pytest.mark.parametrize("name", ["RGB565", "BGR565"])
@pytest.mark.parametrize("width", [1, 3, 17])
@pytest.mark.parametrize("shift", [0, 1])
def test_narrow_streamed_rows(name: str, width: int, shift: int) -> None:
    """Rows narrower than the pixels before a 32-byte boundary (1, 3 and 17 pixels) in a
    destination past the streaming threshold: pack's values, nothing beside them moves."""
    fmt = FORMATS[name]
    height = -(-(2 << 20) // (2 * width)) + 1
    rgb = np.random.default_rng(width).integers(0, 256, (height, width, 3), dtype=np.uint8)
    backing = np.full((height, width + 2), 7, fmt.dtype)
    out = backing[:, shift : shift + width]
    convert.to_native(rgb, fmt, out)
    assert np.array_equal(out, fmt.pack(rgb))
    assert (np.delete(backing, np.s_[shift : shift + width], axis=1) == 7).all()


@pytest.mark.parametrize("name", ["RGB565", "BGR565", "XRGB8888", "ARGB8888"])
@pytest.mark.parametrize("shift", [0, 3])
def test_large_rgba_frames_stream_pack_s_values(name: str, shift: int) -> None:
    """A 1080p RGBA frame written without blending (alpha stored where the format has it)
    and a Pillow RGB image's 4-byte pixels, aligned and off by three pixels: pack's values."""
    fmt = FORMATS[name]
    rgba = np.random.default_rng(5).integers(0, 256, (1080, 1920, 4), dtype=np.uint8)
    backing = np.full((1080, 1920 + 8), 7, fmt.dtype)
    out = backing[:, shift : shift + 1920]
    convert.to_native(rgba, fmt, out, blend=False)
    assert np.array_equal(out, fmt.pack(rgba))
    pillow = convert.as_rgb(Image.fromarray(rgba[..., :3]))
    convert.to_native(pillow, fmt, out)
    assert np.array_equal(out, fmt.pack(rgba[..., :3]))
    assert (backing[:, :shift] == 7).all() and (backing[:, shift + 1920 :] == 7).all()
