"""antialias=True: exact area coverage against a 16x supersampled reference (and Skia),
blending, every pixel format, clipping and guard bands, Screens, errors."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import fbgfx
from fbgfx import Surface, convert

W, H = 120, 90
K = 16  # the reference's supersampling


def coverage(draw: Callable[[Surface], None], fmt: str = "XRGB8888", w: int = W, h: int = H) -> np.ndarray:
    """What ``draw`` covers, white on black, as floats 0..1 (green channel)."""
    s = Surface(w, h, fmt)
    draw(s)
    return np.asarray(s.to_image(), np.float64)[..., 1] / 255


def supersampled(inside: Callable[[np.ndarray, np.ndarray], np.ndarray], w: int = W, h: int = H) -> np.ndarray:
    """The continuous shape sampled at 16 x 16 points evenly inside each pixel and
    box-filtered: each pixel's covered fraction, to 1/256. (``inside(x, y)`` tells
    which sample points the shape holds. Pillow's polygon fill at 16x would do the
    same but fills every sample its edges touch, which grows shapes by half a sample.)"""
    xs = (np.arange(w * K) + 0.5) / K
    ys = (np.arange(h * K) + 0.5) / K
    hits = inside(xs[None, :], ys[:, None])
    return hits.reshape(h, K, w, K).mean(axis=(1, 3))


def in_polygon(pts: list[tuple[float, float]]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Even-odd inside test of a polygon."""

    def inside(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        hit = np.zeros(np.broadcast(x, y).shape, bool)
        for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):
            if y0 == y1:
                continue
            crosses = (y0 <= y) != (y1 <= y)
            xc = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
            hit ^= crosses & (x < xc)
        return hit

    return inside


def in_ellipse(cx: float, cy: float, rx: float, ry: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Inside test of an ellipse."""
    return lambda x, y: ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 < 1


def in_rounded(x0: float, y0: float, x1: float, y1: float, r: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Inside test of a rectangle with corners of radius r."""

    def inside(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        dx = np.maximum(np.maximum(x0 + r - x, x - (x1 - r)), 0)
        dy = np.maximum(np.maximum(y0 + r - y, y - (y1 - r)), 0)
        return (x > x0) & (x < x1) & (y > y0) & (y < y1) & (dx**2 + dy**2 < r**2)

    return inside


def band(x0: float, y0: float, x1: float, y1: float, w: float) -> list[tuple[float, float]]:
    """The rectangle of width w around a segment (a line with butt ends)."""
    n = math.hypot(x1 - x0, y1 - y0)
    nx, ny = -(y1 - y0) / n * w / 2, (x1 - x0) / n * w / 2
    return [(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)]


PTS = [(10.2, 10.7), (100.4, 20.1), (80.9, 80.3), (45.5, 40.5), (30.1, 60.6)]  # concave


def shoelace(pts: list[tuple[float, float]]) -> float:
    """A simple polygon's area."""
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))) / 2


