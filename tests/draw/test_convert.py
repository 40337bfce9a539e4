"""Pixel conversion, blending and fill (fbgfx.convert) against PixelFormat and float references."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from fbgfx import FORMATS, PixelFormat, convert, default_palette

NAMES = sorted(FORMATS)
SIZES = [(9, 16), (7, 17)]  # even and odd widths, more than 64 pixels (palette LUT path)


@pytest.fixture(params=["c", "numpy"])
def path(request, monkeypatch):
    """Run the test through the C kernels and through the NumPy fallback."""
    if request.param == "c" and not convert._C:
        pytest.skip("fbgfx._native was built without the convert kernels")
    if request.param == "numpy":
        monkeypatch.setattr(convert, "_C", False)
    return request.param


def rng(seed=0):
    return np.random.default_rng(seed)


def random_native(fmt, h, w, seed=1):
    """Arbitrary native bytes, padding bits included."""
    shape = fmt.array_shape(h, w)
    info = np.iinfo(fmt.dtype)
    values = rng(seed).integers(0, info.max, shape, dtype=fmt.dtype, endpoint=True)
    if fmt.bpp < 8:
        values &= (1 << fmt.bpp) - 1
    return values


def filled(fmt, h, w, byte):
    """A native (h, w) array whose every byte is ``byte``."""
    raw = np.full(h * w * max(fmt.bpp // 8, 1), byte, np.uint8)
    return raw.view(fmt.dtype).reshape(fmt.array_shape(h, w))


def guarded(fmt, h, w, sentinel=0xA5):
    """A view of h x w native pixels inside a larger buffer full of a sentinel."""
    big = filled(fmt, h + 4, w + 6, sentinel)
    return big, big[2 : 2 + h, 3 : 3 + w]


def assert_guard_intact(big, h, w, sentinel=0xA5):
    outside = np.ones(big.shape[:2], bool)
    outside[2 : 2 + h, 3 : 3 + w] = False
    raw = big.view(np.uint8) if big.dtype.itemsize > 1 else big
    per_pixel = raw.reshape(big.shape[0], big.shape[1], -1)
    assert (per_pixel[outside] == sentinel).all(), "bytes outside the destination changed"


def fields(fmt, native):
    """Per-channel levels of native pixels, (..., 4) with zeros for missing channels."""
    if fmt.bpp == 24:
        v = native.astype(np.uint32)
        value = v[..., 0] | v[..., 1] << 8 | v[..., 2] << 16
    else:
        value = native.astype(np.uint32)
    if fmt.gray or fmt.indexed:
        return value[..., None]
    return np.stack(
        [(value >> bf.offset) & ((1 << bf.length) - 1) for bf in (fmt.red, fmt.green, fmt.blue, fmt.transp)], -1
    )


# -- to_native ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("h,w", SIZES)
def test_to_native_equals_pack(name, h, w, path):
    """Opaque RGB, RGBA without blending and RGBA at alpha 255 all give fmt.pack's bytes."""
    fmt = FORMATS[name]
    rgb = rng().integers(0, 256, (h, w, 3), dtype=np.uint8)
    rgba = rng(2).integers(0, 256, (h, w, 4), dtype=np.uint8)
    out = random_native(fmt, h, w)
    convert.to_native(rgb, fmt, out)
    np.testing.assert_array_equal(out, fmt.pack(rgb))
    convert.to_native(rgba, fmt, out, blend=False)
    np.testing.assert_array_equal(out, fmt.pack(rgba))
    rgba[..., 3] = 255
    out = random_native(fmt, h, w)
    convert.to_native(rgba, fmt, out)
    np.testing.assert_array_equal(out, fmt.pack(rgba))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("h,w", SIZES)
def test_to_native_strided_destination_keeps_guard_bands(name, h, w, path):
    """Writing into a slice of a wider buffer fills the slice and nothing around it."""
    fmt = FORMATS[name]
    rgb = rng(3).integers(0, 256, (h, w, 3), dtype=np.uint8)
    big, view = guarded(fmt, h, w)
    convert.to_native(rgb, fmt, view)
    np.testing.assert_array_equal(view, fmt.pack(rgb))
    assert_guard_intact(big, h, w)
    rgba = rng(4).integers(0, 256, (h, w, 4), dtype=np.uint8)
    convert.to_native(rgba, fmt, view)
    convert.blend_mask(view, rng(5).integers(0, 256, (h, w), dtype=np.uint8), (1, 2, 3, 200), fmt)
    convert.fill(view, fmt.pack_color((9, 8, 7)))
    assert_guard_intact(big, h, w)


