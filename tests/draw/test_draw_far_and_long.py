"""Drawing at the edges, round three: line ends far away are cut to what shows, not
clamped (1-pixel lines keep Pillow's pixels across Pillow's whole int range, smooth lines
their slope); smooth polylines cost what their points cost and stop on Ctrl-C; text
and non-finite numbers get one error line naming the call."""

from __future__ import annotations

import math
import signal
import time
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import pytest
from PIL import Image, ImageDraw

import fbgfx
from fbgfx._draw import smooth as _smooth

W, H = 64, 48


def pillow_steps(w: int, h: int, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """Pillow's 1-pixel line on a w x h picture, computed as its walk defines it: along
    the major axis, step i lands floor((2*minor*i + major) / (2*major)) along the minor
    one; the end point too. Exact integers: no walk over the steps outside the picture."""
    out = np.zeros((h, w), bool)
    dx, dy = x1 - x0, y1 - y0
    xmajor = abs(dx) > abs(dy)
    major, minor = (abs(dx), abs(dy)) if xmajor else (abs(dy), abs(dx))
    m0, n0 = (x0, y0) if xmajor else (y0, x0)
    ms = 1 if (dx if xmajor else dy) >= 0 else -1
    ns = 1 if (dy if xmajor else dx) >= 0 else -1
    for m in range(w if xmajor else h):
        i = (m - m0) * ms
        if 0 <= i < major:
            n = n0 + ns * ((2 * minor * i + major) // (2 * major))
            x, y = (m, n) if xmajor else (n, m)
            if 0 <= x < w and 0 <= y < h:
                out[y, x] = True
    if 0 <= x1 < w and 0 <= y1 < h:
        out[y1, x1] = True
    return out


def drawn(s: fbgfx.Surface) -> np.ndarray:
    return (s.array != 0).reshape(s.height, s.width, -1).any(-1)


def test_the_walk_formula_is_pillows() -> None:
    """The reference walk equals Pillow's pixels for lines through the picture."""
    rng = np.random.default_rng(34)
    for _ in range(200):
        x0, y0, x1, y1 = (int(v) for v in rng.integers(-300, 300, 4))
        im = Image.new("L", (W, H))
        ImageDraw.Draw(im).line((x0, y0, x1, y1), fill=255)
        assert (pillow_steps(W, H, x0, y0, x1, y1) == (np.asarray(im) != 0)).all(), (x0, y0, x1, y1)


def test_a_line_from_beyond_2_28_equals_pillow() -> None:
    """A line from 3e8 pixels away (each end used to be clamped to 2**28 on its own,
    which bent it) draws Pillow's very pixels."""
    xy = (3.0e8 + 0.75, 1.0e8 + 20, 0, 20)
    im = Image.new("L", (W, H))
    ImageDraw.Draw(im).line(xy, fill=255)
    want = np.asarray(im) != 0
    assert want.sum() > W // 2
    s = fbgfx.Surface(W, H, "XRGB8888")
    s.line(xy, fill="white")
    assert (drawn(s) == want).all()


@pytest.mark.parametrize("name", ["XRGB8888", "RGB565", "C8"])
def test_lines_with_ends_up_to_pillows_int_range_walk_as_pillow_does(name: str) -> None:
    """Lines through the picture with ends between 2.7e8 and 2.1e9 away, steep and flat,
    in all directions, on a surface and inside a clip: Pillow's walk, exactly."""
    rng = np.random.default_rng(29)
    for i in range(60):
        far = int(rng.integers(270_000_000, 2_147_483_000))
        cx, cy = (int(v) for v in rng.integers(0, 40, 2))
        a, b = (int(v) for v in rng.integers(-7, 8, 2))
        if a == b == 0:
            a = 1
        q = max(abs(a), abs(b))
        x0, y0 = cx - far * a // q, cy - far * b // q
        x1, y1 = cx + far * a // q + int(rng.integers(-3, 4)), cy + far * b // q
        if i % 3 == 0:  # one end on the picture
            x1, y1 = cx, cy
        xy = (x0, y0, x1, y1)
        want = pillow_steps(W, H, *xy)
        s = fbgfx.Surface(W, H, name)
        s.line(xy, fill=(255, 255, 254))
        assert (drawn(s) == want).all(), (i, xy)
        c = fbgfx.Surface(W, H, name)
        c.set_clip((5, 4, 50, 40))
        c.line([(x0, y0), (x1, y1)], fill=(255, 255, 254))
        clipped = np.zeros_like(want)
        clipped[4:40, 5:50] = want[4:40, 5:50]
        assert (drawn(c) == clipped).all(), (i, xy)


def test_lines_from_beyond_pillows_range_keep_their_slope() -> None:
    """Ends 1e10 to 1e300 away: the part that shows lies on the straight line between
    them (within a pixel), plain and wide."""
    for far in (1e10, 1e15, 1e300):
        for width in (1, 3):
            s = fbgfx.Surface(W, H, "XRGB8888")
            # y = 10 + x / 4 through the picture (as far as a double holds the 10)
            x0, y0, x1, y1 = -far, 10 - far / 4, far, 10 + far / 4
            s.line((x0, y0, x1, y1), fill="white", width=width)
            ys, xs = np.nonzero(drawn(s))
            slope = (Fraction(y1) - Fraction(y0)) / (Fraction(x1) - Fraction(x0))
            line = np.array([float(Fraction(y0) + (int(x) - Fraction(x0)) * slope) for x in xs])
            assert len(xs) >= W, (far, width)
            assert np.abs(ys - line).max() <= 1 + width / 2, (far, width)


def test_smooth_lines_from_far_away_cover_as_the_part_that_shows() -> None:
    """antialias=True: a line with ends 1e12 away covers exactly what the same line cut
    just outside the picture covers (it used to be clamped to 1e9 end by end)."""
    far = 1e12
    x0, y0, x1, y1 = -far, 7 - far * 0.3, far, 7 + far * 0.3

    def at(x: float) -> tuple[float, float]:
        t = (Fraction(x) - Fraction(x0)) / (Fraction(x1) - Fraction(x0))
        return x, float(Fraction(y0) + t * (Fraction(y1) - Fraction(y0)))

    (ax, ay), (bx, by) = at(-20), at(W + 20)
    for width in (1, 2.5):
        far_s = fbgfx.Surface(W, H, "XRGB8888")
        far_s.line((x0, y0, x1, y1), fill="white", width=width, antialias=True)
        near = fbgfx.Surface(W, H, "XRGB8888")
        near.line((ax, ay, bx, by), fill="white", width=width, antialias=True)
        got = np.asarray(far_s.to_image(), np.int16)
        want = np.asarray(near.to_image(), np.int16)
        assert want.any()
        assert np.abs(got - want).max() <= 1


def _walk(n: int, seed: int = 5) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    return [(float(x), float(y)) for x, y in rng.uniform(0, 400, (n, 2)) * (1, 0.6)]


def _best(fn: Callable[[], Any], runs: int = 3) -> float:
    """The least CPU time of this thread over ``runs`` calls (a busy machine's scheduler
    moves wall time, not this)."""
    best = math.inf
    for _ in range(runs):
        t = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t)
    return best


@pytest.mark.parametrize("shape", ["line", "polygon"])
def test_smooth_polylines_cost_what_their_points_cost(shape: str) -> None:
    """antialias=True with 4,000 and 40,000 points across the picture: ten times the
    points cost about ten times the time, well under 100 (it was quadratic: 40,000 points took
    a thousand times the plain line's time). Least CPU time of three runs each."""
    s = fbgfx.Surface(400, 240, "XRGB8888")
    short, long = _walk(4000), _walk(40_000)
    draw = getattr(s, shape)
    t_short = _best(lambda: draw(short, fill="white", antialias=True))
    t_long = _best(lambda: draw(long, fill="white", antialias=True))
    assert t_long < 30 * t_short, (t_short, t_long)  # quadratic: 100; sanitized builds: about 20


def test_a_long_smooth_line_is_drawn_in_bands_with_the_same_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    """A polyline of many points goes to C in bands of rows (Ctrl-C is seen between
    them); the pixels (the palette path's too) equal those of one call."""
    pts = _walk(6000, seed=9)
    for fmt in ("XRGB8888", "RGB565", "C8"):
        pictures = []
        for band_points in (10**9, 100):
            monkeypatch.setattr(_smooth, "BAND_POINTS", band_points)
            s = fbgfx.Surface(400, 240, fmt)
            s.set_clip((3, 5, 397, 233))
            s.line(pts, fill=(200, 100, 50), width=2.5, antialias=True)
            s.polygon(pts[:4000], fill=(20, 200, 90), antialias=True)
            pictures.append(s.array.copy())
        assert pictures[0].any()
        assert (pictures[0] == pictures[1]).all(), fmt
    call = _smooth.polygon(pts, 0.0)
    assert len(_smooth.bands(call, 0, 240)) == _smooth.BANDS
    assert len(_smooth.bands(_smooth.polygon(pts[:10], 0.0), 0, 240)) == 1


def test_ctrl_c_stops_a_long_smooth_line() -> None:
    """A smooth polyline of 10**6 points stops at Ctrl-C (SIGINT after 50 ms of the
    process's CPU time) before it is finished: the rows of its last band (of 61) are
    still untouched."""
    rng = np.random.default_rng(1)
    pts = rng.uniform(0, 1, (10**6, 2)) * (400, 240)
    s = fbgfx.Surface(400, 240, "XRGB8888")
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # the handler first: a timer that fired before it was set would end the process
        signal.signal(signal.SIGVTALRM, lambda *_: signal.raise_signal(signal.SIGINT))
        with pytest.raises(KeyboardInterrupt):
            # CPU time, not the wall clock: a stall before the drawing starts (a busy
            # machine's) neither interrupts it before it began nor outside this block
            signal.setitimer(signal.ITIMER_VIRTUAL, 0.05)
            s.line(pts, fill="white", width=3, antialias=True)
            time.sleep(5)  # (only when the drawing finished first: the test then fails)
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGINT, old)
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    assert s.array.any()  # the drawing had begun
    assert not s.array[-3:].any()


