"""PixelFormat: layouts from kernel bitfields, and packing colours both ways."""

import os
import pathlib

import numpy as np
import pytest

import fbgfx
from fbgfx import Bitfield, PixelFormat, UnsupportedFormatError, VarScreenInfo
from fbgfx.screeninfo import FB_VISUAL_MONO01, FB_VISUAL_PSEUDOCOLOR, FB_VISUAL_TRUECOLOR

GOLDEN = pathlib.Path(__file__).parent / "golden" / "formats"

# A pattern every format must pack the same way forever: primaries, secondaries, grays
# and a few colours that exercise rounding (7 columns x 3 rows).
PATTERN = np.array(
    [
        [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255), (255, 255, 255)],
        [(0, 0, 0), (128, 128, 128), (64, 64, 64), (192, 192, 192), (1, 2, 3), (254, 253, 252), (7, 8, 9)],
        [(18, 52, 86), (120, 154, 188), (222, 173, 190), (239, 190, 173), (100, 0, 200), (3, 130, 250), (33, 66, 99)],
    ],
    np.uint8,
)


def var_with(bpp, red=(0, 0), green=(0, 0), blue=(0, 0), transp=(0, 0), grayscale=0):
    return VarScreenInfo(
        bits_per_pixel=bpp,
        grayscale=grayscale,
        red=Bitfield(*red),
        green=Bitfield(*green),
        blue=Bitfield(*blue),
        transp=Bitfield(*transp),
    )


@pytest.mark.parametrize(
    "name, bpp, red, green, blue, transp",
    [
        ("XRGB8888", 32, (16, 8), (8, 8), (0, 8), (0, 0)),
        ("ARGB8888", 32, (16, 8), (8, 8), (0, 8), (24, 8)),
        ("XBGR8888", 32, (0, 8), (8, 8), (16, 8), (0, 0)),
        ("ABGR8888", 32, (0, 8), (8, 8), (16, 8), (24, 8)),
        ("RGBX8888", 32, (24, 8), (16, 8), (8, 8), (0, 0)),
        ("BGRX8888", 32, (8, 8), (16, 8), (24, 8), (0, 0)),
        ("RGB888", 24, (16, 8), (8, 8), (0, 8), (0, 0)),
        ("BGR888", 24, (0, 8), (8, 8), (16, 8), (0, 0)),
        ("RGB565", 16, (11, 5), (5, 6), (0, 5), (0, 0)),
        ("BGR565", 16, (0, 5), (5, 6), (11, 5), (0, 0)),
        ("XRGB1555", 16, (10, 5), (5, 5), (0, 5), (0, 0)),
        ("ABGR1555", 16, (0, 5), (5, 5), (10, 5), (15, 1)),
    ],
)
def test_from_var_names_drm_fourcc(name, bpp, red, green, blue, transp):
    """A kernel bitfield layout is recognised under its DRM fourcc name."""
    fmt = PixelFormat.from_var(var_with(bpp, red, green, blue, transp))
    assert fmt.name == name
    assert fmt == PixelFormat.from_name(name)


def test_from_var_palette_gray_and_mono():
    """Pseudocolor gives C<bpp>, grayscale gives R<bpp>, MONO01 is an inverted 1 bpp gray."""
    assert PixelFormat.from_var(var_with(8, (0, 8), (0, 8), (0, 8)), FB_VISUAL_PSEUDOCOLOR).name == "C8"
    assert PixelFormat.from_var(var_with(4, (0, 4), (0, 4), (0, 4)), FB_VISUAL_PSEUDOCOLOR).name == "C4"
    assert PixelFormat.from_var(var_with(8, (0, 8), (0, 8), (0, 8), grayscale=1), FB_VISUAL_TRUECOLOR).name == "R8"
    mono = PixelFormat.from_var(var_with(1), FB_VISUAL_MONO01)
    assert mono.gray and mono.inverted
    assert mono.pack(np.array([[0, 0, 0], [255, 255, 255]], np.uint8)).tolist() == [1, 0]


def test_unusual_layout_gets_a_descriptive_name_and_works():
    """A layout no fourcc names still packs by its bitfields."""
    fmt = PixelFormat.from_var(var_with(16, (12, 4), (8, 4), (4, 4), (0, 4)))
    assert fmt.name == "16bpp:R4@12,G4@8,B4@4,A4@0"
    assert int(fmt.pack(np.array([255, 0, 255, 255], np.uint8))) == 0xF0FF


