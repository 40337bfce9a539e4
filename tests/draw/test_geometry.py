"""fbgfx._draw.geometry: Surface's coordinate forms, argument checks and segment clipping."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from fbgfx._draw.geometry import BIG, MAX_SIDE, box, check_angle, check_size, check_width, clip_segment, flat


@pytest.mark.parametrize(
    "xy",
    [
        [1, 2, 3, 4],
        [(1, 2), (3, 4)],
        [[1, 2], [3, 4]],
        ((1.0, 2.0), np.array([3, 4])),
        [np.int64(1), 2, 3, np.float32(4)],
    ],
)
def test_flat_takes_both_pillow_forms(xy: Any) -> None:
    """Flat lists, pairs and mixed number types all give [x0, y0, x1, y1]."""
    assert [float(v) for v in flat(xy)] == [1.0, 2.0, 3.0, 4.0]


def test_flat_of_an_array_is_contiguous_float64() -> None:
    """An (n, 2) array comes back as one C-contiguous float64 run (C reads it in place)."""
    a = flat(np.arange(8, dtype=np.int32).reshape(4, 2)[::-1])
    assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous
    assert a.tolist() == [6, 7, 4, 5, 2, 3, 0, 1]


@pytest.mark.parametrize(
    "xy, error",
    [
        ([1, 2, 3], ValueError),
        ([(1, 2, 3)], ValueError),
        (np.zeros(3), ValueError),
        ([None, 1], TypeError),
        (5, TypeError),
    ],
)
def test_flat_refuses_odd_or_malformed_coordinates(xy: Any, error: type) -> None:
    """Odd counts and points that are not pairs are ValueErrors; non-numbers TypeErrors."""
    with pytest.raises(error, match="xy"):
        flat(xy)


def test_box_takes_four_numbers_or_two_points() -> None:
    """box() gives (x0, y0, x1, y1) from four numbers or two points; three points are refused."""
    assert list(box((1, 2, 3, 4))) == [1, 2, 3, 4]
    assert [float(v) for v in box([(1, 2), (3, 4)])] == [1, 2, 3, 4]
    with pytest.raises(TypeError, match="exactly 2"):
        box([(1, 2), (3, 4), (5, 6)], "rect")


@pytest.mark.parametrize(
    "width, want", [(3, 3), (3.0, 3), (np.int16(2), 2), (0, 0), (-5, -1), (10**30, BIG), (1e300, BIG)]
)
def test_check_width_takes_whole_numbers_and_clamps(width: Any, want: int) -> None:
    """Whole widths pass, negatives become -1, huge ones are clamped (no C int overflow)."""
    assert check_width(width) == want


@pytest.mark.parametrize("width", [True, 2.5, math.nan, math.inf, "3", None])
def test_check_width_refuses_the_rest(width: Any) -> None:
    """Bools, fractions, NaN, infinity and non-numbers are ValueErrors."""
    with pytest.raises(ValueError, match="width"):
        check_width(width)


def test_check_angle() -> None:
    """Angles are finite floats; NaN and infinity are ValueErrors."""
    assert check_angle(45) == 45.0
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="finite"):
            check_angle(bad)


def test_check_size() -> None:
    """Sizes are ints 0..MAX_SIDE: floats and bools TypeError, negative or longer ValueError."""
    assert check_size(np.int64(3), 0) == (3, 0)
    for bad, error in (
        ((2.0, 3), TypeError),
        ((True, 3), TypeError),
        ((-1, 3), ValueError),
        ((3, MAX_SIDE + 1), ValueError),
    ):
        with pytest.raises(error):
            check_size(*bad)


def test_clip_segment() -> None:
    """Liang-Barsky: inside kept, crossing cut at the edges, outside None, points handled."""
    assert clip_segment(1, 1, 5, 5, 0, 0, 10, 10) == (1, 1, 5, 5)
    assert clip_segment(-10, 5, 20, 5, 0, 0, 10, 10) == (0, 5, 10, 5)
    assert clip_segment(-5, -5, -1, -1, 0, 0, 10, 10) is None
    assert clip_segment(3, 3, 3, 3, 0, 0, 10, 10) == (3, 3, 3, 3)
    assert clip_segment(30, 3, 30, 3, 0, 0, 10, 10) is None
