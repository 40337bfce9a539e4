#!/usr/bin/env python3
"""How well `fbgfx serve` shows a live display in a browser (headless Chromium, Selenium).

1. An 800x480 XRGB8888 animation (a dashboard: gauges, moving bars and balls over a
   still background, a counter) drawn at 60 fps on a file-backed virtual display by
   this process, served by `fbgfx serve --fps 30` in another process pinned to one
   core: the updates a second the page draws (target >= 30), the server's CPU use
   (a fraction of one core), and the flip-to-canvas latency (target <= 50 ms): the
   time from the end of a frame() block here to the page's draw of the picture that
   frame carries (a frame number coded in a corner pixel, read from the canvas).
2. Bytes on the wire: a 32x32 change as a fraction of a whole-picture update (target
   <= 5%), on the animation's picture and on noise.
3. The cost of finding the changed rectangles: one grab (copy, tile compare) of an
   unchanged display and of a 32x32 change, against a memcpy of the frame.

    python benchmarks/bench_serve.py [--seconds 6] [--fps 30]

Needs fbgfx[serve], selenium, and Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))  # serve_helpers: the tests' headless Chromium

from _timing import median  # noqa: E402
from serve_helpers import chromium  # noqa: E402

import fbgfx  # noqa: E402
from fbgfx.serve._stream import FramebufferSource, Stream  # noqa: E402

W, H = 800, 480

# Records, for every update the page draws, when (epoch ms) and the frame number the
# animation coded into pixel (0, 0): red + 256 * green.
HOOK = """
const c = document.getElementById("display");
window.fbgfxLog = [];
c.addEventListener("fbgfx-frame", () => {
  const t = performance.timeOrigin + performance.now();
  const p = c.getContext("2d").getImageData(0, 0, 1, 1).data;
  window.fbgfxLog.push([t, p[0] + 256 * p[1]]);
});
"""


def memcpy_ms(shape, dtype):
    src = np.ones(shape, dtype)
    dst = np.empty_like(src)
    return median(lambda: np.copyto(dst, src), 50) * 1000


def median_ms(fn, repeats=30):
    return median(fn, repeats, warmup=1) * 1000


def draw_dashboard(s, i, font):
    """One frame of the animation: gauges, bars and balls that move, a frame counter."""
    t = i / 60
    s.clear((18, 22, 30))
    for k in range(4):
        x0 = 20 + k * 195
        s.rectangle((x0, 20, x0 + 180, 200), fill=(30, 36, 48), outline=(70, 80, 100))
        angle = math.radians(200 + 140 * (0.5 + 0.5 * math.sin(t * (1 + k * 0.3))))
        cx, cy = x0 + 90, 130
        s.ellipse((cx - 70, cy - 70, cx + 70, cy + 70), outline=(90, 110, 140), width=3)
        s.line((cx, cy, cx + 60 * math.cos(angle), cy + 60 * math.sin(angle)), fill=(255, 190, 40), width=4)
        s.text((x0 + 12, 28), f"{50 + 49 * math.sin(t + k):5.1f}", fill="white", font=font)
    for k in range(12):
        h = int(110 * (0.5 + 0.5 * math.sin(t * 2 + k / 2)))
        s.rectangle((20 + k * 64, 460 - h, 70 + k * 64, 460), fill=(40, 120 + k * 10, 200))
    for k in range(5):
        bx = int(400 + 360 * math.sin(t * (0.7 + k * 0.2) + k))
        by = int(280 + 40 * math.cos(t * (1.1 + k * 0.3)))
        s.ellipse((bx - 14, by - 14, bx + 14, by + 14), fill=(220, 60 + k * 30, 80))
    s.rectangle((0, 0, 3, 3), fill=(i & 255, (i >> 8) & 255, 0))  # the frame number


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def live(seconds, fps):
    font = fbgfx.font(size=22)
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:{W}x{H}:XRGB8888:file={tmp}/fb"
        fb = fbgfx.open(spec)
        screen = fb.screen()
        with screen.frame() as s:
            draw_dashboard(s, 0, font)
        server = subprocess.Popen(
            [sys.executable, "-m", "fbgfx", "serve", "-d", spec, "--port", "0", "--fps", str(fps)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=ROOT),
        )
        os.sched_setaffinity(server.pid, {0})  # the server gets one core
        driver = profile = None
        try:
            url = re.search(r"(http://\S+)", server.stdout.readline()).group(1)
            driver, profile = chromium(window="1000,700")
            driver.get(url)
            deadline = time.monotonic() + 20
            while driver.execute_script("return document.getElementById('display').dataset.frames") == "0":
                if time.monotonic() > deadline:
                    raise SystemExit("the page drew nothing")
                time.sleep(0.05)
            driver.execute_script(HOOK)
            flips = {}
            cpu0, t_start = cpu_seconds(server.pid), time.monotonic()
            i, period = 1, 1 / 60
            next_at = time.monotonic()
            while time.monotonic() - t_start < seconds:
                with screen.frame() as s:
                    draw_dashboard(s, i, font)
                flips[i & 0xFFFF] = time.time() * 1000
                i += 1
                next_at += period
                pause = next_at - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
            wall = time.monotonic() - t_start
            cpu = cpu_seconds(server.pid) - cpu0
            drawn = i - 1
            time.sleep(0.3)
            log = driver.execute_script("return window.fbgfxLog")
        finally:
            if driver is not None:
                driver.quit()
                shutil.rmtree(profile, ignore_errors=True)
            server.terminate()
            server.wait(30)
            fb.close()
    latencies = [t - flips[n] for t, n in log if n in flips]
    updates = [t for t, n in log if n in flips]
    span = (updates[-1] - updates[0]) / 1000 if len(updates) > 1 else float("nan")
    gaps = [b - a for a, b in zip(updates, updates[1:])]
    return {
        "interval_median": statistics.median(gaps),
        "interval_max": max(gaps),
        "drawn_fps": drawn / wall,
        "updates_per_s": (len(updates) - 1) / span,
        "cpu": cpu / wall,
        "latency_median": statistics.median(latencies),
        "latency_p95": sorted(latencies)[int(0.95 * (len(latencies) - 1))],
    }


def bytes_ratio():
    out = []
    for label, fill in (("dashboard", "dash"), ("noise", "noise")):
        fb = fbgfx.open(f"virtual:{W}x{H}:XRGB8888")
        if fill == "dash":
            with fb.screen().frame() as s:
                draw_dashboard(s, 30, fbgfx.font(size=22))
        else:
            fb.pixels[:] = np.random.default_rng(0).integers(0, 1 << 24, fb.pixels.shape, dtype=np.uint32)
        stream = Stream(FramebufferSource(fb))
        stream.grab()
        frame, full = stream.update_for(0, 0)
        fb.pixels[200:232, 300:332] ^= 0x00FFFFFF
        stream.grab()
        _, small = stream.update_for(frame.version, frame.epoch)
        out.append((label, len(full), len(small)))
        fb.close()
    return out


def grab_costs(width, height):
    fb = fbgfx.open(f"virtual:{width}x{height}:XRGB8888")
    fb.pixels[:] = np.random.default_rng(1).integers(0, 1 << 24, fb.pixels.shape, dtype=np.uint32)
    stream = Stream(FramebufferSource(fb))
    stream.grab()
    unchanged = median_ms(stream.grab)

    def small():
        fb.pixels[100:132, 200:232] ^= 0x00FFFFFF
        stream.grab()

    changed = median_ms(small)
    copy = memcpy_ms((height, width), np.uint32)
    fb.close()
    return unchanged, changed, copy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="how long the animation runs (default 6)")
    parser.add_argument("--fps", type=float, default=30.0, help="the server's --fps (default 30)")
    args = parser.parse_args()

    copy = memcpy_ms((H, W), np.uint32)
    print(f"machine: memcpy of an {W}x{H} XRGB8888 frame {copy:.3f} ms; {os.cpu_count()} CPUs")

    print("\n1. live: 800x480 dashboard drawn at 60 fps, `fbgfx serve` pinned to one core, headless Chromium")
    r = live(args.seconds, args.fps)
    print(f"   drawn {r['drawn_fps']:.1f} fps here; page drew {r['updates_per_s']:.2f} updates/s (target >= 30)")
    print(
        f"   between two drawn updates: median {r['interval_median']:.1f} ms "
        f"(= {1000 / r['interval_median']:.1f}/s), longest {r['interval_max']:.0f} ms (a busy machine's stalls)"
    )
    print(f"   server CPU {r['cpu']:.2f} of one core (target < 1)")
    print(
        f"   flip-to-canvas latency: median {r['latency_median']:.1f} ms, 95th percentile "
        f"{r['latency_p95']:.1f} ms (target <= 50 ms)"
    )

    print("\n2. bytes: a 32x32 change against a whole-picture update (target <= 5%)")
    for label, full, small in bytes_ratio():
        print(f"   {label:9s}: whole picture {full:8d} B, 32x32 change {small:5d} B = {100 * small / full:.2f}%")

    print("\n3. finding changed rectangles (copy + tile compare), against a memcpy of the frame")
    for w, h in ((W, H), (1920, 1080)):
        unchanged, changed, copy = grab_costs(w, h)
        print(
            f"   {w}x{h} XRGB8888: unchanged {unchanged:.2f} ms = {unchanged / copy:.1f}x memcpy; "
            f"32x32 change (+ encode) {changed:.2f} ms = {changed / copy:.1f}x; memcpy {copy:.3f} ms"
        )


if __name__ == "__main__":
    main()
