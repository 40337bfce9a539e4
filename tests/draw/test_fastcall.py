"""The one-call fast paths of native/fastcall.c draw exactly what the general path draws,
and leave to it every argument they do not read exactly."""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from fbgfx import Surface
from fbgfx._ffi import fast_line, fast_rect, fast_smooth_circle, fast_smooth_line, fast_smooth_polygon

COLOURS: list[Any] = [
    (10, 200, 30),
    (0, 0, 0),
    (255, 255, 255),
    "red",
    "#123456",
    (1, 2, 3, 255),
    (np.uint8(7), 8, 9),
    (True, 0, 255),
    (3.0, 4, 5),
    0x1234,
    None,
]
BOXES: list[Any] = [
    (3, 4, 40, 30),
    [3, 4, 40, 30],
    (3.5, 4.4, 39.6, 30.2),
    (40, 30, 3, 4),
    (-10, -20, 500, 400),
    (np.int64(5), 6, 7, 8),
    (Fraction(7, 2), 4, 40, 30),
    (1 << 70, 0, 3, 4),
]


def _both(fmt: str, draw: Any) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """Pixels and outcome of ``draw(surface)`` on a quiet surface (fast paths) and on one
    with an on_draw listener (the general path)."""
    out = []
    for listen in (False, True):
        s = Surface(64, 48, fmt)
        if listen:
            s.on_draw = lambda *box: None
        try:
            draw(s)
            err: Any = None
        except (ValueError, TypeError, OverflowError) as e:
            err = type(e)
        out.append((s.array.copy(), err))
    return out[0][0], out[1][0], out[0][1], out[1][1]


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "C8"])
@pytest.mark.parametrize("method", ["line", "rectangle", "ellipse"])
def test_fast_path_draws_as_the_general_path(fmt: str, method: str) -> None:
    """Every colour and box form gives the same pixels (or the same error) both ways."""
    drawn = 0
    for colour in COLOURS:
        for box in BOXES:
            if fmt == "C8" and isinstance(colour, int) and colour > 255:
                continue
            fast, general, e1, e2 = _both(fmt, lambda s: getattr(s, method)(box, fill=colour))
            assert e1 == e2, (method, box, colour)
            assert np.array_equal(fast, general), (method, box, colour)
            drawn += bool(fast.any())
    assert drawn > len(COLOURS) * 3  # the comparisons were not all of blank surfaces


@pytest.mark.parametrize("colour", [(256, 0, 0), (-1, 0, 0), (1 << 80, 0, 0), (0, 0), (0, 0, 0, 0, 0), "nocolour"])
def test_bad_colours_are_refused_as_before(colour: Any) -> None:
    """A colour the fast path cannot draw reaches the general path's ValueError."""
    s = Surface(16, 16, "RGB565")
    for draw in (s.line, s.rectangle, s.ellipse):
        with pytest.raises(ValueError):
            draw((1, 1, 8, 8), fill=colour)
    assert not s.array.any()


def test_fast_calls_miss_without_drawing() -> None:
    """The fast functions return a negative number and draw nothing for what they do not read."""
    s = Surface(16, 16, "XRGB8888")
    for xy, fill in (((1, 1, 5), (1, 2, 3)), ((1, 1, 5, 5), [1, 2, 3]), (iter((1, 1, 5, 5)), (1, 2, 3))):
        assert fast_line(s._ta, xy, fill, s._fast) < 0
        assert fast_rect(s._ta, xy, fill, s._fast) < 0
    assert not s.array.any()
    assert fast_rect(s._ta, (1, 1, 5, 5), (1, 2, 3), s._fast) == 0
    assert s.array[3, 3] == 0x010203


def test_big_rectangles_from_threads() -> None:
    """Large fills (drawn without the GIL) from several threads, each on its own surface."""
    surfaces = [Surface(300, 200, "RGB565") for _ in range(4)]

    def work(i: int) -> None:
        for k in range(20):
            surfaces[i].rectangle((0, 0, 299, 199), fill=(i * 40, k, 7))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, s in enumerate(surfaces):
        assert (s.to_image().getpixel((150, 100))[0] >> 3) == (i * 40) >> 3


