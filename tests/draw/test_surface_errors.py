"""Bad input to Surface: the documented exception, the same answer every time, nothing drawn."""

from __future__ import annotations

import resource
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from PIL import Image

from fbgfx import Surface


def _fresh(fmt: str = "RGB565") -> Surface:
    return Surface(32, 24, fmt)


@pytest.mark.parametrize("color", ["rgb(300,0,0)", "rgba(0,0,0,300)", "hsl(0,500%,50%)", "hsv(0,200%,100%)"])
def test_css_colour_out_of_range_is_value_error(color: str) -> None:
    """A CSS colour Pillow parses to channels outside 0..255 is a ValueError, nothing drawn."""
    s = _fresh()
    with pytest.raises(ValueError, match="0..255"):
        s.rectangle((0, 0, 5, 5), fill=color)
    with pytest.raises(ValueError, match="0..255"):
        s.point((1, 1), fill=color)
    assert not s.array.any()


@pytest.mark.parametrize("call", ["text", "textbbox", "textlength"])
def test_text_that_is_not_a_string_is_type_error(call: str) -> None:
    """text(None), textbbox(None), textlength(None) raise TypeError."""
    s = _fresh()
    with pytest.raises(TypeError, match="text must be a str"):
        if call == "textlength":
            s.textlength(None)  # type: ignore[arg-type]
        else:
            getattr(s, call)((0, 0), None)
    assert not s.array.any()


@pytest.mark.parametrize("size", [(2**28 + 1, 1), (1, 2**28 + 1), (10**12, 10**12)])
def test_huge_surface_is_value_error(size: Any) -> None:
    """A surface wider or taller than the rasterisers address is a ValueError, not overflow."""
    with pytest.raises(ValueError, match="at most"):
        Surface(size[0], size[1], "C8")


@pytest.mark.parametrize("width", [1e30, 1e308, 10**30, np.float32(1e30)])
def test_huge_line_width_is_clamped_not_overflow(width: Any) -> None:
    """A huge line width covers the surface, like a width of 2**30, instead of overflowing."""
    s, ref = _fresh(), _fresh()
    s.line((0, 10, 31, 10), fill="red", width=width)
    ref.line((0, 10, 31, 10), fill="red", width=2**30)
    np.testing.assert_array_equal(s.array, ref.array)
    s.rectangle((2, 2, 20, 20), outline="blue", width=width)
    ref.rectangle((2, 2, 20, 20), outline="blue", width=2**30)
    np.testing.assert_array_equal(s.array, ref.array)


@pytest.mark.parametrize("width", [float("nan"), float("inf"), 2.5, "3", True])
def test_bad_line_width_is_value_error(width: Any) -> None:
    """NaN, infinite, fractional, text or bool widths are ValueErrors."""
    with pytest.raises(ValueError, match="width"):
        _fresh().line((0, 0, 5, 5), fill="red", width=width)


@pytest.mark.parametrize(
    "palette",
    [
        [1, 2, 3],  # 1-D
        np.zeros((4, 2)),  # two channels
        np.zeros((0, 3)),  # empty
        np.zeros((257, 3)),  # more than C8 indexes
        np.full((4, 3), np.nan),
        [[300, 0, 0]],
        [[-1, 0, 0]],
        [[0.5, 0, 0]],
        [[np.inf, 0, 0]],
        [[0, 0, 0], [1, 2]],  # ragged
        np.array([["a", "b", "c"]]),
    ],
)
def test_bad_palette_is_value_error(palette: Any) -> None:
    """Surface(palette=...) refuses wrong shapes, NaN, fractions and values outside 0..255."""
    with pytest.raises(ValueError, match="palette"):
        Surface(4, 4, "C8", palette=palette)


def test_palette_longer_than_format_indexes_is_value_error() -> None:
    """A 17-entry palette on a 4-bit C4 surface is refused: index 16 does not fit."""
    with pytest.raises(ValueError, match="palette"):
        Surface(4, 4, "C4", palette=np.zeros((17, 3), np.uint8))
    assert Surface(4, 4, "C4", palette=np.zeros((16, 3), np.uint8)).palette.shape == (16, 3)


def test_whole_float_palette_is_accepted() -> None:
    """A float palette of whole numbers 0..255 works like the same ints."""
    a = Surface(4, 4, "C8", palette=[[0.0, 0.0, 0.0], [255.0, 0.0, 0.0]])
    b = Surface(4, 4, "C8", palette=[[0, 0, 0], [255, 0, 0]])
    np.testing.assert_array_equal(a.palette, b.palette)


