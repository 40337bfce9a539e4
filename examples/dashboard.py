#!/usr/bin/env python3
"""dashboard.py: gauges, bars and text for a small LCD (480x320 or 800x480), from live system data.

Shows CPU use, memory use, load and (where the machine has a sensor) temperature from
/proc and /sys, updating twice a second. The layout scales to the screen.

    python examples/dashboard.py --device /dev/fb1            # a 480x320 SPI LCD
    python examples/dashboard.py --device virtual:800x480:RGB565 --seconds 1 --out dashboard.png
    python examples/dashboard.py --demo          # fixed readings: screenshots and tests
"""

import argparse
import glob
import math
import os
import time

import fbgfx

BACKGROUND = (12, 16, 24)
PANEL = (26, 32, 46)
TRACK = (48, 56, 76)
TEXT = (225, 230, 240)
DIM = (130, 140, 160)


def cpu_times():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields), idle


def memory_used():
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = int(value.split()[0])
    total = info.get("MemTotal", 1)
    return 1 - info.get("MemAvailable", info.get("MemFree", 0)) / total, total / 1024 / 1024


def temperature():
    for path in sorted(glob.glob("/sys/class/thermal/thermal_zone*/temp")):
        try:
            with open(path) as f:
                return int(f.read()) / 1000
        except (OSError, ValueError):
            continue
    return None


def gauge(s, box, value, label, text, fonts, color):
    """A 270-degree gauge: track, value band, needle and readout in a panel, drawn
    smoothly (antialias=True: each edge pixel gets the shape's share of it)."""
    x0, y0, x1, y1 = box
    s.rectangle(box, fill=PANEL)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2 + (y1 - y0) * 0.04
    r = min(x1 - x0, y1 - y0) * 0.38
    thick = max(4, r * 0.18)
    value = max(0.0, min(value, 1.0))
    # the circle of radius r around (cx, cy): its box covers [cx - r, cx + r]
    ring = (cx - r, cy - r, cx + r - 1, cy + r - 1)
    s.arc(ring, 135, 405, fill=TRACK, width=thick, antialias=True)
    if value > 0:
        s.arc(ring, 135, 135 + 270 * value, fill=color, width=thick, antialias=True)
    a = math.radians(135 + 270 * value)
    # points are pixel centres: (x, y) is the point (x + 0.5, y + 0.5)
    tip = (cx - 0.5 + (r - thick * 1.5) * math.cos(a), cy - 0.5 + (r - thick * 1.5) * math.sin(a))
    side = (math.cos(a + math.pi / 2) * thick * 0.3, math.sin(a + math.pi / 2) * thick * 0.3)
    base = (cx - 0.5, cy - 0.5)
    s.polygon(
        [tip, (base[0] + side[0], base[1] + side[1]), (base[0] - side[0], base[1] - side[1])], fill=TEXT, antialias=True
    )
    s.circle(base, thick * 0.4, fill=TEXT, antialias=True)
    s.text((cx, cy + r * 0.55), text, fill=TEXT, font=fonts["big"], anchor="mm")
    s.text(((x0 + x1) / 2, y1 - 6), label, fill=DIM, font=fonts["small"], anchor="md")


def main() -> None:
    parser = argparse.ArgumentParser(description="A system dashboard for a small LCD.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    parser.add_argument(
        "--demo", action="store_true", help="show fixed sample readings instead of this machine's (screenshots, tests)"
    )
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb:
        w, h = fb.width, fb.height
        k = min(w / 800, h / 480)
        fonts = {
            "title": fbgfx.font(size=round(30 * k)),
            "big": fbgfx.font(size=round(28 * k)),
            "small": fbgfx.font(size=max(10, round(16 * k))),
        }
        pad, head = round(10 * k), round(48 * k)
        gw = (w - 4 * pad) // 3
        gh = round((h - head - 3 * pad) * 0.68)
        gauges = [(pad + i * (gw + pad), head, pad + i * (gw + pad) + gw, head + gh) for i in range(3)]
        bars_box = (pad, head + gh + pad, w - pad, h - pad)
        history = []

        with fb.screen() as screen:
            end = None if args.seconds is None else time.monotonic() + args.seconds
            before = cpu_times()
            time.sleep(0.1)
            while True:
                total, idle = cpu_times()
                cpu = 1 - (idle - before[1]) / max(total - before[0], 1)
                before = (total, idle)
                mem, mem_gib = memory_used()
                load = os.getloadavg()[0]
                temp = temperature()
                history = (history + [cpu])[-60:]
                if args.demo:  # every frame the same on every machine, but for the clock
                    history = [0.3 + 0.25 * math.sin(i / 5) for i in range(60)]
                    cpu, mem, mem_gib, temp = history[-1], 0.62, 3.8, 47.0
                with screen.frame() as s:
                    s.clear(BACKGROUND)
                    s.text((pad, head // 2), "system", fill=TEXT, font=fonts["title"], anchor="lm")
                    s.text((w - pad, head // 2), time.strftime("%H:%M:%S"), fill=DIM, font=fonts["title"], anchor="rm")
                    gauge(s, gauges[0], cpu, "CPU", f"{cpu * 100:.0f}%", fonts, (90, 200, 255))
                    gauge(
                        s, gauges[1], mem, f"memory of {mem_gib:.1f} GiB", f"{mem * 100:.0f}%", fonts, (120, 230, 140)
                    )
                    if temp is not None:
                        gauge(s, gauges[2], (temp - 20) / 70, "temperature", f"{temp:.0f}°C", fonts, (255, 150, 80))
                    else:
                        cores = os.cpu_count() or 1
                        gauge(s, gauges[2], load / cores, f"load ({cores} cores)", f"{load:.2f}", fonts, (255, 150, 80))
                    # CPU history as bars.
                    x0, y0, x1, y1 = bars_box
                    s.rectangle(bars_box, fill=PANEL)
                    s.text((x0 + pad, y0 + pad // 2), "CPU, last 30 s", fill=DIM, font=fonts["small"])
                    bw = (x1 - x0 - 2 * pad) / 60
                    base, top = y1 - pad, y0 + pad + round(20 * k)
                    for i, value in enumerate(history):
                        bx = x0 + pad + (60 - len(history) + i) * bw
                        s.rectangle((bx, base - max(1, (base - top) * value), bx + bw - 2, base), fill=(90, 200, 255))
                if end is not None and time.monotonic() >= end:
                    break
                time.sleep(0.5 if end is None else max(0.0, min(0.5, end - time.monotonic())))
            if args.out:
                fb.snapshot().save(args.out)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
