#!/usr/bin/env python3
"""bounce.py: balls bouncing with page flipping: draw off-screen, then pan to show it.

With ``buffering="flip"`` every frame is drawn into the hidden page of video memory
and shown in one FBIOPAN_DISPLAY, at vsync where the driver can, so a frame never
appears half drawn. Drivers that cannot pan get a RAM back buffer instead
(``--buffering auto``, the default).

    python examples/bounce.py --balls 30
    python examples/bounce.py --device virtual:800x480:RGB565 --seconds 1 --out bounce.png
"""

import argparse
import time

import numpy as np

import fbgfx


def main() -> None:
    parser = argparse.ArgumentParser(description="Bouncing balls with page flipping.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--balls", type=int, default=12)
    parser.add_argument("--buffering", default="auto", choices=["auto", "flip", "copy"])
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    with fbgfx.open(args.device) as fb:
        w, h = fb.width, fb.height
        radius = rng.integers(h // 40 + 4, h // 12 + 8, args.balls)
        pos = rng.uniform([0, 0], [w, h], (args.balls, 2))
        vel = rng.uniform(-1, 1, (args.balls, 2)) * h * 0.6  # pixels per second
        colors = [tuple(int(c) for c in rng.integers(60, 256, 3)) for _ in range(args.balls)]
        font = fbgfx.font(size=max(12, h // 24))

        with fb.screen(buffering=args.buffering) as screen:
            start = last = time.monotonic()
            frames, fps, fps_start, fps_frames = 0, 0.0, start, 0
            while args.seconds is None or last - start < args.seconds:
                now = time.monotonic()
                dt, last = now - last, now
                pos += vel * dt
                for axis, limit in ((0, w), (1, h)):  # bounce off the edges
                    low, high = pos[:, axis] < radius, pos[:, axis] > limit - radius
                    vel[low | high, axis] *= -1
                    pos[:, axis] = np.clip(pos[:, axis], radius, limit - radius)
                with screen.frame() as s:  # drawn off-screen, shown by one flip
                    s.clear((10, 10, 30))
                    for (x, y), r, color in zip(pos, radius, colors):
                        s.ellipse((x - r, y - r, x + r, y + r), fill=color, outline="white")
                    s.text((10, 10), f"{screen.buffering} buffering  {fps:5.1f} fps", fill="white", font=font)
                frames += 1
                fps_frames += 1
                if now - fps_start >= 0.5:
                    fps, fps_start, fps_frames = fps_frames / (now - fps_start), now, 0
            if args.out:
                fb.snapshot().save(args.out)
    print(f"bounce: {frames} frames with {screen.buffering} buffering")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
