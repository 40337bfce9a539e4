"""Pixel conversion and blending speed, as ratios to a memcpy of the destination frame.

Run from the repository root after ``pip install -e .``::

    python benchmarks/bench_convert.py [--repeat N] [--size WxH]

Every figure is the median over ``--repeat`` hot runs; each run times the memcpy and
the operation back to back and the ratio is taken per run, so a busy machine skews
both sides alike. Targets (issue 3): RGB array -> XRGB8888 <= 2x, -> RGB565 <= 3x,
PIL RGB image -> XRGB8888 <= 6x a memcpy of the destination frame.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from PIL import Image

from fbgfx import FORMATS, convert


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(op, baseline, repeat: int):
    """Median time of ``op`` and median ratio op/baseline over interleaved runs."""
    op()
    baseline()
    times, ratios = [], []
    for _ in range(repeat):
        b = _time(baseline)
        t = _time(op)
        times.append(t)
        ratios.append(t / b)
    return statistics.median(times), statistics.median(ratios)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--size", default="1920x1080")
    args = parser.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    rgba = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    mask = rng.integers(0, 256, (h, w), dtype=np.uint8)
    image = Image.fromarray(rgb)

    frames = {}
    copies = {}
    for name in ("XRGB8888", "RGB565"):
        fmt = FORMATS[name]
        dst = np.zeros(fmt.array_shape(h, w), fmt.dtype)
        other = np.ones_like(dst)
        frames[name] = dst
        copies[name] = lambda dst=dst, other=other: np.copyto(dst, other)

    # a view of "video memory": rows line_length apart, wider than the picture
    wide = np.zeros((h, w + 64), np.uint32)
    strided = wide[:, 32 : 32 + w]

    xrgb, r565 = FORMATS["XRGB8888"], FORMATS["RGB565"]
    cases = [
        ("RGB array -> XRGB8888", "XRGB8888", lambda: convert.to_native(rgb, xrgb, frames["XRGB8888"]), 2.0),
        ("RGB array -> RGB565", "RGB565", lambda: convert.to_native(rgb, r565, frames["RGB565"]), 3.0),
        (
            "PIL RGB image -> XRGB8888",
            "XRGB8888",
            lambda: convert.to_native(convert.as_rgb(image), xrgb, frames["XRGB8888"]),
            6.0,
        ),
        (
            "PIL RGB image -> RGB565",
            "RGB565",
            lambda: convert.to_native(convert.as_rgb(image), r565, frames["RGB565"]),
            None,
        ),
        ("RGB array -> XRGB8888, strided rows", "XRGB8888", lambda: convert.to_native(rgb, xrgb, strided), None),
        ("RGBA blend onto XRGB8888", "XRGB8888", lambda: convert.to_native(rgba, xrgb, frames["XRGB8888"]), None),
        ("RGBA blend onto RGB565", "RGB565", lambda: convert.to_native(rgba, r565, frames["RGB565"]), None),
        (
            "blend_mask onto XRGB8888",
            "XRGB8888",
            lambda: convert.blend_mask(frames["XRGB8888"], mask, (250, 120, 30, 200), xrgb),
            None,
        ),
        (
            "blend_mask onto RGB565",
            "RGB565",
            lambda: convert.blend_mask(frames["RGB565"], mask, (250, 120, 30, 200), r565),
            None,
        ),
        ("XRGB8888 -> RGB array", "XRGB8888", lambda: convert.from_native(frames["XRGB8888"], xrgb), None),
        ("RGB565 -> RGB array", "RGB565", lambda: convert.from_native(frames["RGB565"], r565), None),
        ("fill XRGB8888", "XRGB8888", lambda: convert.fill(frames["XRGB8888"], 0x123456), None),
        ("fill RGB565", "RGB565", lambda: convert.fill(frames["RGB565"], 0x1234), None),
    ]
    numpy_cases = [
        ("NumPy: RGB array -> XRGB8888", "XRGB8888", lambda: np.copyto(frames["XRGB8888"], xrgb.pack(rgb))),
        ("NumPy: RGB array -> RGB565", "RGB565", lambda: np.copyto(frames["RGB565"], r565.pack(rgb))),
        (
            "NumPy: RGBA blend onto XRGB8888",
            "XRGB8888",
            lambda: convert._blend_np(rgba[..., :3], rgba[..., 3], xrgb, frames["XRGB8888"], None),
        ),
    ]

    print(f"fbgfx pixel conversion, {w}x{h}, median of {args.repeat} hot runs (C kernels: {convert._C})")
    for name in ("XRGB8888", "RGB565"):
        t = statistics.median(_time(copies[name]) for _ in range(args.repeat))
        print(f"  memcpy of a {name} frame: {t * 1e3:.3f} ms")
    print(f"{'operation':40s} {'ms':>9s} {'x memcpy':>9s} {'target':>7s}")
    for label, frame, op, target in cases + [c + (None,) for c in numpy_cases]:
        t, ratio = measure(op, copies[frame], args.repeat if not label.startswith("NumPy") else 5)
        verdict = "" if target is None else (f"<= {target:g}" + (" ok" if ratio <= target else " MISS"))
        print(f"{label:40s} {t * 1e3:9.3f} {ratio:9.2f} {verdict:>7s}")


if __name__ == "__main__":
    main()
