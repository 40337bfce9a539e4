"""What is drawn on a Screen's frame reaches video memory, and nothing else is rewritten:
the one-call drawing paths log what they change in C, the Screen takes the log at flips."""

import threading

import numpy as np
import pytest

import fbgfx

SENTINEL = {"XRGB8888": 0x12345678, "RGB565": 0x1234, "C8": 0x77}


def fresh_colours(rng, n):
    return [tuple(int(c) for c in v) for v in rng.integers(0, 256, (n, 3))]


def draw_everything(s, rng, x0, y0, x1, y1):
    """Every primitive, fast paths (fresh tuples, names, ints) and slow ones (outlines,
    wide lines, polygons, text, blends), inside [x0, x1) x [y0, y1)."""
    colours = iter(fresh_colours(rng, 64))

    def pt():
        return int(rng.integers(x0, x1)), int(rng.integers(y0, y1))

    for _ in range(4):
        s.line(pt() + pt(), fill=next(colours))
        a, b = pt(), pt()
        box = (min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
        s.rectangle(box, fill=next(colours))
        s.ellipse(box, fill=next(colours))
        s.point(pt(), fill=next(colours))
        s.line(pt() + pt(), fill="orange")
        s.rectangle(box, outline=next(colours), width=2)
        s.line(pt() + pt(), fill=next(colours), width=3)
        s.polygon([pt(), pt(), pt()], fill=next(colours))
        s.ellipse(box, fill=next(colours) + (128,))
    s.text((x0, y0), "Hi", fill=next(colours))


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "C8"])
@pytest.mark.parametrize("buffering", ["copy", "flip"])
@pytest.mark.parametrize("clear", [False, True])
def test_drawing_reaches_the_screen_and_rows_never_drawn_stay(fmt, buffering, clear, open_virtual):
    """After a frame of every primitive in two bands, the page shown equals the back buffer
    there, and rows between the bands (never drawn) were not rewritten."""
    fb = open_virtual(f"120x90:{fmt}" + (":pan=0" if buffering == "copy" else ""))
    rng = np.random.default_rng(3)
    with fb.screen(buffering, clear=clear) as screen:
        for _ in range(2):  # every page holds a whole frame
            with screen.frame() as s:
                s.clear("black")
        for _ in range(3):  # frames that leave the middle rows alone, on every page
            with screen.frame() as s:
                s.point((5, 5), fill="white")
        for frame in range(3):
            for y in (0, 90) if buffering == "flip" else (0,):
                fb.view(0, y, 120, 90)[...] = SENTINEL[fmt]
            with screen.frame() as s:
                before = s.array.copy()
                draw_everything(s, rng, 2, 2, 118, 27)  # wide lines reach 1-2 pixels further
                draw_everything(s, rng, 10, 63, 110, 87)
                back = s.array.copy()
            shown = fb.view(0, fb.var.yoffset, 120, 90)
            changed = back != before
            assert changed[:30].sum() > 100 and changed[60:].sum() > 100
            assert (shown[changed] == back[changed]).all(), frame  # every change is shown
            rewritten = shown != SENTINEL[fmt]
            assert (shown[rewritten] == back[rewritten]).all(), frame  # from this frame
            assert not rewritten[30:60].any(), frame


def test_users_on_draw_and_the_screens_log_both_see_each_call(open_virtual):
    """A callback set on a Screen's surface gets every call's box, and the Screen still
    shows what was drawn."""
    fb = open_virtual("64x48:RGB565:pan=0")
    boxes = []
    with fb.screen() as screen:
        with screen.frame() as s:
            s.on_draw = lambda *box: boxes.append(box)
            s.line((1, 2, 30, 20), fill=(255, 0, 0))
            s.rectangle((40, 30, 50, 40), fill=(0, 255, 0))
            back = s.array.copy()
        assert boxes == [(1, 2, 31, 21), (40, 30, 51, 41)]
        assert (fb.pixels == back).all()
        screen.surface.on_draw = None


def test_plain_surfaces_keep_no_log():
    """A Surface nobody shows logs nothing (its fast paths do no bookkeeping), while
    the same drawing on a logged one is in its log."""
    from fbgfx._draw.drawlog import DrawLog
    from fbgfx._ffi import ffi

    s = fbgfx.Surface(32, 32, "RGB565")
    s.line((0, 0, 31, 31), fill=(1, 2, 3))
    assert s._t.log_x0 == ffi.NULL
    log = DrawLog()
    logged = fbgfx.Surface.wrap(np.zeros((32, 32), np.uint16), "RGB565", log=log)
    assert not log.pending
    logged.line((0, 0, 31, 31), fill=(1, 2, 3))
    assert log.pending