SMOOTH_CALLS: list[tuple[str, Any, dict[str, Any]]] = [
    ("line", (3, 4, 40, 30), {"width": 2.5}),
    ("line", [3.25, 4, 40, 30.5], {"width": 1}),
    ("line", ((3, 4), (40, 30)), {"width": 3}),
    ("line", (3, 4, 40, 30), {"width": 0}),
    ("line", (3, 4, 40, 30), {"width": True}),
    ("line", (3, 4, 40, 30), {"width": -1}),
    ("line", (3, 4, 40, 30), {"width": float("nan")}),
    ("line", (3, 4, float("inf"), 30), {"width": 2}),
    ("line", (-10, -20, 500, 400), {"width": 1.5}),
    ("line", (3, 4, 40, 30, 50, 5), {"width": 2}),
    ("line", (np.int64(5), 6, 7, 8), {"width": 2}),
    ("circle", (20, 20), {"radius": 12.5}),
    ("circle", [20.5, 19], {"radius": 0}),
    ("circle", (20, 20, 5), {"radius": 3}),
    ("circle", (20, 20), {"radius": -1}),
    ("circle", (20, 20), {"radius": 5, "width": -1}),
    ("circle", (20, 20), {"radius": 5, "outline": (1, 2, 3)}),
    ("circle", (1 << 70, 20), {"radius": 5}),
    ("polygon", [(3, 4), (40, 8), (20, 40)], {}),
    ("polygon", [3, 4, 40, 8.5, 20, 40, 5, 30], {}),
    ("polygon", [(3, 4), [40, 8], 20, 40], {}),
    ("polygon", [(3, 4), (40, 8)], {}),
    ("polygon", [(3, 4)], {}),
    ("polygon", [(3, 4), (40, 8), (20,)], {}),
    ("polygon", [(3, 4), (40, 8), (20, float("nan"))], {}),
    ("polygon", [(3, 4), (40, 8), (20, 40)], {"width": "2"}),
    ("polygon", [(3, 4), (40, 8), (20, 40)], {"outline": (9, 9, 9), "width": 2}),
    ("polygon", [(x % 50, (x * 7) % 40) for x in range(300)], {}),
    ("polygon", np.array([(3, 4), (40, 8), (20, 40)]), {}),
]


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "ARGB8888", "RGB888", "BGR565", "R8", "C8"])
def test_smooth_fast_paths_draw_as_the_general_path(fmt: str) -> None:
    """antialias=True: every shape form, width and colour gives the same pixels (or the
    same error) on a quiet surface (native/fastcall.c) as on a listened-to one."""
    drawn = 0
    for colour in COLOURS:
        for method, xy, opts in SMOOTH_CALLS:
            if fmt == "C8" and isinstance(colour, int) and colour > 255:
                continue
            fast, general, e1, e2 = _both(fmt, lambda s: getattr(s, method)(xy, fill=colour, antialias=True, **opts))
            assert e1 == e2, (method, xy, opts, colour)
            assert np.array_equal(fast, general), (method, xy, opts, colour)
            drawn += bool(fast.any())
    assert drawn > len(COLOURS) * 5


def test_smooth_fast_calls_miss_without_drawing() -> None:
    """The fast_smooth_* functions return a negative number and draw nothing for what
    they do not read, and draw an (r, g, b) tuple's shape."""
    s = Surface(16, 16, "XRGB8888")
    for xy, fill in (((1, 1, 5), (1, 2, 3)), ((1, 1, 5, 5), [1, 2, 3]), ((1, 1, 5, 5), "red")):
        assert fast_smooth_line(s._ta, s._fa, xy, fill, 2) < 0
        assert fast_smooth_polygon(s._ta, s._fa, xy, fill, 0) < 0
        assert fast_smooth_circle(s._ta, s._fa, xy, fill, 3, 0) < 0
    assert fast_smooth_circle(s._ta, 0, (5, 5), (1, 2, 3), 3, 0) < 0  # no format: a mask's path
    assert not s.array.any()
    assert fast_smooth_circle(s._ta, s._fa, (5, 5), (1, 2, 3), 3, 0) == 0
    assert s.array[5, 5] == 0x010203


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "R8", "C8"])
def test_smooth_fast_paths_take_colour_names_seen_before(fmt: str) -> None:
    """A colour name the surface has drawn with goes the fast way the next time (as its
    (r, g, b)), with the general path's pixels; colours with alpha do not."""

    def draw(s: Surface, colour: Any) -> None:
        for _ in range(2):
            s.line((3, 4, 40, 30), fill=colour, width=2.5, antialias=True)
            s.circle((30, 20), 9.5, fill=colour, antialias=True)
            s.polygon([(3, 40), (50, 8), (60, 44)], fill=colour, antialias=True)

    for colour in ("red", "#123456", "white", "#12345680"):
        fast, general, e1, e2 = _both(fmt, lambda s: draw(s, colour))
        assert e1 is None and e2 is None
        assert np.array_equal(fast, general), (fmt, colour)
        assert fast.any()
    s = Surface(64, 48, fmt)
    s.line((1, 1, 40, 30), fill="red", width=2, antialias=True)
    assert s._smooth_named(fast_smooth_line, (1, 1, 40, 30), "red", 2) is (fmt != "C8")
    s.line((1, 1, 40, 30), fill="#ff000080", antialias=True)
    assert not s._smooth_named(fast_smooth_line, (1, 1, 40, 30), "#ff000080", 1)
