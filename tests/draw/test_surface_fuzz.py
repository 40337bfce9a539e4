"""Property tests: random primitives never write outside the surface, and match Pillow."""

import numpy as np
import PIL
from hypothesis import given, settings
from hypothesis import strategies as st
from support.pillow_compare import assert_like_pillow

from fbgfx import Surface

GUARD = 7
SENTINEL = {1: 0xA5, 2: 0xA5A5, 4: 0xA5A5A5A5}
FORMATS = ["C8", "RGB565", "RGB888", "XRGB8888"]

coord = st.one_of(
    st.integers(-80, 120),
    st.floats(-80, 120, allow_nan=False),
    st.sampled_from([-1e9, 1e9, -(2**31), 2**31 - 1, 0, -1, 1e12]),
)
point = st.tuples(coord, coord)
colour = st.one_of(st.sampled_from(["red", "white", (10, 200, 30), (255, 0, 0, 100), 0]))
width = st.one_of(st.integers(0, 12), st.sampled_from([1, 40, 10**6]))
angle = st.floats(-1000, 1000, allow_nan=False)


def primitive():
    box = st.lists(coord, min_size=4, max_size=4)
    return st.one_of(
        st.builds(lambda xy, c: ("point", (xy,), dict(fill=c)), st.lists(point, min_size=1, max_size=6), colour),
        st.builds(
            lambda xy, c, w, j: ("line", (xy,), dict(fill=c, width=w, joint=j)),
            st.lists(point, min_size=2, max_size=6),
            colour,
            width,
            st.sampled_from([None, "curve"]),
        ),
        st.builds(
            lambda xy, c: ("line", (xy,), dict(fill=c, antialias=True)), st.lists(point, min_size=2, max_size=3), colour
        ),
        st.builds(lambda b, f, o, w: ("rectangle", (b,), dict(fill=f, outline=o, width=w)), box, colour, colour, width),
        st.builds(
            lambda b, r, f, o, w: ("rounded_rectangle", (b, r), dict(fill=f, outline=o, width=w)),
            box,
            st.integers(0, 50),
            colour,
            colour,
            st.integers(0, 8),
        ),
        st.builds(lambda b, f, o, w: ("ellipse", (b,), dict(fill=f, outline=o, width=w)), box, colour, colour, width),
        st.builds(lambda b, s, e, c, w: ("arc", (b, s, e), dict(fill=c, width=w)), box, angle, angle, colour, width),
        st.builds(
            lambda b, s, e, f, o, w: ("chord", (b, s, e), dict(fill=f, outline=o, width=w)),
            box,
            angle,
            angle,
            colour,
            colour,
            width,
        ),
        st.builds(
            lambda b, s, e, f, o, w: ("pieslice", (b, s, e), dict(fill=f, outline=o, width=w)),
            box,
            angle,
            angle,
            colour,
            colour,
            st.integers(0, 12),
        ),
        st.builds(
            lambda xy, f, o, w: ("polygon", (xy,), dict(fill=f, outline=o, width=w)),
            st.lists(point, min_size=2, max_size=9),
            colour,
            colour,
            st.integers(0, 6),
        ),
        st.builds(lambda p, c: ("text", (p, "Fuzz\nText"), dict(fill=c)), point, colour),
        st.builds(
            lambda p, c: ("blit", (np.full((9, 13, 4), 200, np.uint8), p), {}),
            st.tuples(st.integers(-20, 70), st.integers(-20, 70)),
            colour,
        ),
    )


@settings(max_examples=400)
@given(
    fmt=st.sampled_from(FORMATS),
    w=st.integers(0, 50),
    h=st.integers(0, 40),
    clip=st.one_of(
        st.none(), st.tuples(st.integers(-5, 30), st.integers(-5, 30), st.integers(0, 60), st.integers(0, 60))
    ),
    ops=st.lists(primitive(), min_size=1, max_size=5),
)
def test_nothing_is_written_outside_the_surface(fmt, w, h, clip, ops):
    """Random primitives on a surface inside a sentinel-filled guard band leave the band intact."""
    probe = Surface(1, 1, fmt)
    shape = probe.format.array_shape(h + 2 * GUARD, w + 2 * GUARD)
    big = np.empty(shape, probe.format.dtype)
    big.view(np.uint8)[...] = 0xA5
    s = Surface.wrap(big[GUARD : GUARD + h, GUARD : GUARD + w], fmt)
    s.array[...] = 0
    if clip is not None:
        s.set_clip(clip)
    outside = np.ones(shape[:2], bool)
    outside[GUARD : GUARD + h, GUARD : GUARD + w] = False
    boxes = []
    s.on_draw = lambda *b: boxes.append(b)
    for name, args, kwargs in ops:
        try:
            getattr(s, name)(*args, **kwargs)
        except (ValueError, OverflowError):
            pass  # Pillow-style refusals (e.g. multiline anchors); must still be clean
    assert (np.ascontiguousarray(big[outside]).view(np.uint8) == 0xA5).all()
    cx0, cy0, cx1, cy1 = s.clip or (0, 0, w, h)
    for x0, y0, x1, y1 in boxes:
        assert cx0 <= x0 < x1 <= cx1 and cy0 <= y0 < y1 <= cy1


small = st.integers(-30, 90)
spoint = st.tuples(small, small)


# Polygons follow the rules of Pillow >= 11.2 (test_surface.py skips its polygon tests
# before that, saying so); the other primitives match every Pillow from 9.4 on.
EXACT_PRIMITIVES = ["line", "ellipse", "arc", "chord", "pieslice", "rectangle"]
if tuple(int(p) for p in PIL.__version__.split(".")[:2]) >= (11, 2):
    EXACT_PRIMITIVES.insert(1, "polygon")


@settings(max_examples=500)
@given(data=st.data())
def test_random_primitives_equal_pillow(data):
    """Random opaque primitives in moderate coordinates equal Pillow's pixels exactly."""
    name = data.draw(st.sampled_from(EXACT_PRIMITIVES))
    w = data.draw(st.integers(1, 10))
    if name in ("line", "polygon"):
        xy = data.draw(st.lists(spoint, min_size=2, max_size=7))
    else:
        x0, x1 = sorted(data.draw(st.tuples(small, small)))
        y0, y1 = sorted(data.draw(st.tuples(small, small)))
        xy = [x0, y0, x1, y1]
    if name in ("arc", "chord", "pieslice"):
        args = (xy, data.draw(angle), data.draw(angle))
    else:
        args = (xy,)
    if name in ("line", "arc"):
        kwargs = dict(fill=(255, 255, 255), width=w)
    else:
        kwargs = dict(fill=(200, 0, 0), outline=(0, 255, 0), width=w)
    # Shapes that miss the picture draw nothing, rightly; test_surface.py's random
    # comparisons fail unless most of theirs draw.
    assert_like_pillow(lambda t: getattr(t, name)(*args, **kwargs), size=(64, 48), must_draw=False)