def test_threads_drawing_on_one_frame_never_mix_colours_or_lose_changes(open_virtual):
    """Four threads draw with fresh colours on one frame (C runs without the GIL), each
    pixel of its own band exactly once, while a fifth flips all the time: every pixel has
    the colour of its thread, and after the last flip the screen shows every one of them
    (a change the log lost would never be copied)."""
    fb = open_virtual("160x160:XRGB8888:pan=0")
    with fb.screen("copy") as screen:
        s = screen.surface
        s.clear("black")
        screen.flip()
        stop = threading.Event()
        errors = []

        def draw(k):
            try:
                rng = np.random.default_rng(k)
                y0 = 40 * k
                # one pixel each, by the one-call paths and by the general ones
                calls = (
                    lambda x, y, c: s.point((x, y), fill=c),
                    lambda x, y, c: s.line((x, y, x, y), fill=c),
                    lambda x, y, c: s.rectangle((x, y, x, y), fill=c),
                    lambda x, y, c: s.point([(x, y)], fill=c),
                    lambda x, y, c: s.rectangle((x, y, x, y), fill=c, outline=c),
                    lambda x, y, c: s.polygon([(x, y), (x, y)], fill=c),
                )
                for n, cell in enumerate(rng.permutation(40 * 160)):
                    y, x = y0 + int(cell) // 160, int(cell) % 160
                    g, b = (int(v) for v in rng.integers(0, 256, 2))
                    colour = (40 + 50 * k, g, b)  # the red channel says which thread
                    calls[n % len(calls)](x, y, colour)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        def flip():
            while not stop.is_set():
                screen.flip()

        flipper = threading.Thread(target=flip)
        flipper.start()
        workers = [threading.Thread(target=draw, args=(k,)) for k in range(4)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        stop.set()
        flipper.join()
        screen.flip()
        assert not errors
        red = (s.array >> 16) & 0xFF
        for k in range(4):
            assert (red[40 * k : 40 * k + 40] == 40 + 50 * k).all(), k
        assert (fb.pixels == s.array).all()


@pytest.mark.parametrize(
    "boxes, runs",
    [
        ([], []),
        ([(2, 3, 9, 7)], [(3, 8, 2, 10)]),
        ([(2, 3, 9, 7), (4, 4, 5, 5)], [(3, 8, 2, 10)]),  # inside: still one rectangle
        ([(4, 4, 5, 5), (2, 3, 9, 7)], [(3, 8, 2, 10)]),  # around: the new one
        ([(0, 0, 1, 1), (20, 10, 21, 11)], [(0, 2, 0, 2), (10, 12, 20, 22)]),  # apart: spans
        ([(0, 0, 3, 3), (2, 2, 5, 5)], [(0, 2, 0, 4), (2, 4, 0, 6), (4, 6, 2, 6)]),  # overlapping
    ],
)
def test_the_log_gives_the_region_what_was_drawn(boxes, runs):
    """What a logging surface drew comes out of its log as the Screen's Region holds it:
    one rectangle while the drawings nest, row spans otherwise; the log is then empty."""
    from fbgfx._draw.drawlog import DrawLog
    from fbgfx._screen.region import Region

    log = DrawLog()
    s = fbgfx.Surface.wrap(np.zeros((16, 32), np.uint16), "RGB565", log=log)
    for x0, y0, x1, y1 in boxes:
        s.rectangle((x0, y0, x1, y1), fill=(255, 255, 255))
    region, rows = Region(32, 16), np.zeros(6, np.int32)
    region.absorb(log.taker(region.x0, region.x1, rows), rows)
    assert region.runs() == runs
    assert (region.box is not None) == (len(runs) == 1)
    assert not log.pending


def test_threads_drawing_through_a_kept_surface_right_after_present(open_virtual):
    """Two threads draw through a Surface kept across present() at once: the first call
    brings the back buffer up to the picture before any pixel is drawn, so the catching
    up never paints the picture over the other thread's drawing."""
    fb = open_virtual("640x480:XRGB8888:pan=0")
    with fb.screen("copy") as screen:
        s = screen.surface
        for round_ in range(12):
            screen.present(np.full((480, 640, 3), 10 + round_, np.uint8))
            start = threading.Barrier(2)

            def draw(k, start=start):
                start.wait()
                for i in range(16):
                    x = 320 * k + 20 * i
                    s.rectangle((x, 40, x + 9, 440), fill=(200, 100 * k, i), outline=(200, 100 * k, i))

            threads = [threading.Thread(target=draw, args=(k,)) for k in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            screen.flip()
            for k in range(2):
                for i in range(16):
                    x = 320 * k + 20 * i
                    want = 200 << 16 | (100 * k) << 8 | i
                    assert (fb.pixels[40:441, x : x + 10] & 0xFFFFFF == want).all(), (round_, k, i)
            assert (fb.pixels[0:40] & 0xFFFFFF == (10 + round_) * 0x010101).all()