@pytest.mark.parametrize("bad, good", [(True, 1), (False, 0), (1.0, 1), (np.float64(2.0), 2)])
def test_colour_cache_does_not_change_what_is_accepted(bad: Any, good: int) -> None:
    """A colour refused on a fresh surface is refused after an equal colour was drawn."""
    fresh = _fresh()
    with pytest.raises(TypeError):
        fresh.rectangle((0, 0, 3, 3), fill=bad)
    used = _fresh()
    for draw in ("rectangle", "ellipse", "point", "line"):
        xy = (1, 1) if draw == "point" else (0, 0, 3, 3)
        getattr(used, draw)(xy, fill=good)
        before = used.array.copy()
        with pytest.raises(TypeError):
            getattr(used, draw)(xy, fill=bad)
        np.testing.assert_array_equal(used.array, before)


@pytest.mark.parametrize("channel", [True, np.True_, 1.0, Decimal(1), np.uint8(1)])
def test_colour_tuple_channels_equal_to_whole_numbers(channel: Any) -> None:
    """(channel, 0, 0) draws as (1, 0, 0) for every number equal to 1, cached or not."""
    ref = _fresh("XRGB8888")
    ref.point((1, 1), fill=(1, 0, 0))
    fresh = _fresh("XRGB8888")
    fresh.point((1, 1), fill=(channel, 0, 0))
    np.testing.assert_array_equal(fresh.array, ref.array)
    ref.point((2, 2), fill=(channel, 0, 0))  # now after (1, 0, 0) is cached
    assert ref.array[2, 2] == ref.array[1, 1]


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "RGB888", "C8"])
def test_batch_colours_accept_mixed_colour_forms(fmt: str) -> None:
    """lines/rectangles/points(colors=[...]) take names, tuples and native ints mixed."""
    n = Surface(4, 4, fmt).format
    colors = ["red", (0, 255, 0), n.pack_color((0, 0, 255, 255)), "#ffff00", [0, 255, 255]]
    boxes = np.array([[2 + 5 * i, 2, 4 + 5 * i, 8] for i in range(len(colors))], float)
    s, ref = Surface(32, 24, fmt), Surface(32, 24, fmt)
    s.rectangles(boxes, colors=colors)
    s.lines(boxes + [0, 10, 0, 10], colors=colors)
    s.points(boxes[:, :2] + [0, 20], colors=colors)
    for box, color in zip(boxes, colors):
        ref.rectangle(tuple(box), fill=color)
        ref.line(tuple(box + [0, 10, 0, 10]), fill=color)
        ref.point(tuple(box[:2] + [0, 20]), fill=color)
    np.testing.assert_array_equal(s.array, ref.array)


@pytest.mark.parametrize("colors", [["red"], ["red", "blue", "green", "white"], np.array([1, 2]), np.zeros((4, 3))])
def test_batch_colours_of_wrong_count_are_value_error(colors: Any) -> None:
    """A colour list shorter or longer than the items is a ValueError (C reads exactly n)."""
    s = _fresh()
    with pytest.raises(ValueError, match="expected 3 colours"):
        s.lines(np.zeros((3, 4)), colors=colors)
    assert not s.array.any()


@pytest.mark.parametrize("colors", [["red", True, "blue"], [(1.5, 0, 0)] * 3, np.array([[300, 0, 0]] * 3)])
def test_batch_colours_follow_the_single_colour_rules(colors: Any) -> None:
    """Every batch colour is checked as a single colour is: bool, fractions, 300 refused."""
    with pytest.raises((TypeError, ValueError)):
        _fresh().lines(np.zeros((3, 4)), colors=colors)


@pytest.mark.parametrize(
    "source",
    [
        Image.new("RGB", (0, 0)),
        Image.new("RGBA", (0, 5)),
        Image.new("P", (5, 0)),
        np.zeros((0, 5, 3), np.uint8),
        np.zeros((5, 0), np.uint8),
        np.zeros((0, 4), np.uint16),  # native RGB565
    ],
)
@pytest.mark.parametrize("kw", [{}, {"size": (4, 4)}, {"rotate": 90}])
def test_blit_of_empty_image_is_value_error(source: Any, kw: Any) -> None:
    """blit() of an image with no pixels raises ValueError (not ZeroDivisionError)."""
    s = _fresh()
    with pytest.raises(ValueError, match="empty"):
        s.blit(source, **kw)
    assert not s.array.any()