@pytest.mark.parametrize("name", ["XRGB8888", "RGB565", "RGB888", "C8", "R4"])
def test_to_native_odd_source_layouts(name, path):
    """Flipped, column-strided and channel-reversed sources convert like their copies."""
    fmt = FORMATS[name]
    base = rng(6).integers(0, 256, (20, 42, 4), dtype=np.uint8)
    for src in (base[::-1, :, :3], base[:, ::2, :3], base[..., 2::-1], base[..., :3], base[::2]):
        out = np.zeros(fmt.array_shape(*src.shape[:2]), fmt.dtype)
        convert.to_native(src, fmt, out, blend=False)
        np.testing.assert_array_equal(out, fmt.pack(np.ascontiguousarray(src)))


def test_to_native_negative_row_stride(path):
    """A vertically flipped destination view is written row by row, upside down."""
    fmt = FORMATS["RGB565"]
    rgb = rng(7).integers(0, 256, (10, 33, 3), dtype=np.uint8)
    out = np.zeros((10, 33), np.uint16)
    convert.to_native(rgb, fmt, out[::-1])
    np.testing.assert_array_equal(out, fmt.pack(rgb)[::-1])


@pytest.mark.parametrize("name", ["C8", "C4", "C1"])
def test_to_native_custom_palette(name, path):
    """Palette formats pick the nearest entry of the palette given."""
    fmt = FORMATS[name]
    palette = rng(8).integers(0, 256, (1 << fmt.bpp, 3), dtype=np.uint8)
    rgb = rng(9).integers(0, 256, (12, 13, 3), dtype=np.uint8)
    out = np.zeros((12, 13), np.uint8)
    convert.to_native(rgb, fmt, out, palette=palette)
    np.testing.assert_array_equal(out, fmt.pack(rgb, palette))


def test_to_native_empty_is_noop(path):
    """Zero-sized images write nothing and raise nothing."""
    fmt = FORMATS["XRGB8888"]
    out = np.zeros((0, 5), np.uint32)
    convert.to_native(np.zeros((0, 5, 3), np.uint8), fmt, out)
    assert out.shape == (0, 5)


# -- blending ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in NAMES if not FORMATS[n].indexed])
@pytest.mark.parametrize("h,w", SIZES)
def test_rgba_blend_matches_float_reference(name, h, w, path):
    """Source-over blending is within one level per channel of a float computation."""
    fmt = FORMATS[name]
    rgba = rng(10).integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgba[0, :4, 3] = [0, 255, 1, 254]
    out = random_native(fmt, h, w)
    before = out.copy()
    dst = fmt.unpack(before, alpha=True).astype(np.float64)
    a = rgba[..., 3:].astype(np.float64) / 255
    ref_rgb = rgba[..., :3] * a + dst[..., :3] * (1 - a)
    ref_a = 255 * a + dst[..., 3:] * (1 - a)
    ref = np.round(np.concatenate([ref_rgb, ref_a], -1)).astype(np.uint8)
    convert.to_native(rgba, fmt, out)
    diff = np.abs(fields(fmt, out).astype(int) - fields(fmt, fmt.pack(ref)).astype(int))
    touched = rgba[..., 3] > 0
    assert diff[touched].max() <= 1
    np.testing.assert_array_equal(out[~touched], before[~touched])  # alpha 0: bytes as they were


