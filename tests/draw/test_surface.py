"""Surface primitives against Pillow's ImageDraw, colours, clipping, blits and batch forms."""

import functools
import inspect
import math

import numpy as np
import PIL
import pytest
from PIL import Image, ImageDraw
from support.pillow_compare import RandomDrawings, assert_like_pillow, assert_same_pixels

import fbgfx
from fbgfx import Surface

W, H = 64, 48


# Pillow refuses some inverted boxes that fbgfx normalises: there fbgfx must just draw.
check = functools.partial(assert_like_pillow, pillow_may_refuse=True)


def rnd_box(r, lo=-20, hi=80, ordered=True):
    x0, x1 = sorted(r.randint(lo, hi, 2)) if ordered else r.randint(lo, hi, 2)
    y0, y1 = sorted(r.randint(lo, hi, 2)) if ordered else r.randint(lo, hi, 2)
    return [int(x0), int(y0), int(x1), int(y1)]


COLOURS = dict(fill=(200, 40, 10), outline=(10, 220, 90))

# fbgfx rasterises polygons by the rules of Pillow >= 11.2; older Pillow puts some edge
# pixels differently, so exact polygon comparisons need a Pillow at least that new.
PILLOW = tuple(int(p) for p in PIL.__version__.split(".")[:2])
pillow_polygons = pytest.mark.skipif(
    PILLOW < (11, 2), reason=f"Pillow {PIL.__version__} rasterises polygon edges as Pillow < 11.2 did"
)
# Rounded rectangles follow Pillow >= 12.3, whose corner arcs moved a few pixels.
pillow_rounded = pytest.mark.skipif(
    PILLOW < (12, 3), reason=f"Pillow {PIL.__version__} draws rounded corners as Pillow < 12.3 did"
)
pillow_corners = pytest.mark.skipif(
    "corners" not in inspect.signature(ImageDraw.ImageDraw.rounded_rectangle).parameters,
    reason=f"Pillow {PIL.__version__} has no rounded_rectangle(corners=) to compare with",
)


def test_lines_match_pillow():
    """Random 1-pixel and wide lines and polylines give Pillow's exact pixels."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(1)
        for _i in range(300):
            pts = [tuple(int(v) for v in r.randint(-30, 90, 2)) for _ in range(r.randint(2, 5))]
            width = int(r.choice([1, 1, 2, 3, 4, 5, 7, 10]))
            fuzz(lambda d: d.line(pts, fill=(255, 255, 255), width=width))


def test_line_float_coordinates_truncate_like_pillow():
    """Float coordinates are truncated toward zero as Pillow's C layer does."""
    check(lambda d: d.line([(-3.7, 2.9), (40.2, 30.99)], fill="red"))
    check(lambda d: d.line([1.5, 2.5, 60.9, -4.2, 10, 40.1], fill="red", width=3))


def test_line_joint_curve_matches_pillow():
    """joint="curve" adds the same round joints as Pillow."""
    for width in (5, 9, 12):
        check(lambda d: d.line([(5, 5), (40, 10), (20, 45), (60, 40)], fill="white", width=width, joint="curve"))


def test_points_match_pillow():
    """point() with one and many points in both forms."""
    check(lambda d: d.point([(1, 1), (5, 7), (63, 47), (64, 48), (-1, 3)], fill="yellow"))
    check(lambda d: d.point([3, 4, 10, 11], fill="yellow"))
    check(lambda d: d.point((20, 20)))


def test_rectangles_match_pillow():
    """Filled and outlined rectangles, thick outlines wider than the rectangle included."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(2)
        for _i in range(300):
            box = rnd_box(r)
            width = int(r.choice([1, 2, 3, 5, 9, 30]))
            fuzz(lambda d: d.rectangle(box, width=width, **COLOURS))
            fuzz(lambda d: d.rectangle([tuple(box[:2]), tuple(box[2:])], outline="white", width=width))


@pillow_polygons
def test_polygons_match_pillow():
    """Random concave and self-intersecting polygons, filled and outlined."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(3)
        for _i in range(400):
            n = r.randint(3, 9)
            pts = [tuple(int(v) for v in r.randint(-15, 80, 2)) for _ in range(n)]
            width = int(r.choice([1, 1, 2, 4]))
            fuzz(lambda d: d.polygon(pts, width=width, **COLOURS))
    # axis-aligned shapes with horizontal runs and shared corners
    check(lambda d: d.polygon([(5, 5), (30, 5), (40, 5), (40, 30), (20, 30), (20, 15), (5, 15)], fill="white"))
    check(lambda d: d.polygon([(10, 10), (50, 10), (50, 40), (30, 20), (10, 40)], fill="white", outline="red"))