# name: (fbgfx drawing, the continuous shape's inside test, Skia's drawing or None)
SHAPES: dict[str, tuple[Callable[[Surface], None], Callable[[np.ndarray, np.ndarray], np.ndarray], Any]] = {
    "circle r=30.2": (
        lambda s: s.circle((49.8, 40.2), 30.2, fill="white", antialias=True),
        in_ellipse(50.3, 40.7, 30.2, 30.2),
        lambda c, p, skia: c.drawCircle(50.3, 40.7, 30.2, p),
    ),
    "circle r=3.3": (
        lambda s: s.circle((20.25, 20.5), 3.3, fill="white", antialias=True),
        in_ellipse(20.75, 21, 3.3, 3.3),
        lambda c, p, skia: c.drawCircle(20.75, 21, 3.3, p),
    ),
    "ellipse box": (
        lambda s: s.ellipse((10, 12, 100, 61), fill="white", antialias=True),
        in_ellipse(55.5, 37, 45.5, 25),
        lambda c, p, skia: c.drawOval(skia.Rect.MakeLTRB(10, 12, 101, 62), p),
    ),
    "polygon, concave": (
        lambda s: s.polygon([(x - 0.5, y - 0.5) for x, y in PTS], fill="white", antialias=True),
        in_polygon(PTS),
        lambda c, p, skia: c.drawPath(skia.Path.Polygon([skia.Point(x, y) for x, y in PTS], True), p),
    ),
    "line width 1": (
        lambda s: s.line((5.2, 7.1, 110.3, 60.9), fill="white", width=1, antialias=True),
        in_polygon(band(5.7, 7.6, 110.8, 61.4, 1)),
        lambda c, p, skia: c.drawPath(
            skia.Path.Polygon([skia.Point(*q) for q in band(5.7, 7.6, 110.8, 61.4, 1)], True), p
        ),
    ),
    "line width 2.5": (
        lambda s: s.line((5.2, 80.1, 110.3, 10.9), fill="white", width=2.5, antialias=True),
        in_polygon(band(5.7, 80.6, 110.8, 11.4, 2.5)),
        lambda c, p, skia: c.drawPath(
            skia.Path.Polygon([skia.Point(*q) for q in band(5.7, 80.6, 110.8, 11.4, 2.5)], True), p
        ),
    ),
    "ellipse outline width 5": (
        lambda s: s.ellipse((10, 12, 100, 61), outline="white", width=5, antialias=True),
        lambda x, y: in_ellipse(55.5, 37, 45.5, 25)(x, y) & ~in_ellipse(55.5, 37, 40.5, 20)(x, y),
        None,
    ),
    "rounded rectangle": (
        lambda s: s.rounded_rectangle((10, 10, 100, 70), 15.5, fill="white", antialias=True),
        in_rounded(10, 10, 101, 71, 15.5),
        lambda c, p, skia: c.drawRRect(skia.RRect.MakeRectXY(skia.Rect.MakeLTRB(10, 10, 101, 71), 15.5, 15.5), p),
    ),
}

# each shape's exact area
AREA = {
    "circle r=30.2": math.pi * 30.2**2,
    "circle r=3.3": math.pi * 3.3**2,
    "ellipse box": math.pi * 45.5 * 25,
    "polygon, concave": shoelace(PTS),
    "line width 1": math.hypot(105.1, 53.8) * 1,
    "line width 2.5": math.hypot(105.1, 69.2) * 2.5,
    "ellipse outline width 5": math.pi * (45.5 * 25 - 40.5 * 20),
    "rounded rectangle": 91 * 61 - (4 - math.pi) * 15.5**2,
}

# Skia's mean error against the same reference in levels (of 255), measured with
# skia-python 144.1; used where skia-python is not installed
SKIA_MAE = {
    "circle r=30.2": 1.55 / 255,
    "circle r=3.3": 8.81 / 255,
    "ellipse box": 1.87 / 255,
    "polygon, concave": 0.59 / 255,
    "line width 1": 14.0 / 255,
    "line width 2.5": 8.60 / 255,
    "rounded rectangle": 0.20 / 255,
}


def mean_error(got: np.ndarray, want: np.ndarray) -> float:
    """Mean absolute difference over the pixels either touches."""
    touched = (got > 0) | (want > 0)
    assert touched.sum() > 20, "nothing drawn"
    return float(np.abs(got - want)[touched].mean())


def skia_coverage(draw: Any) -> np.ndarray | None:
    """What Skia draws for the same shape (white on black, antialiased), or None
    without skia-python."""
    try:
        import skia
    except (ImportError, OSError):  # not installed, or its libGL/libEGL missing
        return None
    a = np.zeros((H, W, 4), np.uint8)
    # no colour space: Skia blends the stored values, as fbgfx and Pillow do
    info = skia.ImageInfo.Make(W, H, skia.kRGBA_8888_ColorType, skia.kPremul_AlphaType)
    surface = skia.Surface.MakeRasterDirect(info, a)
    draw(surface.getCanvas(), skia.Paint(AntiAlias=True, Color=skia.ColorWHITE), skia)
    del surface
    return a[..., 1].astype(np.float64) / 255