@pytest.mark.parametrize("name", ["C8", "C4", "C2"])
def test_rgba_blend_palette_formats(name, path):
    """On palette formats a blend picks the entry nearest the blended colour."""
    fmt = FORMATS[name]
    h, w = SIZES[1]
    rgba = rng(11).integers(0, 256, (h, w, 4), dtype=np.uint8)
    out = random_native(fmt, h, w)
    before = out.copy()
    convert.to_native(rgba, fmt, out)
    a = rgba[..., 3:].astype(np.uint32)
    dst = fmt.unpack(before).astype(np.uint32)
    mixed = (rgba[..., :3] * a + dst * (255 - a) + 127) // 255
    expect = np.where(rgba[..., 3] > 0, fmt.pack(mixed.astype(np.uint8)), before)
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("name", NAMES)
def test_blend_mask_endpoints(name, path):
    """Coverage 255 at alpha 255 writes exactly pack_color; coverage 0 changes no byte."""
    fmt = FORMATS[name]
    h, w = SIZES[1]
    color = (200, 100, 50, 255)
    mask = np.zeros((h, w), np.uint8)
    mask[::2] = 255
    out = random_native(fmt, h, w)
    before = out.copy()
    convert.blend_mask(out, mask, color, fmt)
    packed = fmt.pack_color(color)
    expect = fmt.pack(np.array(color, np.uint8)) if fmt.bpp == 24 else packed
    np.testing.assert_array_equal(out[::2], np.broadcast_to(expect, out[::2].shape))
    np.testing.assert_array_equal(out[1::2], before[1::2])
    out2 = before.copy()
    convert.blend_mask(out2, np.full((h, w), 255, np.uint8), (1, 2, 3, 0), fmt)
    np.testing.assert_array_equal(out2, before)


@pytest.mark.parametrize("name", [n for n in NAMES if not FORMATS[n].indexed])
def test_blend_mask_matches_float_reference(name, path):
    """Partial coverage blends dst toward the colour by coverage*a/255^2, within one level."""
    fmt = FORMATS[name]
    h, w = SIZES[0]
    mask = rng(12).integers(0, 256, (h, w), dtype=np.uint8)
    color = np.array([30, 220, 140], np.float64)
    out = random_native(fmt, h, w)
    dst = fmt.unpack(out, alpha=True).astype(np.float64)
    k = (mask.astype(np.float64) * 170 / 255 / 255)[..., None]
    ref = np.concatenate([color + (dst[..., :3] - color) * (1 - k), 255 * k + dst[..., 3:] * (1 - k)], -1)
    convert.blend_mask(out, mask, (30, 220, 140, 170), fmt)
    diff = np.abs(fields(fmt, out).astype(int) - fields(fmt, fmt.pack(np.round(ref).astype(np.uint8))).astype(int))
    assert diff.max() <= 1


# -- from_native -------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("alpha", [False, True])
def test_from_native_equals_unpack(name, alpha, path):
    """from_native gives unpack's colours, also from a strided view, as a contiguous array."""
    fmt = FORMATS[name]
    h, w = SIZES[1]
    big = random_native(fmt, h + 3, w + 5)
    view = big[1 : 1 + h, 2 : 2 + w]
    rgb = convert.from_native(view, fmt, alpha=alpha)
    np.testing.assert_array_equal(rgb, fmt.unpack(view, alpha=alpha))
    assert rgb.flags.c_contiguous and rgb.shape == (h, w, 4 if alpha else 3)


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name, path):
    """to_native then from_native gives back colours the format can show exactly."""
    fmt = FORMATS[name]
    h, w = SIZES[0]
    shown = fmt.unpack(fmt.pack(rng(13).integers(0, 256, (h, w, 3), dtype=np.uint8)))
    out = np.zeros(fmt.array_shape(h, w), fmt.dtype)
    convert.to_native(shown, fmt, out)
    np.testing.assert_array_equal(convert.from_native(out, fmt), shown)


# -- fill ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_fill(name, path):
    """fill writes the packed colour into every pixel of a strided view and nowhere else."""
    fmt = FORMATS[name]
    h, w = SIZES[1]
    big, view = guarded(fmt, h, w)
    value = fmt.pack_color((12, 200, 99))
    convert.fill(view, value)
    np.testing.assert_array_equal(view, fmt.pack(np.broadcast_to(np.array([12, 200, 99], np.uint8), (h, w, 3))))
    assert_guard_intact(big, h, w)


# -- as_rgb --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["1", "L", "P", "RGB", "RGBX", "CMYK", "YCbCr", "HSV", "LAB", "I", "F"])
def test_as_rgb_opaque_modes(mode):
    """Modes without alpha give (h, w, 3) with the colours Pillow's convert('RGB') gives."""
    im = Image.fromarray(rng(15).integers(0, 256, (6, 7, 3), dtype=np.uint8))
    im = im.convert(mode) if mode not in ("LAB",) else Image.new("LAB", (7, 6), (50, 10, 20))
    rgb = convert.as_rgb(im)
    assert rgb.shape == (6, 7, 3) and rgb.dtype == np.uint8
    np.testing.assert_array_equal(rgb, np.asarray(im.convert("RGB")))


