"""Drawing speed of fbgfx.Surface against Pillow's ImageDraw doing the same work.

Run from the repository root after ``pip install -e .``::

    python benchmarks/bench_draw.py [--repeat N] [--only WORD]

On 800x480 RGB565 and XRGB8888 surfaces, each workload is drawn with the same calls
(same coordinates, same colours, same strings) by fbgfx and by ``ImageDraw`` on an RGB
image of the same size. Each repeat times Pillow and fbgfx back to back and takes their
ratio; the table shows the median ratio (fbgfx time / Pillow time: below 1.0 is faster
than Pillow) and the median times.

Two kinds of workload:

* "own colour": every call has a colour of its own (a gauge's needle, a gradient, a
  fade), and the text workload draws a different reading each call. No cache sees the
  same argument twice. These are the speed figures (issue 11 targets: <= 0.6, text <= 0.5).
  The short lines (ends within 40 px, as a needle or a plot segment) show the fixed
  price of a call best: their pixels cost little (issue 34: <= 0.6).
* "16 colours": the older workloads whose colours repeat every 16 calls, kept to show
  that the fresh-colour path did not cost the repeated one anything.

The "(batch)" rows draw the same work with one call (``Surface.lines`` and friends), and
the "(Screen frame)" rows draw it on the frame of a copy-mode Screen over a ``virtual:``
framebuffer, whose surface keeps track of what changed for the flip. The time of that
flip (after 1000 lines: nearly every row changed) is printed after the table.

The machine's memcpy of a 800x480 XRGB8888 frame is printed first: absolute times
differ between machines, ratios much less.

A second table times ``antialias=True`` against skia-python (Skia's CPU rasteriser)
and aggdraw (AGG) drawing the same shapes with the same geometry and colours, each a
fresh colour: 1000 lines of width 1-3, 200 filled circles of radius 5-100 and 200
polygons of 5-7 points (``pip install -e '.[bench]'`` installs both; a library that
is missing is left out). Its ratio is fbgfx / Skia. aggdraw draws into a Pillow RGB
image, the format it supports. These rows time the CPU time of the drawing thread
(``time.thread_time``): all three draw on one thread, and on a busy machine wall time
mostly measures the scheduler.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from typing import Any, Callable

import numpy as np
from _timing import median
from PIL import Image, ImageDraw, ImageFont

import fbgfx

W, H = 800, 480
Op = Callable[[int], Any]


def _fresh_colours(rng: np.random.Generator, n: int) -> list[tuple[int, int, int]]:
    """n colours, all different (so no colour cache is ever hit twice)."""
    packed = rng.choice(1 << 24, size=n, replace=False)
    return [(int(v >> 16), int(v >> 8 & 255), int(v & 255)) for v in packed]


def workloads(rounds: int, seed: int = 1) -> dict[str, dict[str, Any]]:
    """Every workload's calls for each of ``rounds`` runs, as plain Python data shared by
    both libraries. Own-colour workloads get new colours (and new readings) every round,
    so a run never sees a colour or string that an earlier run drew."""
    rng = np.random.default_rng(seed)

    def line() -> tuple[int, ...]:
        return tuple(int(v) for v in (rng.integers(0, W), rng.integers(0, H), rng.integers(0, W), rng.integers(0, H)))

    def rect() -> tuple[int, ...]:
        w, h = (int(v) for v in rng.integers(1, 65, 2))
        x, y = int(rng.integers(0, W - w)), int(rng.integers(0, H - h))
        return (x, y, x + w - 1, y + h - 1)

    def circle() -> tuple[int, ...]:
        r = int(rng.integers(5, 101))
        x, y = int(rng.integers(0, W)), int(rng.integers(0, H))
        return (x - r, y - r, x + r, y + r)

    def spot() -> tuple[int, int]:
        return int(rng.integers(0, W - 60)), int(rng.integers(0, H - 12))

    lines = [line() for _ in range(1000)]
    rects = [rect() for _ in range(1000)]
    circles = [circle() for _ in range(200)]
    spots = [spot() for _ in range(200)]
    pool = _fresh_colours(rng, rounds * 1000)
    sixteen = pool[:16]

    def fresh(r: int, n: int) -> list[tuple[int, int, int]]:
        return pool[r * 1000 : r * 1000 + n]

    def gradient(r: int) -> list[tuple[int, int, int]]:
        # one colour per row, and another set of colours every round
        return [(y * 255 // (H - 1), r % 256, 255 - y * 255 // (H - 1)) for y in range(H)]

    readings = rng.uniform(-999, 999, (rounds, 200))

    def short_line() -> tuple[int, ...]:
        # a gauge's needle, a tick, a plot segment: ends within 40 px of each other
        x, y = int(rng.integers(0, W)), int(rng.integers(0, H))
        dx, dy = (int(v) for v in rng.integers(-40, 41, 2))
        return (x, y, x + dx, y + dy)

    short = [short_line() for _ in range(1000)]
    per_round = range(rounds)
    return {
        "1000 lines, own colour": {"kind": "line", "calls": [list(zip(lines, fresh(r, 1000))) for r in per_round]},
        "1000 short lines (+-40 px), own colour": {
            "kind": "line",
            "calls": [list(zip(short, fresh(r, 1000))) for r in per_round],
        },
        "1000 rects 1..64, own colour": {
            "kind": "rect",
            "calls": [list(zip(rects, fresh(r, 1000))) for r in per_round],
        },
        "480 gradient rows": {
            "kind": "line",
            "calls": [[((0, y, W - 1, y), c) for y, c in enumerate(gradient(r))] for r in per_round],
        },
        "200 circles r5..100, own colour": {
            "kind": "ellipse",
            "calls": [list(zip(circles, fresh(r, 200))) for r in per_round],
        },
        "200 readings '%8.3f V', own colour": {
            "kind": "text",
            "calls": [
                [(xy, c, f"{v:8.3f} V") for xy, c, v in zip(spots, fresh(r, 200), readings[r])] for r in per_round
            ],
        },
        "1000 lines, 16 colours": {
            "kind": "line",
            "calls": [[(xy, sixteen[i % 16]) for i, xy in enumerate(lines)]] * rounds,
        },
        "1000 rects 1..64, 16 colours": {
            "kind": "rect",
            "calls": [[(xy, sixteen[i % 16]) for i, xy in enumerate(rects)]] * rounds,
        },
        "200 circles r5..100, 16 colours": {
            "kind": "ellipse",
            "calls": [[(xy, sixteen[i % 16]) for i, xy in enumerate(circles)]] * rounds,
        },
        "100 texts 'Hello', 16 colours": {
            "kind": "text",
            "calls": [[(xy, sixteen[i % 16], "Hello") for i, xy in enumerate(spots[:100])]] * rounds,
        },
    }


def ops(draw: Any, font: Any, work: dict[str, Any]) -> Op:
    """Round r of one workload on ``draw`` (an ImageDraw or a Surface: same names)."""
    rounds, kind = work["calls"], work["kind"]
    if kind == "line":
        return lambda r: [draw.line(xy, fill=c) for xy, c in rounds[r]]
    if kind == "rect":
        return lambda r: [draw.rectangle(xy, fill=c) for xy, c in rounds[r]]
    if kind == "ellipse":
        return lambda r: [draw.ellipse(xy, fill=c) for xy, c in rounds[r]]
    return lambda r: [draw.text(xy, s, fill=c, font=font) for xy, c, s in rounds[r]]


def batch_ops(s: fbgfx.Surface, w: dict[str, dict[str, Any]]) -> dict[str, tuple[str, Op]]:
    """fbgfx's batch forms of the own-colour workloads (Pillow has none)."""
    out: dict[str, tuple[str, Op]] = {}
    for name, method in (
        ("1000 lines, own colour", s.lines),
        ("1000 short lines (+-40 px), own colour", s.lines),
        ("1000 rects 1..64, own colour", s.rectangles),
        ("200 circles r5..100, own colour", s.ellipses),
    ):
        rounds = [
            (np.array([xy for xy, _ in calls], np.float64), np.array([c for _, c in calls], np.uint8))
            for calls in w[name]["calls"]
        ]
        out[name + " (batch)"] = (name, lambda r, m=method, rounds=rounds: m(rounds[r][0], colors=rounds[r][1]))
    return out


