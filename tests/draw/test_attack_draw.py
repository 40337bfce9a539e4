"""Hostile input for the one-call drawing paths and for a Screen's log of what was drawn:
colours of odd types, lines from far away, batches refused halfway, frames drawn
through a kept Surface across present() and discard(), threads, many short-lived
screens."""

from __future__ import annotations

import decimal
import fractions
import gc
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

import fbgfx
from fbgfx._draw.drawlog import DrawLog
from fbgfx.color import resolve
from fbgfx.pixelformat import FORMATS


class _Floaty:
    """Not a number, but has __float__ (cffi would take it as a double)."""

    def __float__(self) -> float:
        return 5.0

    def __repr__(self) -> str:
        return "<floaty>"


class _Indexy:
    """Not a number, but has __index__."""

    def __index__(self) -> int:
        return 5

    def __repr__(self) -> str:
        return "<indexy>"


PRIMITIVES: dict[str, Callable[[fbgfx.Surface, Any], None]] = {
    "point": lambda s, c: s.point((2, 2), fill=c),
    "line": lambda s, c: s.line((2, 2, 2, 2), fill=c),
    "rectangle": lambda s, c: s.rectangle((2, 2, 2, 2), fill=c),
    "ellipse": lambda s, c: s.ellipse((1, 1, 3, 3), fill=c),
    "circle": lambda s, c: s.circle((2, 2), 1, fill=c),
    "polygon": lambda s, c: s.polygon([(2, 2), (2, 2)], fill=c),
}
ODD_FORMATS = ["XRGB8888", "RGB565", "RGB888", "BGR888", "C8", "R8", "C1", "R1"]


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", fn())
    except Exception as e:  # the outcome is what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", ODD_FORMATS)
@pytest.mark.parametrize("prim", sorted(PRIMITIVES))
@pytest.mark.parametrize(
    "channel",
    [np.complex128(5 + 1j), np.complex64(5 + 0j), np.array(5.0), np.array(5), _Floaty(), _Indexy()],
    ids=["complex-imag", "complex-real", "0d-array", "0d-int-array", "floaty", "indexy"],
)
def test_channels_that_are_not_real_numbers_act_as_resolve_says(name: str, prim: str, channel: Any) -> None:
    """A tuple colour with a channel of a non-real type (NumPy complex, a 0-d array, an
    object with __float__ or __index__) draws resolve()'s value or raises its error,
    never the real part or a float() of it, and warns of nothing."""
    fmt = FORMATS[name]
    colour = (channel, 0, 0)
    want = _outcome(lambda: resolve(colour, fmt).value)
    s = fbgfx.Surface(6, 6, name)
    before = s.array.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning means the imaginary part was dropped
        got = _outcome(lambda: PRIMITIVES[prim](s, colour))
    if want[0] != "ok":
        assert got == want
        assert (s.array == before).all()
        return
    assert got[0] == "ok", got
    ref = fbgfx.Surface(6, 6, name)
    ref.point((2, 2), fill=want[1])
    assert (s.array[2, 2] == ref.array[2, 2]).all()