@pytest.mark.parametrize("mode", ["RGBA", "LA", "PA", "RGBa"])
def test_as_rgb_alpha_modes(mode):
    """Modes with alpha give (h, w, 4) with Pillow's RGBA colours."""
    im = Image.fromarray(rng(16).integers(0, 256, (6, 7, 4), dtype=np.uint8)).convert(mode)
    rgba = convert.as_rgb(im)
    assert rgba.shape == (6, 7, 4)
    np.testing.assert_array_equal(rgba, np.asarray(im.convert("RGBA")))


def test_as_rgb_premultiplied_gray_alpha():
    """'La' (premultiplied) is un-premultiplied to gray plus alpha."""
    im = Image.frombytes("La", (2, 1), bytes([50, 100, 0, 0]))
    np.testing.assert_array_equal(convert.as_rgb(im), [[[128, 128, 128, 100], [0, 0, 0, 0]]])


def test_as_rgb_palette_transparency():
    """A palette image with a transparent index gives RGBA with alpha 0 there."""
    im = Image.new("P", (3, 1))
    im.putpalette([255, 0, 0, 0, 255, 0] + [0] * 762)
    im.putpixel((1, 0), 1)
    im.info["transparency"] = 1
    rgba = convert.as_rgb(im)
    np.testing.assert_array_equal(rgba[0, :, 3], [255, 0, 255])
    np.testing.assert_array_equal(rgba[0, 0], [255, 0, 0, 255])


@pytest.mark.parametrize("mode", ["I;16", "I;16B"])
def test_as_rgb_16_bit_scaled(mode):
    """16-bit samples keep their top 8 bits (65535 is white, 32768 mid gray)."""
    im = Image.new("I;16", (3, 1))
    for x, v in enumerate((0, 32768, 65535)):
        im.putpixel((x, 0), v)
    if mode != "I;16":
        im = Image.frombytes(mode, (3, 1), np.array([0, 32768, 65535], ">u2").tobytes())
    np.testing.assert_array_equal(convert.as_rgb(im)[0, :, 0], [0, 128, 255])