@pillow_polygons
def test_regular_polygon_matches_pillow():
    """regular_polygon with rotation and outline."""
    for n in (3, 5, 6, 12):
        check(lambda d: d.regular_polygon((30, 24, 20), n, rotation=17, width=3, **COLOURS))
        check(lambda d: d.regular_polygon(((30, 24), 18), n, outline="white"))


def test_ellipses_match_pillow():
    """Random ellipses and circles: filled, outlined, thin and thick, odd and even sizes."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(4)
        for _i in range(300):
            box = rnd_box(r)
            width = int(r.choice([1, 2, 3, 6, 40]))
            fuzz(lambda d: d.ellipse(box, width=width, **COLOURS))
        for radius in (0, 1, 2, 5, 10.5, 30):
            if hasattr(ImageDraw.ImageDraw, "circle"):
                fuzz(lambda d: d.circle((30, 20), radius, **COLOURS))
            else:  # Pillow < 10.4 has no circle(); its circle() is exactly this ellipse
                box = (30 - radius, 20 - radius, 30 + radius, 20 + radius)
                fuzz(lambda s: s.circle((30, 20), radius, **COLOURS), pillow=lambda d: d.ellipse(box, **COLOURS))


def test_arcs_chords_pieslices_match_pillow():
    """Random arcs, chords and pie slices, including negative and wrapping angles."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(5)
        for i in range(300):
            box = rnd_box(r, -10, 70)
            start, end = (float(v) for v in r.uniform(-400, 400, 2))
            if i % 5 == 0:
                start, end = float(int(start)), float(int(start) + r.choice([90, 180, 270, 360, 0]))
            width = int(r.choice([1, 2, 4, 9]))
            fuzz(lambda d: d.arc(box, start, end, fill="white", width=width))
            fuzz(lambda d: d.chord(box, start, end, width=width, **COLOURS))
            fuzz(lambda d: d.pieslice(box, start, end, width=width, **COLOURS))


@pillow_rounded
@pytest.mark.parametrize("selected", [False, pytest.param(True, marks=pillow_corners)], ids=["all", "corners"])
def test_rounded_rectangles_match_pillow(selected):
    """rounded_rectangle over radii and widths, with all corners and with corner selections."""
    with RandomDrawings(pillow_may_refuse=True) as fuzz:
        r = np.random.RandomState(6)
        for i in range(150):
            box = rnd_box(r, 0, 64)
            radius = int(r.choice([0, 2, 5, 10, 40]))
            width = int(r.choice([1, 2, 4]))
            corners = tuple(bool(c) for c in r.randint(0, 2, 4)) if i % 3 == 0 else None
            if selected:
                fuzz(lambda d: d.rounded_rectangle(box, radius, width=width, corners=corners, **COLOURS))
            else:
                fuzz(lambda d: d.rounded_rectangle(box, radius, width=width, **COLOURS))


def test_bitmap_matches_pillow():
    """bitmap() paints through a mode "1" and a mode "L" mask like Pillow."""
    r = np.random.RandomState(7)
    one = Image.fromarray((r.randint(0, 2, (20, 30)) * 255).astype(np.uint8)).convert("1")
    check(lambda d: d.bitmap((5, 7), one, fill="orange"))
    check(lambda d: d.bitmap((-5, 40), one, fill="orange"))


def test_default_inks_match_pillow():
    """No colour means white, as in ImageDraw (lines, outlines, points)."""
    check(lambda d: d.line((0, 0, 40, 30)))
    check(lambda d: d.rectangle((3, 3, 30, 20)))
    check(lambda d: d.ellipse((3, 3, 30, 20)))
    check(lambda d: d.polygon([(3, 3), (30, 20), (5, 40)]))