_ODD_BUT_WHOLE = [
    (np.float16(255), fractions.Fraction(510, 2), decimal.Decimal("7")),
    (np.uint64(3), True, -0.0),
    (np.float32(128.0), np.int8(127), np.bool_(True)),
    (np.longdouble(200), 1e-400, decimal.Decimal("1e-400")),  # 0 as float() gives them
    (np.int64(254), 253.0, fractions.Fraction(1, 10**400)),
]
_NOT_WHOLE = [
    (np.float16(0.5), 0, 0),
    (0, 5e-324, 0),  # the smallest subnormal is not 0
    (0, 0, np.float32("inf")),
    (2**64, 0, 0),
    (10**400, 0, 0),  # float() overflows: OverflowError, as resolve() says
    (decimal.Decimal("NaN"), 0, 0),
    (decimal.Decimal("sNaN"), 0, 0),
    (0, 0, -1e-300),
]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_odd_whole_channels_draw_pack_color_and_others_raise_resolves_error(name: str) -> None:
    """Channels of every real type equal to a whole number 0..255 (float16, Fraction,
    Decimal, uint64, bool, -0.0, values float() makes 0) draw PixelFormat.pack_color's
    value through every one-call primitive; channels that are not (subnormals, inf,
    2**64, NaN, 10**400) raise exactly resolve()'s error and leave the pixels alone."""
    fmt = FORMATS[name]
    for colour in _ODD_BUT_WHOLE:
        want = fmt.pack_color(tuple(int(float(c)) for c in colour) + (255,))
        for prim, draw in PRIMITIVES.items():
            s = fbgfx.Surface(6, 6, name)
            draw(s, colour)
            ref = fbgfx.Surface(6, 6, name)
            ref.point((2, 2), fill=want)
            assert (s.array[2, 2] == ref.array[2, 2]).all(), (prim, colour)
    for colour in _NOT_WHOLE:
        want = _outcome(lambda: resolve(colour, fmt))
        assert want[0] != "ok"
        for prim, draw in PRIMITIVES.items():
            s = fbgfx.Surface(6, 6, name)
            before = s.array.copy()
            assert _outcome(lambda: draw(s, colour)) == want, (prim, colour)
            assert (s.array == before).all()


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.points([[1, 1], [3, 4], [float("nan"), 2]], fill="red"),
        lambda s: s.lines([[1, 1, 9, 5], [float("inf"), 2, 3, 3]], colors=[(1, 200, 3), (4, 5, 6)]),
        lambda s: s.rectangles([[1, 1, 5, 5], [2, float("nan"), 3, 3]], fill=(0, 255, 0)),
        lambda s: s.ellipses([[1, 1, 9, 7], [float("-inf"), 2, 3, 3]], fill="blue"),
    ],
    ids=["points", "lines", "rectangles", "ellipses"],
)
@pytest.mark.parametrize("buffering", ["copy", "flip"])
def test_a_batch_refused_halfway_still_reaches_the_screen(
    call: Callable[[fbgfx.Surface], None], buffering: str, open_virtual: Any
) -> None:
    """A batch form raising ValueError for a non-finite item after drawing the items
    before it: those pixels are in the back buffer, and the next flip shows them (the
    page equals the back buffer), as a user's on_draw hears of them."""
    fb = open_virtual("16x12:XRGB8888" + (":pan=0" if buffering == "copy" else ""))
    with fb.screen(buffering) as screen:
        s = screen.surface
        heard: list[tuple[int, int, int, int]] = []
        s.on_draw = lambda *box: heard.append(box)
        with pytest.raises(ValueError, match="finite"):
            call(s)
        assert (s.array != 0).any()
        assert heard
        back = s.array.copy()
        screen.flip()
        assert (fb.pixels == back).all()


def _pillow_line(w: int, h: int, xy: tuple[float, ...]) -> np.ndarray:
    im = Image.new("L", (w, h))
    ImageDraw.Draw(im).line(xy, fill=255)
    return np.asarray(im) != 0


def _far_lines() -> list[tuple[float, ...]]:
    rng = np.random.default_rng(2026)
    out: list[tuple[float, ...]] = []
    for _ in range(40):
        # through a point of the surface, ends up to 2**22 away on both sides
        cx, cy = (int(v) for v in rng.integers(0, 40, 2))
        d = float(rng.choice([2**22, 1_234_567, 99_999, 3]))
        a, b = (int(v) for v in rng.integers(-6, 7, 2))
        q = int(rng.integers(1, 8))
        out.append((cx - a * d, cy - b * d / q, cx + a * d, cy + b * d / q))
    for _ in range(40):
        # halves and near-halves anywhere around the surface
        v = rng.integers(-20, 60, 4) + rng.choice([0.0, 0.5, -0.5, 0.4999999, 0.5000001], 4)
        out.append(tuple(float(c) for c in v))
    out += [(-(2.0**22), 7, 2.0**22, 7), (9, -(2.0**22), 9, 2.0**22), (-5, -5, -1, 90), (50, 3, 90, 3)]
    return out