@pytest.mark.parametrize("name", list(SHAPES))
def test_coverage_is_as_exact_as_skia(name: str) -> None:
    """Each pixel's coverage is the shape's area in it: against the shape filled at 16x
    and box-filtered, the mean error over touched pixels is at most Skia's (measured
    here when skia-python is installed, else its recorded figure; for shapes Skia has
    no direct form, half a level), and the total is the shape's area within 1%."""
    ours, ref, skia_draw = SHAPES[name]
    got, want = coverage(ours), supersampled(ref)
    bound = SKIA_MAE.get(name, 0.5 / 255)
    if skia_draw is not None:
        theirs = skia_coverage(skia_draw)
        if theirs is not None:
            bound = mean_error(theirs, want)
    err = mean_error(got, want)
    assert err <= bound, f"{name}: mean error {err * 255:.2f} levels, Skia {bound * 255:.2f}"
    assert abs(got.sum() / AREA[name] - 1) < 0.01


def test_outlines_are_the_difference_of_two_areas() -> None:
    """An ellipse's outline of width w covers each pixel by the outer ellipse's area
    minus the inner one's (the box shrunk by w), to a level."""
    ring = coverage(lambda s: s.ellipse((10, 12, 100, 61), outline="white", width=6.5, antialias=True))
    outer = coverage(lambda s: s.ellipse((10, 12, 100, 61), fill="white", antialias=True))
    inner = coverage(lambda s: s.ellipse((16.5, 18.5, 93.5, 54.5), fill="white", antialias=True))
    assert ring.max() == 1 and np.abs(ring - (outer - inner)).max() <= 1.5 / 255


def test_pieslice_outline_and_fill_share_their_edge() -> None:
    """A pie slice's outline lies inside the slice: it never covers more of a pixel
    than the filled slice does, and it covers the slice's rim fully somewhere."""
    xy = (10, 10, 100, 80)
    fill = coverage(lambda s: s.pieslice(xy, 30, 120, fill="white", antialias=True))
    out = coverage(lambda s: s.pieslice(xy, 30, 120, outline="white", width=4, antialias=True))
    assert (out <= fill + 1 / 255).all() and (out == 1).any() and out.sum() < fill.sum() / 2


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "BGR565", "ARGB8888", "RGB888", "XRGB1555", "R8"])
def test_blending_over_a_background_follows_coverage(fmt: str) -> None:
    """Over a background, each pixel is background and colour mixed by its coverage
    (on the stored sRGB values, as text is blended), in every direct format."""
    cov = np.rint(coverage(lambda s: s.circle((40, 30), 20.3, fill="white", antialias=True)) * 255)
    s = Surface(W, H, fmt)
    s.clear((40, 90, 200))
    s.circle((40, 30), 20.3, fill=(250, 120, 10), antialias=True)
    bg = np.zeros((H, W, 4), np.uint8)
    bg[...] = (40, 90, 200, 255)
    want = Surface(W, H, fmt)
    want.clear((40, 90, 200))
    convert.blend_mask(want.array, cov.astype(np.uint8), (250, 120, 10, 255), want.format)
    assert (cov > 0).sum() > 1000 and ((cov > 0) & (cov < 255)).sum() > 50
    assert np.array_equal(s.array, want.array)


def test_rgb565_keeps_the_coverage() -> None:
    """White on black in RGB565 stores each pixel's coverage in its 6-bit green channel."""
    cov = np.rint(coverage(lambda s: s.polygon(PTS, fill="white", antialias=True)) * 255).astype(int)
    s = Surface(W, H, "RGB565")
    s.polygon(PTS, fill="white", antialias=True)
    green = (s.array.astype(int) >> 5) & 63
    assert ((cov > 0) & (cov < 255)).sum() > 50
    assert np.array_equal(green, cov >> 2)