@pytest.mark.parametrize(
    "fmt", ["RGB565", "BGR565", "XRGB8888", "XBGR8888", "RGB888", "BGR888", "C8", "R8", "ARGB8888"]
)
def test_every_format_stores_packed_colour(fmt):
    """Each primitive writes exactly format.pack_color of its colour in every format."""
    s = Surface(W, H, fmt)
    f = s.format
    s.rectangle((2, 3, 20, 10), fill=(255, 0, 0))
    s.ellipse((30, 5, 50, 30), fill=(0, 255, 0))
    s.line((0, 40, 63, 47), fill=(0, 0, 255), width=3)
    s.polygon([(5, 20), (25, 25), (10, 40)], fill=(255, 255, 0))
    for xy, col in (((5, 5), (255, 0, 0)), ((40, 17), (0, 255, 0)), ((12, 27), (255, 255, 0))):
        native = s.array[xy[1], xy[0]]
        want = f.pack_color(col, s.palette)
        if f.bpp == 24:
            native = int(native[0]) | int(native[1]) << 8 | int(native[2]) << 16
        assert int(native) == want
    assert int(np.count_nonzero(s.array)) > 0


def test_int_colours_are_native_values():
    """An int colour is written as the native value itself."""
    s = Surface(8, 8, "RGB565")
    s.point((1, 1), 0x1234)
    assert s.array[1, 1] == 0x1234
    with pytest.raises(ValueError):
        s.point((1, 1), 0x10000)


@pytest.mark.parametrize(
    "bad",
    [
        (float("nan"), 0, 0),
        (0, float("inf"), 0),
        (256, 0, 0),
        (-1, 0, 0),
        (1.5, 0, 0),
        (1, 2),
        "nosuchcolour",
        "#12345",
    ],
)
def test_bad_colours_raise_value_error(bad):
    """NaN, infinity, out-of-range channels and unknown names raise ValueError."""
    s = Surface(8, 8)
    with pytest.raises(ValueError):
        s.point((1, 1), bad)


def test_colour_strings_parse_like_pillow():
    """Names, #rgb, #rrggbb, #rrggbbaa and tuples give the colours Pillow gives."""
    s = Surface(4, 1)
    for i, c in enumerate(["#f80", "#ff8800", "orange", (1, 2, 3)]):
        s.point((i, 0), c)
    img = np.asarray(s.to_image())[0]
    assert img[0].tolist() == [255, 136, 0] and img[1].tolist() == [255, 136, 0]
    assert img[2].tolist() == [255, 165, 0] and img[3].tolist() == [1, 2, 3]
    s.point((0, 0), "#00000000")  # alpha 0 draws nothing
    assert np.asarray(s.to_image())[0, 0].tolist() == [255, 136, 0]


def test_alpha_blends_like_pillow_rgba_draw():
    """An RGBA colour blends over what is there, as ImageDraw.Draw(im, "RGBA") does."""

    def draw(t):
        t.rectangle((0, 0, 63, 47), fill=(0, 0, 200))
        t.rectangle((10, 10, 40, 30), fill=(255, 0, 0, 128))
        t.ellipse((30, 5, 60, 40), fill=(0, 255, 0, 64))

    assert_like_pillow(draw, mode="RGBA", tolerance=1)


def test_palette_format_uses_nearest_entry():
    """On C8 the nearest entry of the surface palette is written."""
    pal = np.zeros((256, 3), np.uint8)
    pal[7] = (250, 10, 10)
    s = Surface(4, 4, "C8", palette=pal)
    s.point((0, 0), (255, 0, 0))
    assert s.array[0, 0] == 7
    assert np.asarray(s.to_image())[0, 0].tolist() == [250, 10, 10]


# -- clipping, safety ------------------------------------------------------------------------