@pytest.mark.parametrize("name", ["XRGB8888", "RGB888", "RGB565", "C8"])
def test_lines_from_far_away_equal_pillow_on_surfaces_subsurfaces_and_clips(name: str) -> None:
    """1-pixel lines with ends far outside (up to 2**22 away), at halves, steep and flat,
    with a fresh colour each: the pixels equal Pillow's on the surface, on a subsurface
    (nothing outside it changes) and inside a clip rectangle (nothing outside it)."""
    w, h = 41, 37
    for i, xy in enumerate(_far_lines()):
        colour = (255, 255, 255) if name != "C8" else (255, 255, 254)
        want = _pillow_line(w, h, xy)
        s = fbgfx.Surface(w, h, name)
        s.line(xy, fill=colour)
        got = (s.array != 0).reshape(h, w, -1).any(-1)
        assert (got == want).all(), (i, xy)

        big = fbgfx.Surface(w + 9, h + 7, name)
        sub = big.subsurface((4, 3, 4 + w, 3 + h))
        sub.line(xy, fill=colour)
        got = (big.array != 0).reshape(h + 7, w + 9, -1).any(-1)
        assert (got[3 : 3 + h, 4 : 4 + w] == want).all(), (i, xy)
        assert got.sum() == want.sum(), (i, xy)  # nothing outside the subsurface

        c = fbgfx.Surface(w, h, name)
        c.set_clip((5, 4, 30, 33))
        c.line(xy, fill=colour)
        got = (c.array != 0).reshape(h, w, -1).any(-1)
        clipped = np.zeros_like(want)
        clipped[4:33, 5:30] = want[4:33, 5:30]
        assert (got == clipped).all(), (i, xy)


def _rgb(surface: fbgfx.Surface) -> np.ndarray:
    copy = fbgfx.Surface.wrap(surface.array.copy(), surface.format, palette=surface.palette)
    return np.asarray(copy.to_image().convert("RGB"))


