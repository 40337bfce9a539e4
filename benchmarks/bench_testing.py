"""What the pytest plugin and frame counting cost runs that do not use them.

1. Loading the plugin: every pytest run where fbgfx is installed imports ``pytest_fbgfx``.
   Timed in-process (the import alone, after pytest) and as whole ``pytest --co`` runs of
   an empty test file with the plugin and with ``-p no:fbgfx``, alternated.
2. Counting frames: a Screen on a file-backed virtual display bumps ``PATH.frames`` on
   every flip. Timed as a flip after one small rectangle (a fresh colour each frame),
   with the counter and with it switched off, beside the machine's memcpy of a frame.

Run: ``python benchmarks/bench_testing.py``. Ratios come from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _timing import median

import fbgfx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def memcpy_ms(width: int, height: int) -> float:
    src = np.ones((height, width), np.uint32)
    dst = np.empty_like(src)
    return median(lambda: np.copyto(dst, src), 50) * 1000


def import_cost_ms() -> float:
    """Median ms of ``import pytest_fbgfx`` in fresh interpreters that imported pytest already."""
    code = "import time, pytest\nt = time.perf_counter()\nimport pytest_fbgfx\nprint(time.perf_counter() - t)\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    runs = [float(subprocess.check_output([sys.executable, "-c", code], env=env, text=True)) for _ in range(7)]
    return statistics.median(runs) * 1000


def pytest_runs_s(folder: str) -> tuple[float, float]:
    """Median seconds of ``pytest --co`` with the plugin loaded and turned off, runs alternated."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    base = [sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:cacheprovider", folder]
    # Loaded by name here, so that the figure holds for a checkout without the entry point too.
    on, off = [], []
    for _ in range(7):
        for args, times in ((["-p", "pytest_fbgfx"], on), (["-p", "no:pytest_fbgfx", "-p", "no:fbgfx"], off)):
            t = time.perf_counter()
            subprocess.run(base + args, env=env, cwd=folder, capture_output=True, check=False)
            times.append(time.perf_counter() - t)
    return statistics.median(on), statistics.median(off)


def flip_ms(width: int, height: int, counting: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:{width}x{height}:XRGB8888:file={tmp}/fb.raw"
        with fbgfx.open(spec) as fb, fb.screen(buffering="copy") as screen:
            if not counting:
                screen._frames = None  # what a display without a counter does
            n = [0]

            def frame() -> None:
                n[0] += 1
                with screen.frame() as s:
                    s.rectangle((10, 10, 40, 40), fill=(n[0] % 256, 80, 160))

            return median(frame, 300) * 1000


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print(
        f"machine: memcpy of a 320x240 XRGB8888 frame {memcpy_ms(320, 240):.4f} ms; "
        f"1920x1080: {memcpy_ms(1920, 1080):.3f} ms"
    )
    print(f"import pytest_fbgfx (after pytest): {import_cost_ms():.3f} ms")
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "test_empty.py"), "w") as f:
            f.write("def test_nothing():\n    pass\n")
        on, off = pytest_runs_s(folder)
    print(
        f"pytest --co of one test: {on * 1000:.0f} ms with the plugin, {off * 1000:.0f} ms without "
        f"(ratio {on / off:.3f}; the spread of runs is larger than the difference)"
    )
    for w, h in ((320, 240), (1920, 1080)):
        with_, without = flip_ms(w, h, True), flip_ms(w, h, False)
        print(
            f"{w}x{h} file-backed frame (one 31x31 rectangle, copy buffering): {with_:.4f} ms counted, "
            f"{without:.4f} ms not: +{(with_ - without) * 1000:.1f} us a frame"
        )


if __name__ == "__main__":
    main()