@pytest.mark.parametrize(
    "var, visual, words",
    [
        (var_with(16, (0, 5), (4, 6), (11, 5)), FB_VISUAL_TRUECOLOR, "overlaps"),
        (var_with(16, (11, 5), (5, 6), (0, 0)), FB_VISUAL_TRUECOLOR, "blue bitfield has length 0"),
        (var_with(16, (12, 5), (5, 6), (0, 5)), FB_VISUAL_TRUECOLOR, "does not fit"),
        (var_with(12, (8, 4), (4, 4), (0, 4)), FB_VISUAL_TRUECOLOR, "12 bits per pixel"),
        (var_with(32, (16, 8), (8, 8), (0, 8), grayscale=0x56595559), FB_VISUAL_TRUECOLOR, "FOURCC"),
        (var_with(16, (11, 5), (5, 6), (0, 5)), 6, "visual 6"),
    ],
)
def test_unsupported_layouts_raise_naming_the_problem(var, visual, words):
    """Layouts fbgfx cannot draw in raise UnsupportedFormatError saying why."""
    with pytest.raises(UnsupportedFormatError, match=words):
        PixelFormat.from_var(var, visual)


def test_unsupported_bitfields_are_named_in_the_message():
    """The error for a bad direct-colour layout lists the kernel's bitfields."""
    var = var_with(16, (11, 5), (5, 6), (0, 5)).replace(red=Bitfield(11, 5, 1))
    with pytest.raises(UnsupportedFormatError, match=r"red=5/11 green=6/5 blue=5/0"):
        PixelFormat.from_var(var)


def test_unknown_name_lists_known_formats():
    """An unknown format name is a ValueError that lists the known names."""
    with pytest.raises(ValueError, match="RGB565"):
        PixelFormat.from_name("RGB555X")


@pytest.mark.parametrize(
    "name, color, value",
    [
        ("XRGB8888", (255, 0, 0), 0x00FF0000),
        ("XRGB8888", (0x12, 0x34, 0x56), 0x00123456),
        ("ARGB8888", (0x12, 0x34, 0x56, 0x80), 0x80123456),
        ("XBGR8888", (0x12, 0x34, 0x56), 0x00563412),
        ("RGBX8888", (0x12, 0x34, 0x56), 0x12345600),
        ("BGRX8888", (0x12, 0x34, 0x56), 0x56341200),
        ("RGB888", (0x12, 0x34, 0x56), 0x123456),
        ("BGR888", (0x12, 0x34, 0x56), 0x563412),
        ("RGB565", (255, 0, 0), 0xF800),
        ("RGB565", (0, 255, 0), 0x07E0),
        ("RGB565", (0, 0, 255), 0x001F),
        ("RGB565", (0x12, 0x34, 0x56), (0x12 >> 3) << 11 | (0x34 >> 2) << 5 | 0x56 >> 3),
        ("BGR565", (255, 0, 0), 0x001F),
        ("XRGB1555", (255, 255, 255), 0x7FFF),
        ("ARGB1555", (255, 255, 255, 255), 0xFFFF),
        ("R8", (255, 255, 255), 255),
        ("R8", (255, 0, 0), 76),
    ],
)
def test_pack_color_hand_computed(name, color, value):
    """pack_color gives the exact pixel value a driver expects (channels truncated)."""
    assert PixelFormat.from_name(name).pack_color(color) == value


def test_24bpp_packs_little_endian_bytes():
    """RGB888 stores blue first in memory, as the fourcc's little-endian word says."""
    fmt = PixelFormat.from_name("RGB888")
    assert fmt.pack(np.array([[0x12, 0x34, 0x56]], np.uint8)).tobytes() == bytes([0x56, 0x34, 0x12])