def _one_line(fn: Callable[[], Any], kind: type[Exception], *words: str) -> None:
    with pytest.raises(kind) as info:
        fn()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("antialias", [False, True])
def test_text_coordinates_are_refused_naming_the_call(antialias: bool) -> None:
    """Strings are not coordinates (float("1") would take them): TypeError naming the call."""
    s = fbgfx.Surface(W, H, "XRGB8888")
    _one_line(lambda: s.line([(0, "1"), (20, 30)], fill="red", antialias=antialias), TypeError, "line", "'1'")
    _one_line(lambda: s.line([0, "1", 20, 30], fill="red", antialias=antialias), TypeError, "line")
    _one_line(lambda: s.polygon([(0, "1"), (20, 30), (5, 5)], fill="red", antialias=antialias), TypeError, "polygon")
    _one_line(lambda: s.lines([[0, "1", 2, 3]], fill="red", antialias=antialias), TypeError, "lines")
    assert not s.array.any()


def test_non_finite_boxes_and_sizes_get_one_line_naming_what() -> None:
    """An infinite or NaN box, radius or rotation: ValueError naming the call (they were
    a bare OverflowError or 'math domain error')."""
    s = fbgfx.Surface(W, H, "XRGB8888")
    inf, nan = math.inf, math.nan
    _one_line(lambda: s.set_clip((0, 0, inf, 5)), ValueError, "set_clip")
    _one_line(lambda: s.set_clip((0, nan, 5, 5)), ValueError, "set_clip")
    _one_line(lambda: s.subsurface((0, 0, inf, 5)), ValueError, "subsurface")
    _one_line(lambda: s.regular_polygon((5, 5, 3), 5, rotation=inf, fill="red"), ValueError, "rotation")
    _one_line(lambda: s.circle((5, 5), inf, fill="red"), ValueError, "circle", "radius")
    _one_line(lambda: s.circle((5, 5), nan, fill="red", antialias=True), ValueError, "circle", "radius")
    _one_line(lambda: s.rounded_rectangle((0, 0, 5, 5), inf, fill="red"), ValueError, "radius")
    _one_line(lambda: s.chord((0, 0, inf, 5), 0, 90, fill="red", antialias=True), ValueError, "chord")
    _one_line(lambda: s.ellipse((0, nan, 9, 5), fill="red", antialias=True), ValueError, "ellipse")
    assert not s.array.any()