def test_clip_rectangle_limits_drawing():
    """Nothing is drawn outside the clip rectangle; inside equals Pillow."""
    s, im = Surface(W, H), Image.new("RGB", (W, H))
    s.set_clip((10, 5, 40, 30))
    for t in (s, ImageDraw.Draw(im)):
        t.ellipse((0, 0, 63, 47), fill="white")
        t.line((0, 0, 63, 47), fill="red", width=5)
    want = np.asarray(im).copy()
    mask = np.zeros((H, W), bool)
    mask[5:30, 10:40] = True
    want[~mask] = 0
    assert_same_pixels(s.to_image(), want, against="Pillow inside the clip")
    s.reset_clip()
    assert s.clip is None


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.line((-1e9, -1e9, 1e9, 1e9), fill="white", width=3),
        lambda s: s.line((-1e9, 5, 1e9, 7), fill="white"),
        lambda s: s.rectangle((-1e9, -1e9, 1e9, 1e9), outline="white", width=5),
        lambda s: s.ellipse((-1e9, -1e9, 1e9, 1e9), fill="white"),
        lambda s: s.ellipse((-1e6, 10, 1e6, 20), outline="white", width=3),
        lambda s: s.polygon([(-1e9, 0), (1e9, 10), (0, 1e9)], fill="white"),
        lambda s: s.arc((-1e5, -1e5, 1e5, 1e5), 0, 90, fill="white"),
        lambda s: s.rectangle((30, 30, 10, 10), fill="white"),
        lambda s: s.ellipse((30, 30, 10, 10), fill="white"),
        lambda s: s.rectangle((5, 5, 5, 5), fill="white"),
        lambda s: s.line((5, 5, 5, 5), fill="white", width=1e9),
        lambda s: s.rectangle((5, 5, 20, 20), outline="white", width=10**12),
    ],
)
def test_extreme_coordinates_are_clipped(call):
    """Huge, negative, inverted and zero-size shapes draw only inside the surface, quickly."""
    big = np.full((H + 20, W + 20), 0xDEADBEEF, np.uint32)
    s = Surface.wrap(big[10:-10, 10:-10], "XRGB8888")
    s.array[...] = 0
    call(s)
    assert (big[:10] == 0xDEADBEEF).all() and (big[-10:] == 0xDEADBEEF).all()
    assert (big[:, :10] == 0xDEADBEEF).all() and (big[:, -10:] == 0xDEADBEEF).all()


def test_inverted_boxes_are_normalised():
    """A box given corner-swapped draws the same as the ordered box."""
    a, b = Surface(W, H), Surface(W, H)
    a.ellipse((40, 30, 5, 4), fill="white")
    b.ellipse((5, 4, 40, 30), fill="white")
    assert np.array_equal(a.array, b.array)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.line((0, 0, float("nan"), 3)),
        lambda s: s.line([(0, 0), (1, 1), (float("inf"), 3)], width=3),
        lambda s: s.rectangle((0, 0, float("nan"), 3), fill="red"),
        lambda s: s.ellipse((0, 0, 4, float("-inf")), fill="red"),
        lambda s: s.polygon([(0, 0), (float("nan"), 1), (3, 3)], fill="red"),
        lambda s: s.arc((0, 0, 4, 4), float("nan"), 90),
        lambda s: s.point((float("nan"), 1)),
        lambda s: s.circle((float("inf"), 1), 3, fill="red"),
        lambda s: s.text((float("nan"), 1), "x"),
        lambda s: s.blit(np.zeros((2, 2, 3), np.uint8), (float("nan"), 0)),
        lambda s: s.lines(np.array([[0, 0, np.nan, 1]])),
    ],
)
def test_nan_and_inf_raise_value_error(call):
    """NaN and infinity in coordinates or angles raise ValueError."""
    with pytest.raises(ValueError):
        call(Surface(8, 8))


# -- surfaces over memory ---------------------------------------------------------------------


def test_wrap_validates_array():
    """wrap() rejects wrong dtypes, shapes, read-only and column-strided arrays."""
    with pytest.raises(TypeError):
        Surface.wrap(np.zeros((4, 4), np.uint32), "RGB565")
    with pytest.raises(ValueError):
        Surface.wrap(np.zeros((4, 4), np.uint8), "RGB888")
    ro = np.zeros((4, 4), np.uint16)
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        Surface.wrap(ro, "RGB565")
    with pytest.raises(ValueError):
        Surface.wrap(np.zeros((4, 8), np.uint16)[:, ::2], "RGB565")


def test_wrap_draws_into_strided_rows():
    """A surface over a padded-stride view writes into that memory only."""
    mem = np.zeros((10, 16), np.uint16)
    s = Surface.wrap(mem[:, :12], "RGB565")
    s.rectangle((0, 0, 20, 20), fill="red")
    assert (mem[:, :12] == 0xF800).all() and (mem[:, 12:] == 0).all()


