"""Pixels written through fbgfx are the bytes in /dev/fb0, and the other way round.

The expected bytes come from the kernel's own bitfields (raw FBIOGET_VSCREENINFO) and
the device is read with os.pread, so nothing here trusts fbgfx's own arithmetic.
"""

import numpy as np
import pytest

import fbgfx

pytestmark = pytest.mark.kernel

# An odd-sized rectangle away from the origin catches stride and offset mistakes.
X, Y, W, H = 37, 21, 61, 43


def _nearest(colors: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """The palette colour nearest each colour (what a palette device can show)."""
    d = ((colors[..., None, :].astype(int) - palette.astype(int)) ** 2).sum(-1)
    return palette[d.argmin(-1)]


def test_packed_pixels_are_device_bytes(kernel, rng):
    """fb.pixels[...] = fb.format.pack(rgb) puts the kernel-bitfield bytes at the right place."""
    with fbgfx.open(kernel.device) as fb:
        if fb.format.indexed:
            palette = kernel.cmap(0, 256)
            rgb = palette[rng.integers(0, 256, (H, W))]
            fb.pixels[Y : Y + H, X : X + W] = fb.format.pack(rgb, palette=fb.palette)
            got = kernel.visible_rect_bytes(X + W, Y + H)[Y:, X:]
            assert np.array_equal(palette[got], rgb)
        else:
            rgb = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
            fb.pixels[Y : Y + H, X : X + W] = fb.format.pack(rgb)
            Bpp = fb.format.bpp // 8
            got = kernel.visible_rect_bytes(X + W, Y + H)[Y:, X * Bpp :]
            assert np.array_equal(got, kernel.encode(rgb))


def test_device_bytes_read_through_pixels(kernel, rng):
    """Bytes written with os.pwrite show up in fb.pixels and unpack to the right colours."""
    var, fix = kernel.var(), kernel.fix()
    Bpp = var["bits_per_pixel"] // 8
    raw = rng.integers(0, 256, (H, W * Bpp), dtype=np.uint8)
    for r in range(H):
        kernel.write((var["yoffset"] + Y + r) * fix["line_length"] + (var["xoffset"] + X) * Bpp, raw[r].tobytes())
    with fbgfx.open(kernel.device) as fb:
        native = np.ascontiguousarray(fb.pixels[Y : Y + H, X : X + W])
        assert native.view(np.uint8).reshape(H, -1).tobytes() == raw.tobytes()
        if fb.format.indexed:
            assert np.array_equal(fb.format.unpack(native, palette=fb.palette), kernel.cmap()[raw])
        else:
            rgb = fb.format.unpack(native)
            top = np.stack([rgb[..., i] >> (8 - n) for i, (_, n) in enumerate(kernel.channels(var))], -1)
            assert np.array_equal(top, kernel.decode_top_bits(raw, var))


def test_surface_drawing_is_device_bytes(kernel):
    """A Surface on fb.pixels draws a filled rectangle exactly where the device shows it."""
    with fbgfx.open(kernel.device) as fb:
        fb.pixels[: Y + H + 8, : X + W + 8] = 0
        surface = fbgfx.Surface.wrap(fb.pixels, fb.format, palette=fb.palette)
        surface.rectangle((X, Y, X + W - 1, Y + H - 1), fill=(255, 0, 0))
        Bpp = max(fb.format.bpp // 8, 1)
        raw = kernel.visible_rect_bytes(X + W + 8, Y + H + 8)
        inside = raw[Y : Y + H, X * Bpp : (X + W) * Bpp]
        outside = raw.copy()
        outside[Y : Y + H, X * Bpp : (X + W) * Bpp] = 0
        assert not outside.any(), "drawing leaked outside the rectangle"
        if fb.format.indexed:
            palette = kernel.cmap()
            red = _nearest(np.array([[255, 0, 0]], np.uint8), palette)[0]
            assert (palette[inside] == red).all()
        else:
            red = kernel.encode(np.full((H, W, 3), (255, 0, 0), np.uint8))
            assert np.array_equal(inside, red)


def test_snapshot_decodes_device_bytes(kernel, rng):
    """fb.snapshot() shows, in its top bits, the colour fields of the device's bytes."""
    with fbgfx.open(kernel.device) as fb:
        rgb = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
        fb.pixels[Y : Y + H, X : X + W] = fb.format.pack(rgb, palette=fb.palette)
        shot = np.asarray(fb.snapshot())[Y : Y + H, X : X + W]
        assert shot.shape == (H, W, 3)
        raw = kernel.visible_rect_bytes(X + W, Y + H)
        if fb.format.indexed:
            assert np.array_equal(shot, kernel.cmap()[raw[Y:, X:]])
        else:
            var = kernel.var()
            Bpp = var["bits_per_pixel"] // 8
            top = np.stack([shot[..., i] >> (8 - n) for i, (_, n) in enumerate(kernel.channels(var))], -1)
            assert np.array_equal(top, kernel.decode_top_bits(raw[Y:, X * Bpp :], var))
