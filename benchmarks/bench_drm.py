"""drm: speed: present() into a dumb buffer, the cost of queueing a flip, flips per second.

Prints, from one run (medians of several repeats) against a memcpy of the destination
frame measured alongside:

- ``screen.present()`` of an RGB uint8 array (a new picture each time, from a pool of
  four) into the XRGB8888 dumb buffer not on screen, then the page flip queued
  (target: at most 2x memcpy);
- the time from the end of a ``screen.frame()`` block (one 32x32 rectangle drawn) to
  the flip being queued, with the previous flip's event already in (target: 0.2 ms);
- flips per second of ``frame()`` after ``frame()`` with a small change, each waiting
  for the previous flip's event: the display's refresh on real hardware, the driver's
  pace under qemu.

On a real card (``--device drm:`` or ``drm:/dev/dri/card0``; run as a user who may
open it, on a VT, with no desktop holding the display) it measures the driver; with
``--device fake`` (the default when there is no card) it uses the in-memory card of
tests/support/fake_drm.py, which measures fbgfx's own share: the memory is plain RAM.

Run: python benchmarks/bench_drm.py [--device SPEC] [--size WxH] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from _timing import median

import fbgfx
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, find_display


def open_device(spec: str, size: tuple[int, int]) -> Framebuffer:
    if spec != "fake":
        return fbgfx.open(spec)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from fake_drm import FakeCard, make_mode

    card = FakeCard(modes=(make_mode(*size, preferred=True),))
    return Framebuffer(DrmDevice(card, "drm:fake", console=False), "drm:fake")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None, help="drm:... or 'fake' (default: a real card if any)")
    parser.add_argument("--size", default="1920x1080", help="mode for the fake card (default 1920x1080)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long to count flips per second")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    spec = args.device or ("drm:" if find_display() else "fake")

    with open_device(spec, size) as fb:  # type: ignore[arg-type]
        info = fb.drm
        assert info is not None
        w, h = fb.width, fb.height
        print(f"{spec}: {info.driver}, {w}x{h} {fb.format.name}, {info.pages} buffers, connector {info.connector}")
        frame_bytes = fb.stride * h
        src = np.empty(frame_bytes, np.uint8)
        dst = np.empty(frame_bytes, np.uint8)
        src[:] = 1
        t_memcpy = median(lambda: np.copyto(dst, src), args.repeats)
        print(f"memcpy of one {w}x{h} frame ({frame_bytes / 1e6:.1f} MB): {t_memcpy * 1e3:.3f} ms")

        rng = np.random.default_rng(1)
        pool = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(4)]
        with fb.screen(console=False) as screen:
            n = [0]

            def present() -> None:
                n[0] += 1
                screen.present(pool[n[0] % 4])

            t_present = median(present, args.repeats)
            print(
                f"present() RGB -> {fb.format.name} ({screen.buffering}): {t_present * 1e3:.3f} ms "
                f"= {t_present / t_memcpy:.2f}x memcpy (target <= 2x)"
            )

            colors = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
            queued: list[float] = []
            for i in range(args.repeats + 2):
                fb.wait_flip()  # the previous flip is done: time fbgfx's part only
                with screen.frame() as s:
                    s.rectangle((i % 64, 10, i % 64 + 31, 41), fill=colors[i % 3])
                    t0 = time.perf_counter()
                queued.append(time.perf_counter() - t0)
            t_queue = statistics.median(queued[2:])
            print(f"frame() exit to flip queued (32x32 change): {t_queue * 1e3:.3f} ms (target <= 0.2 ms)")

            flips, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < args.seconds:
                with screen.frame() as s:
                    s.rectangle((flips % 64, 50, flips % 64 + 31, 81), fill=colors[flips % 3])
                flips += 1
            fb.wait_flip()
            elapsed = time.perf_counter() - t0
            print(f"flips per second (frame() after frame(), each after the last flip's event): {flips / elapsed:.1f}")
        after = fb.drm
        assert after is not None
        print(f"flip events read: {after.flip_events} of {after.flips} flips")


if __name__ == "__main__":
    main()
