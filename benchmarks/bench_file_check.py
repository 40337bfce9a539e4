"""What noticing a truncated framebuffer file costs: one fstat where each frame starts.

A Screen on a ``file=`` device checks the file's size before a frame touches video
memory (``Screen.present``/``flip``/``frame``), so that a file another program truncated
is a FramebufferError instead of SIGBUS. This prints, from one run (medians):

- the check alone (``fb.check()``: one ``fstat``), and against present() of an 800x480
  and a 1920x1080 picture into XRGB8888 on a framebuffer file, with and without it;
- a memcpy of the destination frame beside them, for the machine's memory speed.

Run: python benchmarks/bench_file_check.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
from _timing import median

import fbgfx


def measure(w: int, h: int, tmp: str, repeats: int) -> str:
    """One size's line: present() with and without the check, the check, a memcpy."""
    path = os.path.join(tmp, f"fb{w}.raw")
    with fbgfx.open(f"virtual:{w}x{h}:XRGB8888:file={path}") as fb:
        screen = fb.screen(buffering="copy", console=False)
        rng = np.random.default_rng(1)
        frames = [rng.integers(0, 256, (h, w, 3), np.uint8) for _ in range(4)]  # new picture each call
        n = [0]

        def present() -> None:
            n[0] += 1
            screen.present(frames[n[0] % 4])

        with_check = median(present, repeats)
        check = median(fb.check, repeats * 20)
        device = fb.device
        real = device.check
        device.check = lambda: None  # type: ignore[method-assign]
        without = median(present, repeats)
        device.check = real  # type: ignore[method-assign]
        src = np.empty(h * w * 4, np.uint8)
        dst = np.empty_like(src)
        memcpy = median(lambda: np.copyto(dst, src), repeats)
        screen.close()
    return (
        f"{w}x{h} XRGB8888 on a file: present {with_check * 1e3:.3f} ms with the check, "
        f"{without * 1e3:.3f} ms without; the check alone {check * 1e6:.2f} us "
        f"= {check / with_check:.2%} of a present; memcpy of the frame {memcpy * 1e3:.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in ((800, 480), (1920, 1080)):
            print(measure(w, h, tmp, args.repeats))


if __name__ == "__main__":
    main()
