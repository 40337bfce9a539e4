#!/usr/bin/env python3
"""video.py: play video frames with screen.present(), keeping time by dropping late frames.

Frames come from raw rgb24 on stdin (any video, through ffmpeg) or, without input,
from a NumPy plasma animation computed on the fly.

    ffmpeg -i movie.mp4 -f rawvideo -pix_fmt rgb24 -s 640x360 - | python examples/video.py --size 640x360 --fps 25
    python examples/video.py --device virtual:800x480:RGB565 --frames 30 --out video.png
"""

import argparse
import sys
import time

import numpy as np

import fbgfx


def stdin_frames(width, height):
    """Raw rgb24 frames from stdin, read into one reused buffer."""
    frame = np.empty((height, width, 3), np.uint8)
    view, need = memoryview(frame).cast("B"), frame.nbytes
    while True:
        got = 0
        while got < need:
            n = sys.stdin.buffer.readinto(view[got:])
            if not n:
                if got:
                    sys.exit(f"video.py: stdin ended mid-frame ({got} of {need} bytes): check --size")
                return
            got += n
        yield frame


def plasma_frames(width, height):
    """An endless colourful plasma, computed at a quarter of the size and scaled by present()."""
    w, h = max(1, width // 4), max(1, height // 4)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    t = 0.0
    while True:
        v = np.sin(x / 9 + t) + np.sin(y / 7 - t * 1.3) + np.sin((x + y) / 13 + t * 0.7)
        rgb = np.empty((h, w, 3), np.uint8)
        rgb[..., 0] = 127 + 127 * np.sin(v * 1.5)
        rgb[..., 1] = 127 + 127 * np.sin(v * 1.5 + 2.1)
        rgb[..., 2] = 127 + 127 * np.sin(v * 1.5 + 4.2)
        yield rgb
        t += 0.08


def main() -> None:
    parser = argparse.ArgumentParser(description="Play raw rgb24 video from stdin, or a generated animation.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--size", help="WxH of raw frames on stdin")
    parser.add_argument("--fps", type=float, default=30, help="frames per second (default 30)")
    parser.add_argument("--frames", type=int, help="stop after this many frames")
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb:
        if args.size:
            width, height = (int(v) for v in args.size.lower().split("x"))
            frames = stdin_frames(width, height)
        else:
            frames = plasma_frames(fb.width, fb.height)
        shown = dropped = 0
        with fb.screen() as screen:
            period = 1 / args.fps
            due = time.monotonic()
            for i, frame in enumerate(frames):
                if args.frames is not None and i >= args.frames:
                    break
                now = time.monotonic()
                if now > due + period and shown:
                    dropped += 1  # too late to be worth showing
                else:
                    time.sleep(max(0.0, due - now))
                    screen.present(frame, fit="fit")
                    shown += 1
                due += period
            if args.out:
                fb.snapshot().save(args.out)
    print(f"video: {shown} frames shown, {dropped} dropped")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
