"""Drawing speed of fbgfx.Surface against Pillow's ImageDraw doing the same work.

Run from the repository root after ``pip install -e .``::

    python benchmarks/bench_draw.py [--repeat N]

On 800x480 RGB565 and XRGB8888 surfaces, each workload is drawn with the same calls
(same coordinates, same colours) by fbgfx and by ``ImageDraw`` on an RGB image of the
same size. Each repeat times Pillow and fbgfx back to back and takes their ratio; the
table shows the median ratio (fbgfx time / Pillow time: below 1.0 is faster than
Pillow) and the median times. Target (issue 3): every ratio <= 1.0, aim 0.5.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import fbgfx

W, H = 800, 480


def workloads(seed: int = 1):
    rng = np.random.default_rng(seed)
    colours = [tuple(int(c) for c in rng.integers(0, 256, 3)) for _ in range(16)]
    lines = [(tuple(int(v) for v in (rng.integers(0, W), rng.integers(0, H), rng.integers(0, W), rng.integers(0, H))),
              colours[i % 16]) for i in range(1000)]
    rects = []
    for i in range(1000):
        w, h = (int(v) for v in rng.integers(1, 65, 2))
        x, y = int(rng.integers(0, W - w)), int(rng.integers(0, H - h))
        rects.append(((x, y, x + w - 1, y + h - 1), colours[i % 16]))
    circles = []
    for i in range(200):
        r = int(rng.integers(5, 101))
        x, y = int(rng.integers(0, W)), int(rng.integers(0, H))
        circles.append(((x - r, y - r, x + r, y + r), colours[i % 16]))
    texts = [((int(rng.integers(0, W - 40)), int(rng.integers(0, H - 12))), colours[i % 16]) for i in range(100)]
    return {"lines": lines, "rects": rects, "circles": circles, "texts": texts}


def pillow_ops(d: ImageDraw.ImageDraw, font, w):
    return {
        "lines": lambda: [d.line(xy, fill=c) for xy, c in w["lines"]],
        "rects": lambda: [d.rectangle(xy, fill=c) for xy, c in w["rects"]],
        "circles": lambda: [d.ellipse(xy, fill=c) for xy, c in w["circles"]],
        "texts": lambda: [d.text(xy, "Hello", fill=c, font=font) for xy, c in w["texts"]],
    }


def fbgfx_ops(s: fbgfx.Surface, font, w):
    line_xy = np.array([xy for xy, _ in w["lines"]], np.float64)
    line_c = np.array([c for _, c in w["lines"]], np.uint8)
    rect_xy = np.array([xy for xy, _ in w["rects"]], np.float64)
    rect_c = np.array([c for _, c in w["rects"]], np.uint8)
    circ_xy = np.array([xy for xy, _ in w["circles"]], np.float64)
    circ_c = np.array([c for _, c in w["circles"]], np.uint8)
    return {
        "lines": lambda: [s.line(xy, fill=c) for xy, c in w["lines"]],
        "rects": lambda: [s.rectangle(xy, fill=c) for xy, c in w["rects"]],
        "circles": lambda: [s.ellipse(xy, fill=c) for xy, c in w["circles"]],
        "texts": lambda: [s.text(xy, "Hello", fill=c, font=font) for xy, c in w["texts"]],
        "lines (batch)": lambda: s.lines(line_xy, colors=line_c),
        "rects (batch)": lambda: s.rectangles(rect_xy, colors=rect_c),
        "circles (batch)": lambda: s.ellipses(circ_xy, colors=circ_c),
    }


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    w = workloads()
    font = ImageFont.load_default()
    im = Image.new("RGB", (W, H))
    pil = pillow_ops(ImageDraw.Draw(im), font, w)
    print(f"fbgfx.Surface vs Pillow ImageDraw on {W}x{H}, median of {args.repeat} runs (ratio = fbgfx / Pillow)")
    print(f"{'workload':<36}{'format':<10}{'Pillow ms':>10}{'fbgfx ms':>10}{'ratio':>8}")
    for fmt in ("RGB565", "XRGB8888"):
        s = fbgfx.Surface(W, H, fmt)
        ours = fbgfx_ops(s, font, w)
        for name, op in ours.items():
            base = pil[name.split(" ")[0]]
            op()
            base()
            tp, tf, ratios = [], [], []
            for _ in range(args.repeat):
                a = _time(base)
                b = _time(op)
                tp.append(a)
                tf.append(b)
                ratios.append(b / a)
            label = {"lines": "1000 random lines", "rects": "1000 filled rects 1..64",
                     "circles": "200 filled circles r5..100", "texts": "100 texts 'Hello'"}[name.split(" ")[0]]
            if "batch" in name:
                label += " (batch)"
            print(f"{label:<36}{fmt:<10}{statistics.median(tp) * 1e3:>10.2f}{statistics.median(tf) * 1e3:>10.2f}"
                  f"{statistics.median(ratios):>8.2f}")
    blit_table(args.repeat)


def blit_table(repeat: int) -> None:
    """Surface.blit of a 1920x1080 frame, as a ratio to a memcpy of the destination frame."""
    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (1080, 1920, 3), dtype=np.uint8)
    image = Image.fromarray(rgb)
    print(f"\nSurface.blit of 1920x1080, median of {repeat} runs (ratio = blit / memcpy of the destination frame)")
    print(f"{'source':<26}{'format':<10}{'memcpy ms':>10}{'blit ms':>10}{'ratio':>8}")
    for fmt, source, label in (("XRGB8888", rgb, "RGB uint8 array"), ("RGB565", rgb, "RGB uint8 array"),
                               ("XRGB8888", image, "PIL RGB image")):
        s = fbgfx.Surface(1920, 1080, fmt)
        spare = np.empty_like(s.array)
        op = lambda: s.blit(source)  # noqa: E731
        base = lambda: np.copyto(spare, s.array)  # noqa: E731
        op()
        base()
        tb, to, ratios = [], [], []
        for _ in range(repeat):
            a = _time(base)
            b = _time(op)
            tb.append(a)
            to.append(b)
            ratios.append(b / a)
        print(f"{label:<26}{fmt:<10}{statistics.median(tb) * 1e3:>10.2f}{statistics.median(to) * 1e3:>10.2f}"
              f"{statistics.median(ratios):>8.2f}")


if __name__ == "__main__":
    main()
