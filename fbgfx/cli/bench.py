"""``fbgfx bench``: standard scenes on your display, timed, to compare boards and panels.

Each scene draws frames on a Screen of the display for a few seconds, with colours,
positions and text that change every frame (no cache serves a figure), and reports
frames per second, the time to draw a frame (render), the time to bring it to the
display (flush: the flip or present), and the CPU the process used meanwhile. The
header names the display, its format and buffering, and the machine, with a memcpy of
one frame of the display and the load average measured in the same run (flush times
read best against the memcpy: memory speed differs a lot between machines); ``--json``
gives the same for programs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import fbgfx

from ..errors import FramebufferError
from ..surface import Surface
from ._command import Command, Context
from ._device import open_device

__all__ = ["COMMAND", "SCENES", "run_scene"]

#: A scene's frame: draws frame ``i`` on its target, the Screen's back Surface (or, for
#: scenes that present, shows it on the Screen itself).
Draw = Callable[[Any, int], None]


@dataclass(frozen=True)
class Scene:
    """A standard workload: what it shows, how to make its frame drawer, and the
    Screen options it needs (rotation)."""

    name: str
    about: str
    make: Callable[[int, int], Draw]
    rotate: int = 0
    presents: bool = False  # the frame is shown by present(): no separate flip


def _colour(i: int, k: int = 0) -> tuple[int, int, int]:
    return ((i * 37 + k * 11) % 256, (i * 59 + k * 7) % 256, (i * 83 + k * 5) % 256)


def _fill(w: int, h: int) -> Draw:
    del w, h  # the whole surface
    return lambda s, i: s.clear(_colour(i))


def _rects(w: int, h: int) -> Draw:
    rng = np.random.default_rng(1)
    boxes = rng.integers(0, 1 << 30, (4096, 4))

    def draw(s: Surface, i: int) -> None:
        s.clear("black")
        for k in range(1000):
            x, y, bw, bh = boxes[(i * 7 + k) % len(boxes)]
            x, y = int(x % w), int(y % h)
            s.rectangle((x, y, x + int(bw % 40), y + int(bh % 30)), fill=_colour(i, k))

    return draw


def _text(w: int, h: int) -> Draw:
    font = fbgfx.font(size=16)

    def draw(s: Surface, i: int) -> None:
        s.clear("black")
        for k in range(50):
            x, y = (k * 97 + i * 3) % max(1, w - 100), (k * 53) % max(1, h - 20)
            s.text((x, y), f"{k}: {(i * 7.3 + k) % 1000:6.1f} V", fill=_colour(i, k), font=font)

    return draw


def _blit(w: int, h: int) -> Draw:
    rng = np.random.default_rng(2)
    sprites = [rng.integers(0, 256, (64, 64, 4), dtype=np.uint8) for _ in range(4)]

    def draw(s: Surface, i: int) -> None:
        s.clear("black")
        for k in range(20):
            sprite = sprites[(i + k) % len(sprites)]
            s.blit(sprite, ((k * 71 + i * 5) % max(1, w - 64), (k * 37 + i * 3) % max(1, h - 64)))

    return draw


def _smooth(w: int, h: int) -> Draw:
    def draw(s: Surface, i: int) -> None:
        s.clear("black")
        for k in range(200):
            a = (i * 0.05 + k * 0.31) % (2 * math.pi)
            x, y = (k * 53) % w, (k * 29) % h
            end = (x + 40 * math.cos(a), y + 40 * math.sin(a))
            s.line((x, y, *end), fill=_colour(i, k), width=1 + k % 3, antialias=True)
        for k in range(20):
            s.circle(((k * 97 + i) % w, (k * 61) % h), 5 + k * 2, fill=_colour(i, k), antialias=True)

    return draw


def _frames(w: int, h: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    return [np.roll(base, 17 * k, axis=1) for k in range(4)]


def _present(w: int, h: int) -> Draw:
    frames = _frames(w, h)
    return lambda screen, i: screen.present(frames[i % len(frames)])


def _dirty(w: int, h: int) -> Draw:
    def draw(s: Surface, i: int) -> None:
        x, y = (i * 7) % max(1, w - 64), (i * 3) % max(1, h - 64)
        s.rectangle((x, y, x + 63, y + 63), fill=_colour(i))

    return draw


#: The standard scenes, in the order they run.
SCENES: dict[str, Scene] = {
    scene.name: scene
    for scene in (
        Scene("fill", "full-screen fills, a new colour each frame", _fill),
        Scene("rects", "1,000 rectangles, a colour each", _rects),
        Scene("text", "50 short readings of text", _text),
        Scene("blit", "20 RGBA 64x64 images blended", _blit),
        Scene("smooth", "200 anti-aliased lines and 20 circles", _smooth),
        Scene("present", "present() of a screen-sized RGB frame (video)", _present, presents=True),
        Scene("rotate", "present() on a screen turned 90 degrees", _present, rotate=90, presents=True),
        Scene("dirty", "a 64x64 square moving (only it changes)", _dirty),
    )
}


def run_scene(fb: fbgfx.Framebuffer, scene: Scene, seconds: float, max_frames: int = 100_000) -> dict[str, Any]:
    """Run ``scene`` on a Screen of ``fb`` for ``seconds``; its figures (times in ms)."""
    with fb.screen(rotate=scene.rotate) as screen:
        draw = scene.make(screen.width, screen.height)
        target = screen if scene.presents else screen.surface
        render = flush = 0.0
        frames = 0
        cpu0, start = time.process_time(), time.perf_counter()
        while frames < max_frames and (frames < 2 or time.perf_counter() - start < seconds):
            t0 = time.perf_counter()
            draw(target, frames)
            t1 = time.perf_counter()
            if not scene.presents:
                screen.flip()
            t2 = time.perf_counter()
            if scene.presents:
                flush += t1 - t0
            else:
                render += t1 - t0
                flush += t2 - t1
            frames += 1
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu0
        buffering = screen.buffering
    return {
        "scene": scene.name,
        "about": scene.about,
        "frames": frames,
        "fps": frames / elapsed if elapsed > 0 else 0.0,
        "render_ms": 1000 * render / frames,
        "flush_ms": 1000 * flush / frames,
        "cpu_percent": 100 * cpu / elapsed if elapsed > 0 else 0.0,
        "buffering": buffering,
    }


def _machine() -> str:
    model = ""
    for path, key in (("/proc/device-tree/model", None), ("/proc/cpuinfo", "model name")):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if key is None:
            model = text.strip("\0\n ")
        else:
            model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(key)), "")
        if model:
            break
    return f"{model or platform.processor() or 'unknown CPU'} ({platform.machine()}, {os.cpu_count()} CPUs)"


def memcpy_ms(fb: fbgfx.Framebuffer, repeats: int = 21) -> float:
    """Median time (ms) of a memcpy of one frame of ``fb``'s size and format."""
    src = np.ones(fb.format.array_shape(fb.height, fb.width), fb.format.dtype)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenes", metavar="A,B", help=f"the scenes to run, comma-separated (default all: {', '.join(SCENES)})"
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="how long each scene runs (default 2)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def _scenes(text: str | None) -> list[Scene]:
    if not text:
        return list(SCENES.values())
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENES]
    if unknown or not names:
        raise ValueError(f"--scenes: unknown scene {', '.join(unknown) or text!r} (scenes: {', '.join(SCENES)})")
    return [SCENES[n] for n in names]


