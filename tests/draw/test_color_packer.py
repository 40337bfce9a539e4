"""Colours packed without NumPy (fbgfx.color.Packer) equal PixelFormat's reference packing."""

from __future__ import annotations

import decimal
import fractions
import itertools
import tracemalloc
from typing import Any

import numpy as np
import pytest

import fbgfx
from fbgfx.color import BLEND, OPAQUE, SKIP, Ink, Packer, parse_color, resolve
from fbgfx.pixelformat import FORMATS, PixelFormat

NAMES = sorted(FORMATS)
_RNG = np.random.default_rng(11)
SWEEP = [tuple(int(v) for v in c) for c in _RNG.integers(0, 256, (1500, 3))] + list(
    itertools.product((0, 1, 7, 8, 127, 128, 247, 248, 254, 255), repeat=3)
)


def reference_ink(color: Any, fmt: PixelFormat, palette: Any = None) -> Ink:
    """The ink as fbgfx computed it through NumPy before the packer existed."""
    if isinstance(color, (int, np.integer)) and not isinstance(color, bool):
        value = int(color)
        if not 0 <= value < 1 << fmt.bpp:
            raise ValueError(f"native pixel value {value:#x} does not fit in {fmt.name} ({fmt.bpp} bits)")
        rgb = fmt.unpack_color(value, palette)
        return Ink(value, (rgb[0], rgb[1], rgb[2], 255), OPAQUE)
    rgba = parse_color(color)
    value = fmt.pack_color(rgba[:3] + (255,), palette)
    return Ink(value, rgba, OPAQUE if rgba[3] == 255 else SKIP if rgba[3] == 0 else BLEND)


@pytest.mark.parametrize("name", NAMES)
def test_packer_matches_pack_color_for_every_named_format(name: str) -> None:
    """Every colour of a sweep packs to PixelFormat.pack_color's value, by each route."""
    fmt = FORMATS[name]
    p = Packer(fmt)
    for c in SWEEP:
        ref = fmt.pack_color(c)
        assert p.opaque(c) == ref, c
        assert p.ink(c) == Ink(ref, c + (255,), OPAQUE), c
        assert p.pack_rgb(*c) == ref, c
        assert resolve(c, fmt).value == ref, c


@pytest.mark.parametrize("name", NAMES)
def test_native_ints_show_what_unpack_color_says(name: str) -> None:
    """A native int keeps its value and shows the colour PixelFormat.unpack_color gives."""
    fmt = FORMATS[name]
    p = Packer(fmt)
    values = list(range(min(1 << fmt.bpp, 1024))) + [int(v) for v in _RNG.integers(0, 1 << fmt.bpp, 300)]
    for v in values:
        assert p.ink(v) == reference_ink(v, fmt), v


@pytest.mark.parametrize("bpp", [8, 4, 2, 1])
def test_palette_packer_matches_reference_for_own_palettes(bpp: int) -> None:
    """On palette formats the nearest entry of a given colour map wins, the first on ties."""
    fmt = FORMATS[f"C{bpp}"]
    n = 1 << bpp
    palette = _RNG.integers(0, 256, (n, 3)).astype(np.uint8)
    palette[n - 1] = palette[0]  # a tie: the first entry must win, as argmin picks it
    p = Packer(fmt, palette)
    for c in SWEEP[:600]:
        assert p.opaque(c) == fmt.pack_color(c, palette), c
        assert resolve(c, fmt, palette) == reference_ink(c, fmt, palette), c
    for v in range(n):
        assert p.ink(v) == reference_ink(v, fmt, palette), v


FORMS: list[Any] = [
    "red",
    "#f00",
    "#ff0000",
    "#ff000080",
    "#ff000000",
    "rgb(255,0,0)",
    "hsl(120,100%,25%)",
    "darkolivegreen",
    (255, 0, 0),
    (255, 0, 0, 255),
    (10, 20, 30, 128),
    (10, 20, 30, 0),
    [10, 20, 30],
    np.array([10, 20, 30]),
    np.array([10, 20, 30, 40], np.uint8),
    (255.0, 0, 0),
    (True, 0, 0),
    (np.uint8(5), np.int64(6), 7),
    (decimal.Decimal(9), 1, 2),
    (5 + 0j, 1, 2),
    (np.True_, 0, 0),
    (np.float32(2.0), 3, 4),
    (np.uint8(200), np.uint16(255), 0),
    (7, True, False),
    (fractions.Fraction(10, 2), np.float16(3.0), np.int8(1)),
    (255, 255.0, np.float64(255)),
    0,
    1,
    0xF0,
    0xF800,
    0x00FF00FF,
]


@pytest.mark.parametrize("name", ["XRGB8888", "RGB565", "RGB888", "ARGB1555", "C8", "R4", "C1"])
@pytest.mark.parametrize("color", FORMS, ids=repr)
def test_every_colour_form_gives_the_reference_ink(name: str, color: Any) -> None:
    """Names, CSS strings, tuples, lists, arrays, NumPy and Decimal channels and native ints
    give the ink the NumPy reference gives, or the same error."""
    fmt = FORMATS[name]
    try:
        expected = reference_ink(color, fmt)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)) as got:
            resolve(color, fmt)
        assert str(got.value) == str(e)
    else:
        assert resolve(color, fmt) == expected


class _Unknown:
    """An object no colour parser knows, with the same test id in every xdist worker."""

    def __repr__(self) -> str:
        return "<an object>"