def test_subsurface_offsets_and_reports_to_parent():
    """A subsurface draws at its offset and reports dirty boxes to the parent in parent coordinates."""
    s = Surface(W, H)
    seen, seen_sub = [], []
    s.on_draw = lambda *b: seen.append(b)
    sub = s.subsurface((10, 20, 30, 40))
    sub.on_draw = lambda *b: seen_sub.append(b)
    sub.rectangle((2, 3, 5, 6), fill="red")
    assert seen_sub == [(2, 3, 6, 7)] and seen == [(12, 23, 16, 27)]
    assert s.array[23, 12] != 0 and s.array[22, 12] == 0
    sub.line((-100, 0, 100, 0), fill="red")
    assert seen[-1] == (10, 20, 30, 21)
    with pytest.raises(ValueError):
        s.subsurface((50, 40, 70, 50))


def test_on_draw_reports_every_call_that_changed_pixels():
    """on_draw gets the clipped exclusive bbox of clear, primitives, text and blit."""
    s = Surface(W, H)
    boxes = []
    s.on_draw = lambda *b: boxes.append(b)
    s.clear("black")
    s.point((3, 4), "red")
    s.line((-10, 5, 200, 5), fill="red")
    s.ellipse((10, 10, 20, 16), fill="red")
    s.blit(np.zeros((4, 4, 3), np.uint8), (60, 46))
    s.rectangle((100, 100, 200, 200), fill="red")  # off-surface: no report
    s.text((5, 30), "Hi", fill="white")
    assert boxes[:5] == [(0, 0, W, H), (3, 4, 4, 5), (0, 5, W, 6), (10, 10, 21, 17), (60, 46, 64, 48)]
    assert len(boxes) == 6
    x0, y0, x1, y1 = boxes[5]
    ys, xs = np.nonzero(s.array[30:, :])
    assert (x0, y0) <= (int(xs.min()), int(ys.min()) + 30) and x1 >= xs.max() + 1


# -- batch forms --------------------------------------------------------------------------------


def test_batch_forms_equal_single_calls():
    """lines/rectangles/points/ellipses from arrays draw what the single calls draw."""
    r = np.random.RandomState(8)
    segs = r.randint(-20, 80, (50, 4))
    boxes = np.sort(r.randint(-10, 70, (50, 2, 2)), axis=1).transpose(0, 2, 1).reshape(50, 4)
    pts = r.randint(-5, 70, (50, 2))
    cols = r.randint(0, 256, (50, 3))
    a, b = Surface(W, H, "RGB565"), Surface(W, H, "RGB565")
    a.lines(segs, colors=cols)
    a.rectangles(boxes[:20], colors=cols[:20])
    a.ellipses(boxes[20:30], fill="blue")
    a.points(pts, fill="yellow")
    for i, sg in enumerate(segs):
        b.line(sg.tolist(), fill=tuple(int(c) for c in cols[i]))
    for i, bx in enumerate(boxes[:20]):
        b.rectangle(bx.tolist(), fill=tuple(int(c) for c in cols[i]))
    for bx in boxes[20:30]:
        b.ellipse(bx.tolist(), fill="blue")
    b.point(pts.tolist(), fill="yellow")
    assert np.array_equal(a.array, b.array)


# -- blit ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "RGB888", "C8"])
def test_blit_pil_rgb_and_arrays(fmt):
    """blit of a PIL RGB image equals format.pack of its pixels, clipped at the edges."""
    r = np.random.RandomState(9)
    rgb = r.randint(0, 256, (20, 30, 3)).astype(np.uint8)
    s = Surface(W, H, fmt)
    s.blit(Image.fromarray(rgb), (50, 40))
    want = s.format.pack(rgb[:8, :14], s.palette)
    assert np.array_equal(s.array[40:, 50:], want)
    s2 = Surface(W, H, fmt)
    s2.blit(rgb, (50, 40))
    assert np.array_equal(s.array, s2.array)