def screen_ops(screen: fbgfx.Screen, font: Any, w: dict[str, dict[str, Any]]) -> dict[str, tuple[str, Op]]:
    """The own-colour workloads drawn on a Screen's frame, which is what programs draw
    on: the frame's surface keeps track of what each call changed for the next flip."""
    return {
        name + " (Screen frame)": (name, ops(screen.surface, font, w[name]))
        for name in (
            "1000 lines, own colour",
            "1000 short lines (+-40 px), own colour",
            "1000 rects 1..64, own colour",
            "480 gradient rows",
        )
    }


def flip_ms(screen: fbgfx.Screen, lines: list[tuple[Any, Any]], repeat: int) -> tuple[float, float]:
    """Median time of drawing ``lines`` on the screen's frame, and of that plus the flip
    that shows it (the changed rows copied to the framebuffer and to the RAM copy of the
    shown frame that ``discard()`` goes back to), in ms."""
    s = screen.surface

    def draw() -> None:
        for xy, c in lines:
            s.line(xy, fill=c)

    def frame() -> None:
        draw()
        screen.flip()

    return median(draw, repeat, warmup=1) * 1e3, median(frame, repeat, warmup=1) * 1e3


def _time(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _cpu_time(fn: Callable[[], Any]) -> float:
    t0 = time.thread_time()
    fn()
    return time.thread_time() - t0


def _compare(
    base: Op, op: Op, repeat: int, clock: Callable[[Callable[[], Any]], float] = _time
) -> tuple[float, float, float]:
    """Median Pillow time, fbgfx time and ratio of interleaved runs; run r draws round
    r + 1 of the workload (round 0 warms both up)."""
    op(0)
    base(0)
    tp, tf, ratios = [], [], []
    for r in range(1, repeat + 1):
        a = clock(functools.partial(base, r))
        b = clock(functools.partial(op, r))
        tp.append(a)
        tf.append(b)
        ratios.append(b / a)
    return statistics.median(tp), statistics.median(tf), statistics.median(ratios)


def _load() -> str:
    """The 1, 5 and 15 minute load averages: on a shared machine, beside every figure."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def memcpy_ms(width: int, height: int, repeat: int = 50) -> float:
    """Median time of a memcpy of one XRGB8888 frame, in ms."""
    a = np.ones((height, width), np.uint32)
    b = np.empty_like(a)
    return median(lambda: np.copyto(b, a), repeat) * 1e3


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="run only workloads whose name contains this")
    args = parser.parse_args(argv)
    w = workloads(args.repeat + 1)
    font = ImageFont.load_default()
    im = Image.new("RGB", (W, H))
    d = ImageDraw.Draw(im)
    memcpy = memcpy_ms(W, H)
    flips: dict[str, tuple[float, float]] = {}
    print(
        f"machine: memcpy of a {W}x{H} XRGB8888 frame {memcpy:.3f} ms; 1920x1080: {memcpy_ms(1920, 1080):.3f} ms; "
        f"load average {_load()}"
    )
    print(
        f"fbgfx.Surface vs Pillow ImageDraw on {W}x{H}, median of {args.repeat} interleaved runs "
        "(ratio = fbgfx / Pillow)"
    )
    print(f"{'workload':<56}{'format':<10}{'Pillow ms':>10}{'fbgfx ms':>10}{'ratio':>8}")
    for fmt in ("RGB565", "XRGB8888"):
        s = fbgfx.Surface(W, H, fmt)
        rows: list[tuple[str, Op, Op]] = [(name, ops(d, font, work), ops(s, font, work)) for name, work in w.items()]
        rows += [(label, ops(d, font, w[name]), op) for label, (name, op) in batch_ops(s, w).items()]
        with fbgfx.open(f"virtual:{W}x{H}:{fmt}:pan=0") as fb, fb.screen("copy") as screen:
            rows += [(label, ops(d, font, w[name]), op) for label, (name, op) in screen_ops(screen, font, w).items()]
            for label, base, op in rows:
                if args.only not in label:
                    continue
                tp, tf, ratio = _compare(base, op, args.repeat)
                print(f"{label:<56}{fmt:<10}{tp * 1e3:>10.2f}{tf * 1e3:>10.2f}{ratio:>8.2f}")
            if not args.only:
                flips[fmt] = flip_ms(screen, w["1000 lines, own colour"]["calls"][0], args.repeat)
    for fmt, (t_draw, t_frame) in flips.items():
        print(
            f"Screen frame of 1000 lines + flip, {fmt}: {t_frame:.2f} ms (drawing {t_draw:.2f} ms, "
            f"flip {t_frame - t_draw:.2f} ms = {(t_frame - t_draw) / memcpy:.1f}x memcpy of a {W}x{H} XRGB8888 frame)"
        )
    if not args.only:
        blit_table(args.repeat)
    if not args.only or args.only in "antialiased":
        smooth_table(args.repeat)
    print(f"\nload average at the end: {_load()}")


def smooth_shapes(seed: int = 3) -> dict[str, list[Any]]:
    """The antialiased workloads: float geometry (pixel-centre coordinates, as fbgfx
    takes them) and a fresh colour per shape."""
    rng = np.random.default_rng(seed)
    lines = [
        (*(float(v) for v in rng.uniform((0, 0, 0, 0), (W, H, W, H))), float(rng.uniform(1, 3))) for _ in range(1000)
    ]
    circles = [(float(rng.uniform(0, W)), float(rng.uniform(0, H)), float(rng.uniform(5, 100))) for _ in range(200)]
    polygons = []
    for _ in range(200):
        n = int(rng.integers(5, 8))
        cx, cy, r = rng.uniform(0, W), rng.uniform(0, H), rng.uniform(10, 80)
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        polygons.append([(float(cx + r * np.cos(a)), float(cy + r * np.sin(a))) for a in angles])
    return {"lines": lines, "circles": circles, "polygons": polygons, "colours": _fresh_colours(rng, 1000)}


def smooth_ops(kind: str, library: str, target: Any, shapes: dict[str, list[Any]]) -> Op:
    """One library drawing one workload: ``target`` is an fbgfx Surface, a skia Canvas
    or an aggdraw Draw (``library``: "fbgfx", "skia" or "aggdraw"). The same continuous
    shapes in each (Skia and AGG put pixel (i, j) at [i, i+1) x [j, j+1) too, so
    fbgfx's pixel-centre points are +0.5 there)."""
    lines, circles, polygons, colours = shapes["lines"], shapes["circles"], shapes["polygons"], shapes["colours"]
    if library == "fbgfx":
        s = target
        if kind == "lines":
            return lambda r: [s.line(v[:4], fill=c, width=v[4], antialias=True) for v, c in zip(lines, colours)]
        if kind == "circles":
            return lambda r: [s.circle(v[:2], v[2], fill=c, antialias=True) for v, c in zip(circles, colours)]
        return lambda r: [s.polygon(v, fill=c, antialias=True) for v, c in zip(polygons, colours)]
    if library == "aggdraw":
        import aggdraw

        d = target
        if kind == "lines":
            return lambda r: [
                d.line([v[0] + 0.5, v[1] + 0.5, v[2] + 0.5, v[3] + 0.5], aggdraw.Pen(c, v[4]))
                for v, c in zip(lines, colours)
            ]
        if kind == "circles":
            return lambda r: [
                d.ellipse((x + 0.5 - q, y + 0.5 - q, x + 0.5 + q, y + 0.5 + q), aggdraw.Brush(c))
                for (x, y, q), c in zip(circles, colours)
            ]
        return lambda r: [
            d.polygon([u + 0.5 for p in v for u in p], aggdraw.Brush(c)) for v, c in zip(polygons, colours)
        ]
    import skia

    canvas, paint = target, skia.Paint(AntiAlias=True)

    def skia_lines(r: int) -> None:
        paint.setStyle(skia.Paint.kStroke_Style)  # butt ends, Skia's default cap
        for v, c in zip(lines, colours):
            paint.setColor(skia.Color(*c))
            paint.setStrokeWidth(v[4])
            canvas.drawLine(v[0] + 0.5, v[1] + 0.5, v[2] + 0.5, v[3] + 0.5, paint)

    def skia_circles(r: int) -> None:
        paint.setStyle(skia.Paint.kFill_Style)
        for (x, y, q), c in zip(circles, colours):
            paint.setColor(skia.Color(*c))
            canvas.drawCircle(x + 0.5, y + 0.5, q, paint)

    def skia_polygons(r: int) -> None:
        paint.setStyle(skia.Paint.kFill_Style)
        for v, c in zip(polygons, colours):
            paint.setColor(skia.Color(*c))
            path = skia.Path.Polygon([skia.Point(x + 0.5, y + 0.5) for x, y in v], True, skia.PathFillType.kEvenOdd)
            canvas.drawPath(path, paint)

    return {"lines": skia_lines, "circles": skia_circles, "polygons": skia_polygons}[kind]


def smooth_table(repeat: int) -> None:
    """antialias=True against Skia (skia-python) and AGG (aggdraw) on the same shapes."""
    shapes = smooth_shapes()
    try:
        import skia
    except (ImportError, OSError):  # not installed, or its libGL/libEGL missing
        skia = None
    try:
        import aggdraw
    except ImportError:
        aggdraw = None
    print(
        f"\nantialias=True on {W}x{H}, median CPU time of the drawing thread over {repeat} interleaved runs "
        "(ratio = fbgfx / Skia)"
    )
    if skia is None:
        print("skia-python is not installed: pip install -e '.[bench]' for the Skia column")
    print(f"{'workload':<56}{'format':<10}{'Skia ms':>10}{'aggdraw ms':>11}{'fbgfx ms':>10}{'ratio':>8}")
    labels = {
        "lines": "1000 AA lines, width 1-3",
        "circles": "200 AA circles r5..100",
        "polygons": "200 AA polygons, 5-7 points",
    }
    for fmt, skia_type in (("XRGB8888", "kBGRA_8888_ColorType"), ("RGB565", "kRGB_565_ColorType")):
        surface = fbgfx.Surface(W, H, fmt)
        canvas = None
        if skia is not None:
            pixels = np.zeros(surface.array.shape, surface.array.dtype)
            info = skia.ImageInfo.Make(W, H, getattr(skia, skia_type), skia.kOpaque_AlphaType)
            sk_surface = skia.Surface.MakeRasterDirect(info, pixels, surface.array.strides[0])
            canvas = sk_surface.getCanvas()
        agg = aggdraw.Draw(Image.new("RGB", (W, H))) if aggdraw is not None else None
        for kind, label in labels.items():
            ours = smooth_ops(kind, "fbgfx", surface, shapes)
            agg_ms = "-"
            if agg is not None:
                agg_op = smooth_ops(kind, "aggdraw", agg, shapes)
                agg_ms = f"{_compare(agg_op, ours, repeat, _cpu_time)[0] * 1e3:.2f}"
            if canvas is not None:
                skia_op = smooth_ops(kind, "skia", canvas, shapes)
                ts, tf, ratio = _compare(skia_op, ours, repeat, _cpu_time)
                print(f"{label:<56}{fmt:<10}{ts * 1e3:>10.2f}{agg_ms:>11}{tf * 1e3:>10.2f}{ratio:>8.2f}")
            else:
                tf = median(lambda op=ours: op(0), repeat, warmup=1)
                print(f"{label:<56}{fmt:<10}{'-':>10}{agg_ms:>11}{tf * 1e3:>10.2f}{'-':>8}")


def blit_table(repeat: int) -> None:
    """Surface.blit of a 1920x1080 frame, as a ratio to a memcpy of the destination frame."""
    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (1080, 1920, 3), dtype=np.uint8)
    image = Image.fromarray(rgb)
    print(f"\nSurface.blit of 1920x1080, median of {repeat} runs (ratio = blit / memcpy of the destination frame)")
    print(f"{'source':<26}{'format':<10}{'memcpy ms':>10}{'blit ms':>10}{'ratio':>8}")
    for fmt, source, label in (
        ("XRGB8888", rgb, "RGB uint8 array"),
        ("RGB565", rgb, "RGB uint8 array"),
        ("XRGB8888", image, "PIL RGB image"),
    ):
        s = fbgfx.Surface(1920, 1080, fmt)
        spare = np.empty_like(s.array)
        tb, to, ratio = _compare(
            lambda _, s=s, spare=spare: np.copyto(spare, s.array), lambda _, s=s, src=source: s.blit(src), repeat
        )
        print(f"{label:<26}{fmt:<10}{tb * 1e3:>10.2f}{to * 1e3:>10.2f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