def run(args: argparse.Namespace, context: Context) -> int:
    """Run the scenes and print a table (or JSON) and a summary line."""
    scenes = _scenes(args.scenes)
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        raise ValueError(f"--seconds must be a positive number, got {args.seconds}")
    try:
        fb = open_device(args)
    except FramebufferError:
        if args.device:
            raise
        fb = fbgfx.open("virtual:800x480:XRGB8888")
        context.note("no framebuffer here: the scenes ran on a virtual 800x480 XRGB8888 one (memory only)")
    with fb:
        display = f"{fb.path} {fb.width}x{fb.height} {fb.format.name}"
        results = [run_scene(fb, scene, args.seconds) for scene in scenes]
        copy = memcpy_ms(fb)
    machine = _machine()
    load = os.getloadavg()[0]
    mean_fps = math.exp(sum(math.log(max(r["fps"], 1e-9)) for r in results) / len(results))
    if args.json:
        out = {"display": display, "machine": machine, "memcpy_ms": copy, "load_average": load}
        json.dump({**out, "scenes": results, "mean_fps": mean_fps}, sys.stdout)
        print()
        return 0
    print(f"fbgfx bench: {display}, on {machine}; memcpy of a frame {copy:.3f} ms, load average {load:.2f}")
    print(f"{'scene':9} {'fps':>8} {'render ms':>10} {'flush ms':>9} {'x memcpy':>9} {'CPU %':>6}  buffering  what")
    for r in results:
        print(
            f"{r['scene']:9} {r['fps']:8.1f} {r['render_ms']:10.2f} {r['flush_ms']:9.2f} "
            f"{r['flush_ms'] / copy if copy > 0 else 0:8.1f}x {r['cpu_percent']:6.0f}  {r['buffering']:9}  {r['about']}"
        )
    print(f"summary: {len(results)} scenes, geometric mean {mean_fps:.1f} fps")
    return 0


COMMAND = Command(
    name="bench",
    help="time standard scenes on the display (fps, render, flush, CPU)",
    description="Draw standard scenes (fills, rectangles, text, image blits, anti-aliased shapes, video-sized "
    "present(), rotation, a dirty-rectangle animation) on the display for a few seconds each, with colours and "
    "positions that change every frame, and print frames per second, render and flush time per frame and CPU "
    "use, with the display, format, buffering and machine. With no framebuffer present (and no --device) the "
    "scenes run on a virtual one.",
    add_arguments=_arguments,
    run=run,
)