@pytest.mark.parametrize("name", sorted(fbgfx.FORMATS))
def test_pack_matches_golden_bytes(name):
    """Packing the fixed pattern gives the bytes stored in tests/device/golden/formats (per format)."""
    fmt = fbgfx.FORMATS[name]
    native = fmt.pack(PATTERN)
    if fmt.is_packed:
        native = fmt.pack_bits(native)
    data = np.ascontiguousarray(native).astype(native.dtype.newbyteorder("<")).tobytes()
    path = GOLDEN / f"{name}.bin"
    if os.environ.get("FBGFX_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert data == path.read_bytes()


@pytest.mark.parametrize("name", sorted(n for n, f in fbgfx.FORMATS.items() if not (f.indexed or f.gray)))
def test_unpack_inverts_pack_within_channel_precision(name):
    """unpack(pack(rgb)) gives back each channel to within the format's precision."""
    fmt = fbgfx.FORMATS[name]
    rgb = np.random.default_rng(1).integers(0, 256, (17, 13, 3), dtype=np.uint8)
    back = fmt.unpack(fmt.pack(rgb))
    for i, bf in enumerate((fmt.red, fmt.green, fmt.blue)):
        step = 256 >> bf.length
        assert np.abs(back[..., i].astype(int) - rgb[..., i]).max() < max(step, 1)


def test_unpack_full_scale_is_255():
    """The top level of a 5- or 6-bit channel reads back as 255, not 248 or 252."""
    fmt = PixelFormat.from_name("RGB565")
    assert fmt.unpack_color(0xFFFF) == (255, 255, 255)
    assert fmt.unpack_color(0xF800) == (255, 0, 0)


def test_alpha_round_trip_and_default_opaque():
    """ARGB8888 keeps alpha; RGB input packs opaque; formats without alpha unpack 255."""
    fmt = PixelFormat.from_name("ARGB8888")
    rgba = np.array([[10, 20, 30, 40]], np.uint8)
    assert fmt.unpack(fmt.pack(rgba), alpha=True).tolist() == [[10, 20, 30, 40]]
    assert fmt.pack_color((1, 2, 3)) >> 24 == 255
    assert PixelFormat.from_name("RGB565").unpack(np.array([0], np.uint16), alpha=True).tolist() == [[0, 0, 0, 255]]


def test_palette_pack_picks_nearest_entry():
    """On a palette format each colour packs to the nearest palette entry, for one colour and for images."""
    fmt = PixelFormat.from_name("C8")
    palette = np.array([[0, 0, 0], [255, 0, 0], [0, 0, 250], [250, 250, 250]], np.uint8)
    assert fmt.pack_color((200, 30, 20), palette) == 1
    image = np.random.default_rng(2).integers(0, 256, (40, 40, 3), dtype=np.uint8)
    got = fmt.pack(image, palette)
    d = ((image[..., None, :].astype(int) - palette.astype(int)) ** 2).sum(-1)
    # The large-image path quantises to a 32-level cube: the chosen entry is never far from the best.
    chosen = np.take_along_axis(d, got[..., None].astype(int), -1)[..., 0]
    assert (np.sqrt(chosen) - np.sqrt(d.min(-1)) <= 14).all()
    exact = fmt.pack(palette, palette)
    assert exact.tolist() == [0, 1, 2, 3]


def test_default_palette_is_cube_plus_grays():
    """The default 8 bpp palette holds black, white, pure primaries and 256 entries."""
    pal = fbgfx.default_palette(8)
    assert pal.shape == (256, 3)
    for color in ((0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255)):
        assert (pal == color).all(1).any()


@pytest.mark.parametrize("bpp", [1, 2, 4])
def test_pack_bits_round_trip_and_msb_first(bpp):
    """Sub-byte pixels pack first-pixel-in-the-high-bits and unpack to the same values."""
    fmt = PixelFormat(bpp, gray=True)
    values = np.random.default_rng(bpp).integers(0, 1 << bpp, (3, 13), dtype=np.uint8)
    packed = fmt.pack_bits(values)
    assert packed.shape == (3, fmt.row_bytes(13))
    assert (fmt.unpack_bits(packed, 13) == values).all()
    one = np.zeros((1, 8 // bpp), np.uint8)
    one[0, 0] = 1
    assert fmt.pack_bits(one)[0, 0] == 1 << (8 - bpp)


def test_pack_rejects_bad_shapes():
    """pack wants a last axis of 3 or 4 channels."""
    with pytest.raises(ValueError, match="last axis"):
        PixelFormat.from_name("RGB565").pack(np.zeros((4, 5), np.uint8))


@pytest.mark.parametrize(
    "name, dtype, shape",
    [
        ("XRGB8888", "<u4", (2, 3)),
        ("RGB565", "<u2", (2, 3)),
        ("RGB888", "u1", (2, 3, 3)),
        ("C8", "u1", (2, 3)),
    ],
)
def test_dtype_and_array_shape(name, dtype, shape):
    """Each format says the NumPy dtype and array shape of its pixels."""
    fmt = PixelFormat.from_name(name)
    assert fmt.dtype == np.dtype(dtype)
    assert fmt.array_shape(2, 3) == shape
