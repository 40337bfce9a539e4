"""CPU time of the process per video frame with a 1 Hz clock above the video: a video
layer and a clock layer (on display planes where the driver has them, else composed
by fbgfx), against the way without layers (the video presented into the Screen's box
and the clock drawn again over every frame).

    python benchmarks/bench_layers.py [DEVICE] [--frames N] [--size WxH]

DEVICE defaults to ``virtual:1024x768``; on a ``drm:`` display with planes (vkms) run
it also with ``FBGFX_DRM_ATOMIC=0`` for software composition on the same display.
Frames are new pictures each time (``--frames`` distinct ones, made before timing);
the clock's text changes once every 30 frames (1 Hz at 30 fps). Prints the machine's
memcpy of a 1080p XRGB8888 frame beside the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

import fbgfx

CLOCK_EVERY = 30  # video frames per clock update: 1 Hz at 30 fps


def _frames(n: int, w: int, h: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    base = rng.integers(0, 256, (h, w, 3), np.uint8)
    return [np.roll(base, i * 7, axis=1) for i in range(n)]


def memcpy_ms() -> float:
    """Milliseconds of one hot 1920x1080 XRGB8888 copy (the machine's memory speed)."""
    src = np.ones((1080, 1920), np.uint32)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(20):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _layers(device: str, frames: list[np.ndarray], box: tuple[int, int, int, int]) -> dict[str, Any]:
    with fbgfx.open(device) as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear("navy")
        video = fb.layer(box)
        clock = fb.layer((box[0] + 8, box[1] + 8, box[0] + 168, box[1] + 40), alpha=True)
        start = time.process_time()
        wall = time.perf_counter()
        for i, picture in enumerate(frames):
            video.present(picture)
            if i % CLOCK_EVERY == 0:
                with clock.frame(clear=True) as s:
                    s.rectangle((0, 0, 159, 31), fill=(0, 0, 0, 160))
                    s.text((6, 6), f"12:00:{i // CLOCK_EVERY:02d}", fill="white")
        cpu = time.process_time() - start
        wall = time.perf_counter() - wall
        return {
            "cpu_ms_per_frame": round(cpu / len(frames) * 1e3, 3),
            "wall_ms_per_frame": round(wall / len(frames) * 1e3, 3),
            "video_on_plane": video.hardware,
            "clock_on_plane": clock.hardware,
            "reason": video.reason,
        }


def _screen_only(device: str, frames: list[np.ndarray], box: tuple[int, int, int, int]) -> dict[str, Any]:
    with fbgfx.open(device) as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear("navy")
        x0, y0, x1, y1 = box
        start = time.process_time()
        wall = time.perf_counter()
        for i, picture in enumerate(frames):
            with screen.frame() as s:
                s.blit(picture, (x0, y0))
                # the overlay is drawn again over every frame: nothing keeps it apart
                s.rectangle((x0 + 8, y0 + 8, x0 + 167, y0 + 39), fill=(0, 0, 0, 160))
                s.text((x0 + 14, y0 + 14), f"12:00:{i // CLOCK_EVERY:02d}", fill="white")
        cpu = time.process_time() - start
        wall = time.perf_counter() - wall
        return {
            "cpu_ms_per_frame": round(cpu / len(frames) * 1e3, 3),
            "wall_ms_per_frame": round(wall / len(frames) * 1e3, 3),
        }


def run(device: str, frames: int = 120, size: tuple[int, int] = (640, 360)) -> dict[str, Any]:
    """Both ways on ``device``; a dict of figures."""
    w, h = size
    pictures = _frames(frames, w, h)
    box = (16, 16, 16 + w, 16 + h)
    return {
        "device": device,
        "frames": frames,
        "video": f"{w}x{h}",
        "memcpy_1080p_ms": round(memcpy_ms(), 3),
        "layers": _layers(device, pictures, box),
        "screen_only": _screen_only(device, pictures, box),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", nargs="?", default="virtual:1024x768")
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--size", default="640x360")
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    print(json.dumps(run(args.device, args.frames, (w, h)), indent=1))


if __name__ == "__main__":
    main()