BAD: list[Any] = [
    (256, 0, 0),
    (-1, 0, 0),
    (0, -256, 0),
    (0, 0, 512),
    (0, 0, -257),
    (1 << 70, 0, 0),
    (1.5, 0, 0),
    (float("nan"), 0, 0),
    ("1", 2, 3),
    (None, 0, 0),
    (np.float32(2.5), 0, 0),
    (decimal.Decimal("2.5"), 0, 0),
    (fractions.Fraction(5, 2), 0, 0),
    (np.float16(0.5), 0, 0),
    (0, float("inf"), 0),
    (0, 0, 255.5),
    (0, 0, -0.5),
    (1j, 0, 0),
    (np.int64(-1), 0, 0),
    (np.uint16(256), 0, 0),
    (1, 2),
    (1, 2, 3, 4, 5),
    [1, 2],
    b"abc",
    "nosuch",
    "rgb(300,0,0)",
    "",
    _Unknown(),
    1.0,
    -1,
    1 << 40,
    np.array([1, 2]),
    {1, 2, 3},
]


@pytest.mark.parametrize("name", ["XRGB8888", "RGB565", "C8", "R8"])
@pytest.mark.parametrize("color", BAD, ids=repr)
def test_bad_colours_raise_what_they_raised_before(name: str, color: Any) -> None:
    """Every primitive's fast path refuses a bad colour with the reference's error type and
    message, and draws nothing."""
    fmt = FORMATS[name]
    with pytest.raises((TypeError, ValueError)) as ref:
        reference_ink(color, fmt)
    s = fbgfx.Surface(8, 8, fmt)
    calls = [
        lambda: s.point((1, 1), fill=color),
        lambda: s.line((0, 0, 5, 5), fill=color),
        lambda: s.rectangle((0, 0, 5, 5), fill=color),
        lambda: s.ellipse((0, 0, 5, 5), fill=color),
        lambda: s.circle((4, 4), 2, fill=color),
        lambda: s.polygon([(0, 0), (5, 0), (5, 5)], fill=color),
        lambda: s.text((0, 0), "Hi", fill=color),
    ]
    for call in calls:
        with pytest.raises(ref.type) as got:
            call()
        assert str(got.value) == str(ref.value)
    assert not s.array.any()


@pytest.mark.parametrize("name", NAMES)
def test_fresh_colours_draw_the_reference_values(name: str) -> None:
    """Lines, rectangles, points, ellipses, circles and polygons with a colour each (packed
    in C from the channels) write PixelFormat.pack_color's value (the golden tests cover
    the shapes)."""
    fmt = FORMATS[name]
    s = fbgfx.Surface(16, 8, fmt)
    draws = [
        lambda c: s.point((7, 4), fill=c),
        lambda c: s.line((0, 4, 15, 4), fill=c),
        lambda c: s.rectangle((0, 0, 15, 7), fill=c),
        lambda c: s.ellipse((0, 0, 15, 7), fill=c),
        lambda c: s.circle((7.5, 4), 4, fill=c),
        lambda c: s.polygon([(0, 0), (15, 0), (15, 7), (0, 7)], fill=c),
    ]
    for i, c in enumerate(SWEEP):
        s.clear((0, 0, 0))
        draws[i % len(draws)](c)
        got = s.array[4, 7]
        value = int(got[0]) | int(got[1]) << 8 | int(got[2]) << 16 if fmt.bpp == 24 else int(got)
        assert value == fmt.pack_color(c), (c, i)


def test_fresh_colour_calls_leave_no_garbage() -> None:
    """1000 line and rectangle calls with a colour each, after a warm-up, grow memory by
    less than 64 KB (no per-call arrays; the colour caches are bounded)."""
    s = fbgfx.Surface(320, 240, "RGB565")
    colours = [tuple(int(v) for v in c) for c in _RNG.integers(0, 256, (3000, 3))]

    def work(cs: list[tuple[int, ...]]) -> None:
        for i, c in enumerate(cs):
            s.line((i % 300, 0, 300 - i % 300, 239), fill=c)
            s.rectangle((i % 200, i % 100, i % 200 + 20, i % 100 + 30), fill=c)

    work(colours[:1000])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work(colours[1000:2000])
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown


def test_repeated_named_colours_still_come_from_the_cache() -> None:
    """Names and RGBA colours resolve once per surface and are then drawn as cached."""
    s = fbgfx.Surface(8, 8, "RGB565")
    s.line((0, 0, 7, 0), fill="red")
    s.line((0, 1, 7, 1), fill=(0, 255, 0, 255))
    assert s._opaque("red") == FORMATS["RGB565"].pack_color((255, 0, 0))
    assert s._opaque((0, 255, 0, 255)) == FORMATS["RGB565"].pack_color((0, 255, 0))
    assert int(s.array[0, 0]) == 0xF800 and int(s.array[1, 0]) == 0x07E0


@pytest.mark.parametrize("name", ["XRGB8888", "RGB565", "BGR888", "C8", "R4"])
def test_every_opaque_colour_form_draws_the_reference_value(name: str) -> None:
    """Each accepted opaque colour form, drawn through the one-call paths, writes the
    reference's packed value (NumPy channels, bools and Decimals included)."""
    fmt = FORMATS[name]
    s = fbgfx.Surface(4, 4, fmt)
    for color in FORMS:
        try:
            ink = reference_ink(color, fmt)
        except (TypeError, ValueError):
            continue
        if ink.mode != OPAQUE:
            continue
        for draw in (
            lambda: s.point((1, 1), fill=color),
            lambda: s.line((1, 1, 1, 1), fill=color),
            lambda: s.rectangle((1, 1, 1, 1), fill=color),
        ):
            s.clear(0)
            draw()
            got = s.array[1, 1]
            value = int(got[0]) | int(got[1]) << 8 | int(got[2]) << 16 if fmt.bpp == 24 else int(got)
            assert value == ink.value, (color, value)
