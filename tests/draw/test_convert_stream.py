"""Frames larger than the caches are converted with non-temporal stores: same pixels."""

from __future__ import annotations

import numpy as np
import pytest

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