@pytest.mark.parametrize(
    "fmt,buffering,clear,rotate",
    [
        ("XRGB8888", "copy", False, 0),
        ("RGB565", "flip", True, 90),
        ("C8", "flip", False, 270),
        ("R1", "copy", True, 180),
        ("RGB888", "flip", False, 90),
        ("XRGB8888", "flip", True, 0),
    ],
)
def test_a_kept_surface_reaches_the_screen_through_present_discard_and_clear(
    fmt: str, buffering: str, clear: bool, rotate: int, open_virtual: Any
) -> None:
    """Random frames drawn through one Surface kept for the whole run (every primitive,
    a subsurface, clips, user on_draw, text, blits, batches, direct writes with
    mark_dirty) between flips, present()s of whole and partial pictures, and discards:
    after each flip the panel shows exactly the frame (turned by ``rotate``), or the
    picture last presented when nothing was drawn since."""
    fb = open_virtual(f"48x36:{fmt}" + (":pan=0" if buffering == "copy" else ""))
    rng = np.random.default_rng(sum(map(ord, fmt + buffering)) + rotate)

    def col() -> tuple[int, int, int]:
        r, g, b = (int(v) for v in rng.integers(0, 256, 3))
        return (r, g, b)

    with fb.screen(buffering, clear=clear, rotate=rotate) as screen:
        s = screen.surface
        W, H = screen.width, screen.height

        def pt() -> tuple[float, float]:
            return float(rng.integers(-4, W + 4)), float(rng.integers(-4, H + 4))

        def box() -> tuple[float, float, float, float]:
            (ax, ay), (bx, by) = pt(), pt()
            return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))

        sub = s.subsurface((3, 2, W - 5, H - 4))
        draws: list[Callable[[], Any]] = [
            lambda: s.line(pt() + pt(), fill=col()),
            lambda: s.rectangle(box(), fill=col()),
            lambda: s.point(pt(), fill=col()),
            lambda: s.ellipse(box(), fill=col()),
            lambda: s.circle(pt(), float(rng.integers(0, 8)), fill=col()),
            lambda: s.polygon([pt(), pt(), pt()], fill=col(), outline=col()),
            lambda: s.line(pt() + pt(), fill=col(), width=3),
            lambda: s.text(pt(), "Hi", fill=col()),
            lambda: s.blit(rng.integers(0, 256, (7, 9, 3), dtype=np.uint8), (int(pt()[0]), int(pt()[1]))),
            lambda: sub.line(pt() + pt(), fill=col()),
            lambda: sub.rectangle(box(), fill="orange"),
            lambda: s.lines(rng.integers(-4, 50, (3, 4)).astype(float), colors=rng.integers(0, 256, (3, 3))),
            lambda: s.rectangles(np.sort(rng.integers(-4, 50, (2, 2, 2)), axis=1).reshape(2, 4), fill=col()),
            lambda: s.points(rng.integers(-4, 50, (5, 2)).astype(float), fill=col()),
            lambda: s.ellipses(np.sort(rng.integers(-4, 50, (2, 2, 2)), axis=1).reshape(2, 4), fill=col()),
            lambda: s.set_clip(box() if rng.integers(2) else None),
            lambda: setattr(s, "on_draw", None if s.on_draw else (lambda *b: None)),
        ]
        shown = _rgb(s)  # what the panel must show, in the frame's layout
        flips = 0
        for _ in range(150):
            op = int(rng.integers(0, len(draws) + 6))
            if op < len(draws):
                draws[op]()
            elif op == len(draws):  # direct writes, reported
                x0, y0 = int(rng.integers(0, W)), int(rng.integers(0, H))
                x1, y1 = int(rng.integers(x0, W + 1)), int(rng.integers(y0, H + 1))
                s.array[y0:y1, x0:x1] = s.array[y0, x0]
                screen.mark_dirty((x0, y0, x1, y1))
            elif op == len(draws) + 1:
                screen.discard()
            elif op == len(draws) + 2:  # a whole picture: shown as it is
                pic = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
                screen.present(pic)
                ref = fbgfx.Surface(W, H, s.format, palette=s.palette)
                ref.blit(pic)
                shown = _rgb(ref)
                assert (np.asarray(fb.snapshot()) == np.rot90(shown, -rotate // 90)).all()
            elif op == len(draws) + 3:  # a smaller picture: composed in the back buffer
                screen.present(rng.integers(0, 256, (H // 2, W // 3, 3), dtype=np.uint8), fit="center")
                shown = np.asarray(fb.snapshot())
                shown = np.rot90(shown, rotate // 90)
            else:
                frame = _rgb(s)
                stale = screen._back.stale  # drawn on since present()? else it shows that
                screen.flip()
                flips += 1
                if not stale:
                    shown = frame
                assert (np.asarray(fb.snapshot()) == np.rot90(shown, -rotate // 90)).all(), flips
        assert flips > 5


@pytest.mark.parametrize("clear", [False, True])
def test_threads_drawing_while_another_presents_discards_and_flips(clear: bool, open_virtual: Any) -> None:
    """Three threads draw with fresh colours by every path while a fourth presents
    pictures, discards and flips: nothing raises, and afterwards a frame drawn and
    flipped is shown exactly."""
    fb = open_virtual("64x48:RGB565")
    errors: list[BaseException] = []
    with fb.screen("flip", clear=clear) as screen:
        s = screen.surface
        stop = threading.Event()
        pic = np.full((48, 64, 3), 90, np.uint8)

        def draw(k: int) -> None:
            rng = np.random.default_rng(k)
            try:
                while not stop.is_set():
                    x, y = (int(v) for v in rng.integers(0, 48, 2))
                    c = (int(rng.integers(256)), k * 60, 7)
                    [
                        lambda: s.point((x, y), fill=c),
                        lambda: s.line((x, y, 63 - x, 47 - y), fill=c),
                        lambda: s.rectangle((x, y, x + 3, y + 3), fill=c, outline=c),
                        lambda: s.polygon([(x, y), (x + 5, y), (x, y + 5)], fill=c),
                        lambda: s.points([(x, y), (y, x)], fill=c),
                    ][int(rng.integers(5))]()
            except BaseException as e:  # reported below
                errors.append(e)

        def control() -> None:
            try:
                for i in range(400):
                    [
                        lambda: screen.present(pic),
                        screen.discard,
                        screen.flip,
                        lambda: screen.present(pic[:20, :30], fit="center"),
                    ][i % 4]()
            except BaseException as e:  # reported below
                errors.append(e)
            finally:
                stop.set()

        threads = [threading.Thread(target=draw, args=(k,)) for k in range(3)]
        threads.append(threading.Thread(target=control))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        s = screen.surface
        s.line((0, 0, 63, 47), fill=(255, 255, 255))
        s.rectangle((10, 10, 20, 20), fill=(0, 255, 0))
        back = s.array.copy()
        screen.flip()
        assert (fb.pixels == back).all()


def test_screens_and_surfaces_come_and_go_while_kept_surfaces_draw(open_virtual: Any) -> None:
    """Screens opened and closed over and over, their Surfaces (and subsurfaces) kept
    and drawn on after the Screen is gone and after the last other reference is
    dropped: every draw lands in memory the Surface owns (run under .ci/asan.sh this
    catches C writing through a log or colour table that was freed)."""
    fb = open_virtual("40x30:XRGB8888:pan=0")
    kept: list[fbgfx.Surface] = []
    for i in range(30):
        with fb.screen("copy", clear=bool(i % 2)) as screen:
            s = screen.surface
            s.line((0, 0, 39, 29), fill=(i, 2, 3))
            if i % 3 == 0:
                screen.present(np.zeros((30, 40, 3), np.uint8))  # stale: drawing reports first
            kept.append(s.subsurface((2, 2, 30, 20)) if i % 2 else s)
        del screen, s
        gc.collect()
        for k in kept[-5:]:
            k.line((0, 0, 20, 15), fill=(9, 8, 7))
            k.rectangle((1, 1, 3, 3), fill=(1, 2, 3))
            k.point((4, 4), fill="red")
            k.polygon([(6, 6), (11, 6), (6, 11)], fill=(4, 5, 6))
    for k in kept:
        assert (k.array[1:4, 1:4] == 0x010203).all()


@pytest.mark.parametrize("stale", [False, True])
def test_a_subsurfaces_on_draw_raising_still_lets_the_screen_show_the_drawing(stale: bool, open_virtual: Any) -> None:
    """A user's on_draw on a subsurface of a Screen's frame raises: the drawing call
    raises that error, yet the Screen heard of the pixels (also right after present()),
    so the next flip shows exactly the back buffer."""
    fb = open_virtual("32x24:RGB565:pan=0")
    with fb.screen("copy") as screen:
        s = screen.surface
        sub = s.subsurface((4, 4, 28, 20))
        if stale:
            screen.present(np.full((24, 32, 3), 60, np.uint8))

        def refuse(*box: int) -> None:
            raise RuntimeError("on_draw refuses")

        sub.on_draw = refuse
        for draw in (
            lambda: sub.line((0, 0, 20, 10), fill=(255, 0, 0)),
            lambda: sub.rectangle((2, 2, 6, 6), fill="white", outline=(0, 0, 255)),
            lambda: sub.text((1, 1), "x", fill=(0, 255, 0)),
        ):
            with pytest.raises(RuntimeError, match="refuses"):
                draw()
        back = s.array.copy()
        screen.flip()
        assert (fb.pixels == back).all()


@pytest.mark.parametrize("clear", [False, True])
def test_a_drawing_call_landing_while_present_marks_the_frame_stale(clear: bool, open_virtual: Any) -> None:
    """Another thread's drawing call that runs just as present() makes the back buffer
    stale (its hook is in place, the rest not yet) catches up with the picture instead
    of failing, and the next flips show the drawing on the picture (on a blank frame
    with ``clear``), then that again (a blank frame with ``clear``)."""
    fb = open_virtual("32x24:XRGB8888:pan=0")
    with fb.screen("copy", clear=clear) as screen:
        s = screen.surface
        log = screen._back.log

        class DrawingLog(DrawLog):
            @DrawLog.before_write.setter
            def before_write(self, fn: Any) -> None:
                DrawLog.before_write.fset(self, fn)
                if fn is not None:  # the other thread draws right here
                    s.rectangle((2, 2, 9, 9), fill=(1, 2, 3), outline=(4, 5, 6))

        log.__class__ = DrawingLog
        pic = np.full((24, 32, 3), 80, np.uint8)
        screen.present(pic)
        log.__class__ = DrawLog
        # the drawing lands on the picture, or (``clear``: a frame starts blank) on black
        want = np.full((24, 32), 0 if clear else 0x505050, np.uint32)
        want[2:10, 2:10] = 0x040506
        want[3:9, 3:9] = 0x010203
        screen.flip()
        assert (fb.pixels == want).all()
        screen.flip()
        assert (fb.pixels == (0 if clear else want)).all()