def test_blit_rgba_blends_and_alpha_false_copies():
    """An RGBA source blends over the surface; alpha=False copies its colour."""
    src = np.zeros((4, 4, 4), np.uint8)
    src[..., 0] = 255
    src[..., 3] = 128
    s = Surface(8, 8)
    s.clear((0, 0, 255))
    s.blit(Image.fromarray(src, "RGBA"), (0, 0))
    assert np.abs(np.asarray(s.to_image())[0, 0].astype(int) - [128, 0, 127]).max() <= 1
    s.blit(src, (4, 4), alpha=False)
    assert np.asarray(s.to_image())[5, 5].tolist() == [255, 0, 0]


def test_blit_surface_native_rotate_scale_and_source_rect():
    """Surface and native sources, rotation, scaling and source_rect."""
    src = Surface(4, 2, "RGB565")
    src.point((0, 0), "red")
    dst = Surface(10, 10, "RGB565")
    dst.blit(src, (1, 1))
    assert dst.array[1, 1] == 0xF800
    dst.clear()
    dst.blit(src, (0, 0), rotate=90)  # counter-clockwise: top-left goes to bottom-left
    assert dst.array[3, 0] == 0xF800 and dst.array[0, 0] == 0
    dst.clear()
    dst.blit(src, (0, 0), size=(8, 4), resample=Image.Resampling.NEAREST)
    assert (dst.array[0:2, 0:2] == 0xF800).all() and dst.array[0, 2] == 0
    dst.clear()
    dst.blit(src.array, (5, 5), source_rect=(0, 0, 1, 1))
    assert dst.array[5, 5] == 0xF800 and np.count_nonzero(dst.array) == 1
    with pytest.raises(ValueError):
        dst.blit(src, rotate=45)


@pytest.mark.parametrize("mode", ["L", "P", "LA", "1", "RGBA", "I;16", "CMYK"])
def test_blit_any_pil_mode(mode):
    """PIL images of any mode blit as their RGB(A) conversion would."""
    base = Image.fromarray(np.random.RandomState(1).randint(0, 256, (6, 7, 3)).astype(np.uint8))
    im = base.convert(mode) if mode != "I;16" else base.convert("L").convert("I;16")
    s = Surface(7, 6)
    s.blit(im)
    ref = Surface(7, 6)
    ref.blit(fbgfx.convert.as_rgb(im))
    assert np.array_equal(s.array, ref.array)


def test_to_image_modes():
    """to_image gives RGB, or RGBA for formats with alpha."""
    assert Surface(3, 2).to_image().mode == "RGB"
    assert Surface(3, 2, "ARGB8888").to_image().mode == "RGBA"
    assert Surface(3, 2, "R8").to_image().size == (3, 2)


def test_surface_constructor_errors():
    """Bad sizes and formats raise clear errors."""
    with pytest.raises(ValueError):
        Surface(-1, 3)
    with pytest.raises(TypeError):
        Surface(1.5, 3)
    with pytest.raises(fbgfx.UnsupportedFormatError):
        Surface(3, 3, "NOPE")
    assert Surface(0, 0).size == (0, 0)
    Surface(0, 5).line((0, 0, 10, 10))


def test_antialiased_line_stays_near_the_aliased_one():
    """antialias=True blends a smooth line that covers the aliased line's path, with
    as much ink as the 1-pixel-wide rectangle along it has area."""
    a, b = Surface(W, H), Surface(W, H)
    a.line((3, 4, 60, 30), fill="white", antialias=True)
    b.line((3, 4, 60, 30), fill="white")
    ga = np.asarray(a.to_image())[..., 1].astype(int)
    assert ga.max() > 200 and ((ga > 0) & (ga < 255)).any()
    assert abs(ga.sum() / 255 - math.hypot(57, 26)) < 0.1
    ys, xs = np.nonzero(b.array)
    assert (ga[ys, xs] > 0).all()


def test_huge_ellipses_are_drawn_by_rows():
    """Ellipses too big for the exact walk still cover what they should, row by row."""
    s = Surface(W, H)
    s.circle((32, 24), 20000, fill="white")
    assert (s.array != 0).all()
    s = Surface(W, H)
    s.circle((32, 20010), 20000, outline="white", width=3)
    rows = (s.array != 0).sum(axis=1)
    assert rows[10:13].tolist() == [W, W, W] and rows[:10].sum() == 0 and rows[13:].sum() == 0