def test_as_rgb_arrays():
    """Gray arrays become RGB; RGB and RGBA arrays come back as they are."""
    gray = rng(17).integers(0, 256, (4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(convert.as_rgb(gray), np.repeat(gray[..., None], 3, -1))
    rgb = rng(18).integers(0, 256, (4, 5, 3), dtype=np.uint8)
    assert convert.as_rgb(rgb) is rgb
    rgba = rng(19).integers(0, 256, (4, 5, 4), dtype=np.uint8)
    assert convert.as_rgb(rgba) is rgba


def test_as_rgb_pillow_view_outlives_image(path):
    """Pixels read in place from a Pillow image stay valid after the image is gone."""
    src = rng(20).integers(0, 256, (30, 41, 3), dtype=np.uint8)
    rgb = convert.as_rgb(Image.fromarray(src))
    gc.collect()
    np.testing.assert_array_equal(rgb, src)
    out = np.zeros((20, 30), np.uint32)
    convert.to_native(rgb[5:25, 3:33], FORMATS["ARGB8888"], out)
    np.testing.assert_array_equal(out, FORMATS["ARGB8888"].pack(src[5:25, 3:33]))


# -- bad input -----------------------------------------------------------------------------


def test_bad_inputs_raise():
    """Wrong types, dtypes, shapes, palettes, colours and values raise with clear errors."""
    fmt = FORMATS["RGB565"]
    out = np.zeros((4, 5), np.uint16)
    with pytest.raises(TypeError, match="PIL image or a NumPy"):
        convert.as_rgb([[1, 2, 3]])
    with pytest.raises(TypeError, match="uint8"):
        convert.as_rgb(np.zeros((4, 5, 3), np.float32))
    with pytest.raises(ValueError, match="shape"):
        convert.as_rgb(np.zeros((4, 5, 2), np.uint8))
    with pytest.raises(ValueError, match="shape"):
        convert.to_native(np.zeros((4, 6, 3), np.uint8), fmt, out)
    with pytest.raises(TypeError, match="dtype"):
        convert.to_native(np.zeros((4, 5, 3), np.uint8), fmt, np.zeros((4, 5), np.uint32))
    with pytest.raises(TypeError, match="uint8"):
        convert.to_native(np.zeros((4, 5, 3), np.int16), fmt, out)
    with pytest.raises(ValueError, match="RGB or"):
        convert.to_native(np.zeros((4, 5, 2), np.uint8), fmt, out)
    with pytest.raises(TypeError, match="PixelFormat"):
        convert.to_native(np.zeros((4, 5, 3), np.uint8), "RGB565", out)
    readonly = out.copy()
    readonly.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        convert.to_native(np.zeros((4, 5, 3), np.uint8), fmt, readonly)
    with pytest.raises(ValueError, match="palette"):
        convert.to_native(
            np.zeros((4, 5, 3), np.uint8), FORMATS["C8"], np.zeros((4, 5), np.uint8), palette=np.zeros((4, 2), np.uint8)
        )
    with pytest.raises(ValueError, match="color"):
        convert.blend_mask(out, np.zeros((4, 5), np.uint8), (1, 2, 300), fmt)
    with pytest.raises(TypeError, match="color"):
        convert.blend_mask(out, np.zeros((4, 5), np.uint8), 5, fmt)
    with pytest.raises(TypeError, match="mask"):
        convert.blend_mask(out, np.zeros((4, 5), np.float32), (1, 2, 3), fmt)
    with pytest.raises(ValueError, match="fit"):
        convert.fill(out, 1 << 16)
    with pytest.raises(ValueError, match="0..0xFFFFFF"):
        convert.fill(np.zeros((2, 2, 3), np.uint8), -1)
    with pytest.raises(TypeError, match="dtype"):
        convert.from_native(np.zeros((4, 5), np.uint32), fmt)


# -- fuzzing -------------------------------------------------------------------------------


@settings(max_examples=150)
@given(
    name=st.sampled_from(NAMES),
    h=st.integers(0, 9),
    w=st.integers(0, 70),
    pad_left=st.integers(0, 5),
    pad_right=st.integers(0, 5),
    channels=st.sampled_from([3, 4]),
    blend=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fuzz_never_writes_outside(name, h, w, pad_left, pad_right, channels, blend, seed):
    """Random sizes and row strides: every operation stays inside its destination view."""
    fmt: PixelFormat = FORMATS[name]
    r = rng(seed)
    big = filled(fmt, h + 2, w + pad_left + pad_right, 0x5A)
    view = big[1 : 1 + h, pad_left : pad_left + w]
    before = big.copy()
    src = r.integers(0, 256, (h, w, channels), dtype=np.uint8)
    convert.to_native(src, fmt, view, blend=blend)
    if not blend or channels == 3:
        np.testing.assert_array_equal(view, fmt.pack(src))
    convert.blend_mask(view, r.integers(0, 256, (h, w), dtype=np.uint8), (5, 6, 7, 128), fmt)
    convert.fill(view[:, : w // 2], fmt.pack_color((1, 2, 3)))
    inside = np.zeros(big.shape[:2], bool)
    inside[1 : 1 + h, pad_left : pad_left + w] = True
    np.testing.assert_array_equal(big[~inside], before[~inside])
    assert convert.from_native(view, fmt).shape == (h, w, 3)


def test_default_palette_is_used_for_indexed(path):
    """Without a palette, C8 maps colours onto fbgfx.default_palette()."""
    fmt = FORMATS["C8"]
    rgb = np.broadcast_to(default_palette()[37], (9, 9, 3)).copy()
    out = np.zeros((9, 9), np.uint8)
    convert.to_native(rgb, fmt, out)
    assert (out == 37).all()


_PLAIN_LOOPS_CHECK = """
import numpy as np
from fbgfx import FORMATS, convert
assert convert._C
r = np.random.default_rng(21)
for name, fmt in FORMATS.items():
    for h, w in ((5, 40), (3, 37)):
        for ch in (3, 4):
            src = r.integers(0, 256, (h, w, ch), dtype=np.uint8)
            out = np.zeros(fmt.array_shape(h, w), fmt.dtype)
            convert.to_native(src, fmt, out, blend=False)
            assert (out == fmt.pack(src)).all(), ("pack", name, ch)
            ref = out.copy()
            convert._blend_np(src[..., :3], src[..., 3] if ch == 4 else np.full((h, w), 200, np.uint8), fmt, ref, None)
            if ch == 4:
                convert.to_native(src, fmt, out)
                assert (out == ref).all(), ("blend", name)
            assert (convert.from_native(out, fmt) == fmt.unpack(out)).all(), ("unpack", name)
print("plain loops ok")
"""


def test_plain_loops_without_avx2():
    """With FBGFX_NO_AVX2=1 (as on ARM boards) the plain C loops give pack's bytes too."""
    import os
    import subprocess
    import sys

    if not convert._C:
        pytest.skip("fbgfx._native was built without the convert kernels")
    env = dict(os.environ, FBGFX_NO_AVX2="1")
    res = subprocess.run([sys.executable, "-c", _PLAIN_LOOPS_CHECK], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "plain loops ok" in res.stdout


# -- FramePacker (present()'s conversion) ------------------------------------------------


def _frame_sources(h, w):
    """RGB frames as present() gets them: contiguous, rows strided, upside down, RGBA, Pillow's."""
    base = rng(8).integers(0, 256, (h, w + 3, 4), dtype=np.uint8)
    return {
        "contiguous": np.ascontiguousarray(base[:, :w, :3]),
        "padded rows": np.ascontiguousarray(base[..., :3])[:, :w],
        "upside down": np.ascontiguousarray(base[:, :w, :3])[::-1],
        "rgba": np.ascontiguousarray(base[:, :w]),
        "pillow": convert.as_rgb(Image.fromarray(np.ascontiguousarray(base[:, :w, :3]))),
    }


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("padded", [False, True])
def test_frame_packer_writes_what_to_native_writes(name, padded, path):
    """A FramePacker gives to_native's pixels for every source present() may hand it,
    into a contiguous page and into one with padded rows (the padding untouched)."""
    fmt = FORMATS[name]
    h, w = 7, 37
    packer = convert.FramePacker(fmt, None, h, w)
    for kind, src in _frame_sources(h, w).items():
        want = np.full(fmt.array_shape(h, w), 9, fmt.dtype)  # RGBA blends onto what is there
        convert.to_native(src, fmt, want)
        backing = np.full(fmt.array_shape(h, w + 5), 9, fmt.dtype)
        out = backing[:, : want.shape[1]] if padded else np.full_like(want, 9)
        packer(src, out)
        assert np.array_equal(out, want), kind
        if padded:
            assert (backing[:, want.shape[1] :] == 9).all(), kind


def test_frame_packer_refuses_what_to_native_refuses():
    """Another frame size and a read-only page raise to_native's errors, not C's."""
    fmt = FORMATS["RGB565"]
    packer = convert.FramePacker(fmt, None, 4, 6)
    out = np.zeros((4, 6), np.uint16)
    with pytest.raises(ValueError, match="shape"):
        packer(np.zeros((4, 7, 3), np.uint8), out)
    with pytest.raises(ValueError, match="shape"):
        packer(np.zeros((4, 6, 3), np.uint8), np.zeros((4, 7), np.uint16))
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        packer(np.zeros((4, 6, 3), np.uint8), out)


def test_frame_packer_takes_contiguous_frames_straight_to_c(monkeypatch):
    """A contiguous RGB frame (what video decoders hand present()) into a page of rows
    any stride apart goes straight to the C kernel, without to_native's checks."""
    if not convert._C:
        pytest.skip("fbgfx._native was built without the convert kernels")
    fmt = FORMATS["RGB565"]
    src = rng(9).integers(0, 256, (5, 19, 3), dtype=np.uint8)
    packer = convert.FramePacker(fmt, None, 5, 19)

    def refuse(*args, **kwargs):
        raise AssertionError("to_native called")

    monkeypatch.setattr(convert, "to_native", refuse)
    for out in (np.zeros((5, 19), np.uint16), np.zeros((5, 24), np.uint16)[:, :19]):
        packer(src, out)
        assert np.array_equal(out, fmt.pack(src))
