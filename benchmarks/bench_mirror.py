"""Mirror speed: 1920x1080 XRGB8888 mirrored onto a 320x240 RGB565 panel (HDMI to an SPI panel).

Prints, from one run (medians of several repeats), beside a memcpy of one 1080p
XRGB8888 frame measured in the same run:

- a mirrored frame when the whole source changed (compare, box-scale 6x4.5, convert,
  write), CPU and wall time;
- a mirrored frame when a 64x64 square moved (only its tiles are scaled and written);
- a look at a still source (the comparison alone: what an idle mirror costs);
- CPU time is the figure (wall time on a shared machine includes waiting); the frames
  a second those allow, against the SPI bus: 320x240 at 16 bits a pixel is
  1.23 Mbit a frame, so 60 fps needs 73.7 MHz, and a panel clocked at 32 MHz (a common
  ili9341 setting) can show at most 26 fps whatever the mirror does.

The source is a 1080p array in memory looked at as :class:`ScanoutSource` looks at a
mapped DRM buffer (whose ``GETCRTC``/``GETFB2`` per look cost microseconds); the
destination an in-process virtual display.

Run: python benchmarks/bench_mirror.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _timing import median

import fbgfx
from fbgfx.kiosk._sources import Picture
from fbgfx.kiosk.mirror import Mirror

SW, SH = 1920, 1080
DW, DH = 320, 240
SPI_BITS = DW * DH * 16


class ArraySource:
    """A source showing an XRGB8888 array (a mapped scanout buffer, without the ioctls)."""

    name = "array"

    def __init__(self, pixels: np.ndarray) -> None:
        self.pixels = pixels
        self.format = fbgfx.PixelFormat.from_name("XRGB8888")

    def look(self) -> Picture:
        return Picture(self.format, self.pixels, None, SW, SH, 60.0)

    def close(self) -> None:
        pass


def timed_steps(m: Mirror, change, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of a mirror step after ``change()`` (not timed)."""
    walls, cpus = [], []
    for i in range(repeats + 2):
        change(i)
        w0, c0 = time.perf_counter(), time.thread_time()
        m.step()
        w1, c1 = time.perf_counter(), time.thread_time()
        if i >= 2:
            walls.append(w1 - w0)
            cpus.append(c1 - c0)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 1 << 24, (SH, SW), np.uint32) for _ in range(2)]
    copy_dst = np.empty_like(frames[0])
    memcpy = median(lambda: np.copyto(copy_dst, frames[0]), args.repeats)

    pixels = frames[1].copy()
    source = ArraySource(pixels)
    with fbgfx.open(f"virtual:{DW}x{DH}:RGB565") as dest, Mirror(source, dest) as m:
        m.step()

        def full(i: int) -> None:
            pixels[:] = frames[i % 2]

        def square(i: int) -> None:
            x, y = 64 + (i * 96) % (SW - 256), 64 + (i * 40) % (SH - 256)
            pixels[y : y + 64, x : x + 64] ^= np.uint32(0x00FFFFFF)

        full_wall, full_cpu = timed_steps(m, full, args.repeats)
        small_wall, small_cpu = timed_steps(m, square, args.repeats)
        still_wall, still_cpu = timed_steps(m, lambda i: None, args.repeats)
        filters = "/".join(m.stats.filters)

    ms = 1000.0
    print(f"mirror {SW}x{SH} XRGB8888 -> {DW}x{DH} RGB565 (scaling {filters}), median of {args.repeats}")
    print(f"  memcpy of one {SW}x{SH} XRGB8888 frame: {memcpy * ms:.3f} ms")
    rows = [
        ("whole picture changed", full_wall, full_cpu),
        ("64x64 square moved", small_wall, small_cpu),
        ("still (compare only)", still_wall, still_cpu),
    ]
    for name, wall, cpu in rows:
        print(f"  {name:24s} {cpu * ms:7.3f} ms CPU = {cpu / memcpy:6.1f}x memcpy   ({wall * ms:7.3f} ms wall)")
    for name, _, cpu in rows[:2]:
        print(f"  {name:24s} one core mirrors up to {1 / cpu:5.0f} fps")
    mbit = SPI_BITS / 1e6
    print(f"  SPI bus: {DW}x{DH}x16 bpp = {mbit:.2f} Mbit a frame; 60 fps needs {mbit * 60:.1f} MHz")
    for mhz in (32, 48, 62.5):
        print(f"    at {mhz:5} MHz the panel shows at most {mhz * 1e6 / SPI_BITS:5.1f} fps")
    bus_fps = 60.0
    print(
        f"  at 60 fps (a 73.7 MHz panel's limit) whole-picture mirroring takes {full_cpu * bus_fps:.0%} of one core, "
        f"a moving 64x64 square {small_cpu * bus_fps:.1%}, a still picture {still_cpu * bus_fps:.1%}"
    )


if __name__ == "__main__":
    main()