def test_colours_with_alpha_blend_by_alpha_times_coverage() -> None:
    """A half-transparent colour blends by coverage times its alpha."""
    cov = np.rint(coverage(lambda s: s.line((3, 5, 100, 70), width=3, antialias=True)) * 255)
    s = Surface(W, H)
    s.line((3, 5, 100, 70), fill=(255, 255, 255, 128), width=3, antialias=True)
    got = (s.array >> 8 & 255).astype(int)
    want = ((cov * 128 + 127) // 255).astype(int)
    assert (cov == 255).any() and np.abs(got - want).max() <= 1


def test_palette_formats_draw_to_the_nearest_entry() -> None:
    """On a palette format each pixel becomes the palette entry nearest to the
    colour blended by its coverage."""
    cov = np.rint(coverage(lambda s: s.circle((40, 30), 20.3, fill="white", antialias=True)) * 255).astype(np.uint8)
    s = Surface(W, H, "C8")
    s.clear((0, 0, 0))
    s.circle((40, 30), 20.3, fill=(250, 120, 10), antialias=True)
    want = Surface(W, H, "C8")
    want.clear((0, 0, 0))
    convert.blend_mask(want.array, cov, (250, 120, 10, 255), want.format, palette=want.palette)
    assert len(np.unique(s.array)) > 3
    assert np.array_equal(s.array, want.array)


def test_default_is_pillows_pixels_and_floats_need_antialias() -> None:
    """Without antialias a call draws what it always drew; with it, float and int
    coordinates of the same value draw the same."""
    a, b = Surface(W, H), Surface(W, H)
    a.ellipse((10, 12, 100, 61), fill="white")
    b.ellipse((10, 12, 100, 61), fill="white", antialias=False)
    assert np.array_equal(a.array, b.array) and set(np.unique(a.array)) == {0, 0xFFFFFF}
    c, d = Surface(W, H), Surface(W, H)
    c.line([(1, 2), (30, 40), (90, 12)], width=3, joint="curve", antialias=True)
    d.line([(1.0, 2.0), (30.0, 40.0), (90.0, 12.0)], width=3.0, joint="curve", antialias=True)
    assert np.array_equal(c.array, d.array) and len(np.unique(c.array)) > 10


def test_every_primitive_takes_antialias() -> None:
    """Every listed primitive draws smoothly with antialias=True (fill and outline)."""
    calls: list[Callable[[Surface], None]] = [
        lambda s: s.line((5, 5, 80, 60), width=2.5, antialias=True),
        lambda s: s.lines(np.array([[5, 5, 80, 60], [10, 70, 100, 3]]), width=1.5, antialias=True),
        lambda s: s.polygon(PTS, fill="red", outline="white", width=2, antialias=True),
        lambda s: s.ellipse((10, 10, 90, 60), fill="red", outline="white", width=2, antialias=True),
        lambda s: s.circle((50, 40), 25.5, fill="red", outline="white", width=2, antialias=True),
        lambda s: s.arc((10, 10, 90, 60), 20, 200, width=3, antialias=True),
        lambda s: s.chord((10, 10, 90, 60), 20, 200, fill="red", outline="white", width=2, antialias=True),
        lambda s: s.pieslice((10, 10, 90, 60), 20, 200, fill="red", outline="white", width=2, antialias=True),
        lambda s: s.rounded_rectangle((10, 10, 90, 60), 12, fill="red", outline="white", width=2, antialias=True),
        lambda s: s.regular_polygon((50, 40, 30), 7, 10, fill="red", outline="white", width=2, antialias=True),
    ]
    for call in calls:
        s = Surface(W, H)
        call(s)
        levels = s.array & 0xFF00  # green: only the white outline or line has any
        assert ((levels > 0) & (levels < 0xFF00)).any(), call


def test_lines_batch_takes_per_line_colours() -> None:
    """Surface.lines(antialias=True) draws each line in its colour, as line() would."""
    xy = np.array([[5, 5, 80, 60], [10, 70, 100, 3]], np.float64)
    a, b = Surface(W, H, "RGB565"), Surface(W, H, "RGB565")
    a.lines(xy, colors=[(255, 0, 0), (0, 0, 255)], width=2, antialias=True)
    b.line(tuple(xy[0]), fill=(255, 0, 0), width=2, antialias=True)
    b.line(tuple(xy[1]), fill=(0, 0, 255), width=2, antialias=True)
    assert len(np.unique(a.array)) > 10 and np.array_equal(a.array, b.array)


def test_bad_input_is_refused_with_a_clear_error() -> None:
    """NaN or infinite coordinates and negative widths raise ValueError, drawing nothing."""
    s = Surface(W, H)
    for call in (
        lambda: s.line((0, 0, math.nan, 5), antialias=True),
        lambda: s.polygon([(0, 0), (5, math.inf), (9, 9)], fill="white", antialias=True),
        lambda: s.circle((5, 5), math.nan, fill="white", antialias=True),
        lambda: s.line((0, 0, 5, 5), width=-1, antialias=True),
        lambda: s.ellipse((0, 0, 9, 9), outline="white", width=math.inf, antialias=True),
    ):
        with pytest.raises(ValueError):
            call()
    assert not s.array.any()


def test_on_draw_hears_the_box_of_what_changed() -> None:
    """on_draw gets a box that holds every pixel an antialiased call changed."""
    s = Surface(W, H)
    boxes: list[tuple[int, int, int, int]] = []
    s.on_draw = lambda *b: boxes.append(b)
    s.circle((40.3, 30.6), 12.2, fill="white", antialias=True)
    ys, xs = np.nonzero(s.array)
    assert boxes == [(xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)]


def test_a_screen_shows_what_antialiased_calls_drew(open_virtual: Any) -> None:
    """A Screen's flip copies what antialiased calls drew (their boxes are logged)."""
    fb = open_virtual("96x64:RGB565:pan=0")
    with fb.screen("copy") as screen:
        s = screen.surface
        s.clear("black")
        screen.flip()
        s.circle((30, 30), 20.5, fill=(200, 100, 50), antialias=True)
        s.line((1, 60, 94, 3), fill=(10, 200, 30), width=2.5, antialias=True)
        screen.flip()
        assert np.array_equal(fb.pixels, s.array) and len(np.unique(s.array)) > 10


def test_threads_draw_smooth_shapes_on_their_own_surfaces() -> None:
    """Threads drawing antialiased shapes at once (C runs without the GIL) draw
    exactly what one thread draws."""
    want = Surface(W, H)
    want.circle((50, 40), 30.3, fill=(20, 200, 90), outline=(250, 250, 0), width=2.5, antialias=True)
    results: list[bool] = []

    def draw() -> None:
        ok = True
        for _ in range(30):
            s = Surface(W, H)
            s.circle((50, 40), 30.3, fill=(20, 200, 90), outline=(250, 250, 0), width=2.5, antialias=True)
            ok &= bool(np.array_equal(s.array, want.array))
        results.append(ok)

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


coord = st.floats(-300, 300, allow_nan=False)
width = st.floats(0, 12, allow_nan=False)


@st.composite
def shapes(draw: Any) -> tuple[str, tuple[Any, ...], dict[str, Any], tuple[float, float, float, float]]:
    """A random smooth drawing call and the box its continuous shape lies in."""
    kind = draw(
        st.sampled_from(["line", "polygon", "ellipse", "circle", "arc", "chord", "pieslice", "rounded_rectangle"])
    )
    if kind in ("line", "polygon"):
        pts = draw(st.lists(st.tuples(coord, coord), min_size=2, max_size=6))
        w = draw(width)
        xs, ys = [p[0] + 0.5 for p in pts], [p[1] + 0.5 for p in pts]
        pad = w / 2 if kind == "line" else 0
        opts: dict[str, Any] = {"width": w} if kind == "line" else {"fill": "white", "outline": "red", "width": w}
        if kind == "line":
            opts["joint"] = draw(st.sampled_from([None, "curve"]))
        return kind, (pts,), opts, (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
    if kind == "circle":
        x, y, r = draw(coord), draw(coord), draw(st.floats(0, 200))
        return (
            kind,
            ((x, y), r),
            {"fill": "white", "outline": "red", "width": draw(width)},
            (x + 0.5 - r, y + 0.5 - r, x + 0.5 + r, y + 0.5 + r),
        )
    x0, y0 = draw(coord), draw(coord)
    x1, y1 = x0 + draw(st.floats(0, 300)), y0 + draw(st.floats(0, 300))
    box = (x0, y0, x1 + 1, y1 + 1)
    w = draw(width)
    if kind == "ellipse":
        return kind, ((x0, y0, x1, y1),), {"fill": "white", "outline": "red", "width": w}, box
    if kind == "rounded_rectangle":
        return kind, ((x0, y0, x1, y1), draw(st.floats(0, 100))), {"fill": "white", "outline": "red", "width": w}, box
    a, b = draw(st.floats(-720, 720)), draw(st.floats(-720, 720))
    opts = {"width": w} if kind == "arc" else {"fill": "white", "outline": "red", "width": w}
    return kind, ((x0, y0, x1, y1), a, b), opts, box


@settings(max_examples=300)
@given(shapes(), st.sampled_from(["XRGB8888", "RGB565", "RGB888", "C8"]), st.booleans())
def test_no_pixel_is_written_outside_the_shape_box_and_the_clip(
    shape: tuple[str, tuple[Any, ...], dict[str, Any], tuple[float, float, float, float]], fmt: str, clip: bool
) -> None:
    """Guard band: a smooth call writes no pixel outside its shape's box grown by one
    pixel, nor outside the clip rectangle, for shapes anywhere (partly or wholly off
    the surface, degenerate, huge)."""
    kind, args, opts, (x0, y0, x1, y1) = shape
    s = Surface(64, 48, fmt)
    s.clear((1, 2, 3))
    before = s.array.copy()
    if clip:
        s.set_clip((10, 8, 50, 40))
    getattr(s, kind)(*args, antialias=True, **opts)
    changed = np.argwhere(s.array != before)
    if len(changed):
        ys, xs = changed[:, 0], changed[:, 1]
        assert xs.min() >= math.floor(x0) - 1 and xs.max() < math.ceil(x1) + 1
        assert ys.min() >= math.floor(y0) - 1 and ys.max() < math.ceil(y1) + 1
        if clip:
            assert xs.min() >= 10 and xs.max() < 50 and ys.min() >= 8 and ys.max() < 40


def test_shapes_far_off_and_huge_are_clipped_quickly() -> None:
    """Shapes with huge coordinates draw only what lands on the surface (loops are
    bounded by the clip): a huge circle covering it fills it whole."""
    s = Surface(64, 48)
    s.circle((32, 1e7), 1e7, fill="white", antialias=True)
    s.line((-1e12, -1e12, 1e12, 1e12), fill="red", width=3, antialias=True)
    s.polygon([(-1e9, 24), (1e9, 24), (0, 1e9)], fill="blue", antialias=True)
    assert (s.array[1:23] == 0xFFFFFF).sum() > 64 * 18
    s2 = Surface(64, 48)
    s2.circle((32, 24), 1e7, fill="white", antialias=True)
    assert (s2.array == 0xFFFFFF).all()


def test_docs_smooth_shapes_block_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Drawing page's anti-aliasing example runs as shown and draws edge pixels between
    its colours."""
    import re
    import textwrap

    page = (Path(ROOT) / "docs" / "drawing.rst").read_text()
    block = re.search(r"^\.\. testcode::\n\n((?:(?:   .*)?\n)+)", page[page.index("\nAnti-aliasing\n") :], re.M)
    assert block is not None
    shown: list[np.ndarray] = []
    real_open = fbgfx.open

    def open_and_keep(*args: Any, **kwargs: Any) -> Any:
        fb = real_open(*args, **kwargs)
        close = fb.close

        def keep_then_close() -> None:
            shown.append(fb.pixels.copy())
            close()

        monkeypatch.setattr(fb, "close", keep_then_close)
        return fb

    monkeypatch.setattr(fbgfx, "open", open_and_keep)
    exec(compile(textwrap.dedent(block.group(1)), "drawing.rst", "exec"), {})
    assert len(shown) == 1 and len(np.unique(shown[0])) > 50
