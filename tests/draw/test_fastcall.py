"""The one-call fast paths of native/fastcall.c draw exactly what the general path draws,
and leave to it every argument they do not read exactly."""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from fbgfx import Surface
from fbgfx._ffi import fast_line, fast_rect

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