def test_blit_to_huge_size_scales_only_the_visible_part() -> None:
    """blit(size=(20000, 20000)) onto a small surface draws the right pixels in little memory."""
    src = np.zeros((10, 10, 3), np.uint8)
    src[:, 1::2] = (255, 0, 0)  # odd columns red
    src[1::2, :, 2] = 255  # odd rows with blue
    s = Surface(64, 48, "XRGB8888")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # each source pixel becomes a 2000x2000 block; the surface sees the corner of four
    s.blit(src, (-1990, -1980), size=(20000, 20000), resample=Image.Resampling.NEAREST)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100
    rgb = np.asarray(s.to_image())
    for (y, x), want in {
        (0, 0): (0, 0, 0),
        (0, 10): (255, 0, 0),
        (20, 0): (0, 0, 255),
        (47, 63): (255, 0, 255),
    }.items():
        assert tuple(rgb[y, x]) == want, (y, x)
    assert (rgb[:20, :10] == 0).all() and (rgb[20:, 10:] == (255, 0, 255)).all()
    s.blit(src, (-5, -7), size=(10**12, 10**12))  # any size: only the visible part is scaled
    assert (np.asarray(s.to_image()) == 0).all()


def test_blit_scaled_to_moderate_size_matches_pillow() -> None:
    """A scaled image up to a few surfaces in size is Pillow's resize of the whole image."""
    rng = np.random.default_rng(4)
    src = rng.integers(0, 256, (13, 17, 3), np.uint8)
    s = Surface(64, 48, "XRGB8888")
    s.blit(src, (-20, -9), size=(101, 77))
    want = np.asarray(Image.fromarray(src).resize((101, 77), Image.Resampling.BILINEAR))[9:57, 20:84]
    np.testing.assert_array_equal(np.asarray(s.to_image()), want)


@pytest.mark.parametrize("size", [(float("inf"), 5), (float("nan"), 5)])
def test_blit_to_non_finite_size_is_value_error(size: Any) -> None:
    """A non-finite blit size is a ValueError."""
    with pytest.raises(ValueError, match="size"):
        _fresh().blit(np.zeros((2, 2, 3), np.uint8), size=size)


def test_surface_array_cannot_be_replaced() -> None:
    """Surface.array is read-only: the C drawing target keeps pointing at live pixels."""
    s = _fresh()
    with pytest.raises(AttributeError):
        s.array = np.zeros((24, 32), np.uint16)  # type: ignore[misc]
    s.rectangle((0, 0, 3, 3), fill="red")
    assert s.array[0, 0] == 0xF800


@pytest.mark.parametrize("fmt, dtype", [("RGB565", np.uint16), ("XRGB8888", np.uint32)])
def test_wrap_refuses_arrays_not_aligned_to_the_pixel_size(fmt: str, dtype: Any) -> None:
    """Surface.wrap of pixels at an odd address, or rows an odd distance apart, is a ValueError."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(size * 8 * 8, np.uint8)
    shifted = raw[1 : 1 + size * 8 * 6].view(dtype).reshape(6, 8)
    with pytest.raises(ValueError, match="aligned"):
        Surface.wrap(shifted, fmt)
    with pytest.raises(ValueError, match="aligned"):
        Surface.wrap(np.ndarray((6, 8), dtype, raw, 0, (size * 8 + 1, size)), fmt)
    s = Surface.wrap(raw[: size * 48].view(dtype).reshape(6, 8), fmt)  # aligned: fine
    s.rectangle((0, 0, 7, 5), fill="white")
    assert (s.array == s.format.pack_color((255, 255, 255, 255))).all()


def test_wrap_of_aligned_views_and_subsurfaces_still_works() -> None:
    """Row-strided views, one-row arrays and 24 bpp byte arrays wrap as before."""
    base = np.zeros((10, 12), np.uint32)
    s = Surface.wrap(base[2:8, 3:9], "XRGB8888")
    s.clear("red")
    assert (base[2:8, 3:9] == 0xFF0000).all() and base.sum() == 36 * 0xFF0000
    Surface.wrap(np.zeros((1, 5), np.uint16), "RGB565").clear("white")
    Surface.wrap(np.zeros((3, 5, 3), np.uint8)[:, 1:], "RGB888").clear("white")
    assert s.subsurface((1, 1, 4, 4)).array.shape == (3, 3)


@pytest.mark.parametrize(
    "method, args, kw",
    [
        ("polygon", ([(0, 0), (float("nan"), 1), (3, 3)],), {"fill": 1}),
        ("line", ((0, 0, float("inf"), 1),), {"fill": 1, "width": 3}),
        ("lines", (np.array([[0, 0, np.nan, 1]]),), {"fill": (1, 2, 3, 100)}),
        ("rectangles", (np.array([[0, 0, np.inf, 1]]),), {"fill": 1}),
        ("ellipse", ((0, 0, float("nan"), 1),), {"fill": 1}),
        ("points", (np.array([[np.nan, 1]]),), {}),
    ],
)
def test_rasteriser_errors_name_the_method(method: str, args: Any, kw: Any) -> None:
    """Non-finite coordinates raise ValueError naming the Surface method, not a C function."""
    with pytest.raises(ValueError, match=rf"^{method}: coordinates must be finite") as info:
        getattr(_fresh(), method)(*args, **kw)
    assert "draw_" not in str(info.value)
