#!/usr/bin/env python3
"""video.py: play video files with screen.play(), with an overlay drawn on every frame.

The overlay is what a kiosk or signage screen shows over its video: the time of day,
the position in the file and a progress bar. Without a file, a short generated clip
(a colourful plasma, encoded with PyAV into a temporary file) is played.

    python examples/video.py movie.mp4 intro.mkv --loop          # a playlist, again and again
    python examples/video.py --device virtual:800x480:RGB565 --duration 2 --out video.png

Needs the video extra: pip install 'fbgfx[video]' (Raspberry Pi OS: sudo apt install python3-av).
"""

import argparse
import os
import tempfile
import time

import numpy as np

import fbgfx
import fbgfx.video


def make_clip(path, width=320, height=180, seconds=3, fps=25):
    """Write a short plasma animation to ``path`` (H.264 in MP4)."""
    import av  # noqa: PLC0415 (PyAV, needed only to make the sample clip)

    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    with av.open(path, "w") as out:
        stream = out.add_stream("libx264", rate=fps, options={"preset": "ultrafast"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(seconds * fps):
            t = i / fps * 2
            v = np.sin(x / 19 + t) + np.sin(y / 13 - t * 1.3) + np.sin((x + y) / 27 + t * 0.7)
            rgb = np.empty((height, width, 3), np.uint8)
            for channel, phase in enumerate((0.0, 2.1, 4.2)):
                rgb[..., channel] = 127 + 127 * np.sin(v * 1.5 + phase)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)


def overlay(screen, length):
    """on_frame: the time of day top left, the play position and a progress bar at the bottom."""
    font = fbgfx.font(size=max(12, screen.height // 20))
    pad = max(4, screen.height // 60)
    bar_h = max(4, screen.height // 80)

    def draw(surface, t):
        surface.text(
            (pad, pad), time.strftime("%H:%M:%S"), fill="white", font=font, stroke_width=2, stroke_fill="black"
        )
        position = t % length if length else t
        label = f"{position:5.1f} / {length:.1f} s" if length else f"{t:5.1f} s"
        surface.text((pad, screen.height - 3 * pad - bar_h - font.size), label, fill="white", font=font,
                     stroke_width=2, stroke_fill="black")  # fmt: skip
        y = screen.height - pad - bar_h
        surface.rectangle((pad, y, screen.width - pad - 1, y + bar_h - 1), fill=(40, 40, 40))
        if length:
            x = pad + int((screen.width - 2 * pad - 1) * min(position / length, 1.0))
            surface.rectangle((pad, y, x, y + bar_h - 1), fill="orange")

    return draw


def main() -> None:
    parser = argparse.ArgumentParser(description="Play video files with a clock and a progress bar over them.")
    parser.add_argument("files", nargs="*", help="video files (a playlist); none: a generated clip")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--loop", action="store_true", help="play again and again")
    parser.add_argument("--duration", type=float, help="stop after this many seconds")
    parser.add_argument("--no-audio", dest="audio", action="store_false", help="without the sound")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        files = args.files
        if not files:
            files = [os.path.join(tmp, "plasma.mp4")]
            make_clip(files[0])
        length = 0.0
        if len(files) == 1:
            with fbgfx.video.open(files[0]) as v:
                length = v.duration or 0.0
        with fbgfx.open(args.device) as fb, fb.screen() as screen:
            played = screen.play(
                files, loop=args.loop, duration=args.duration, audio=args.audio, on_frame=overlay(screen, length)
            )
            if args.out:
                fb.snapshot().save(args.out)
    print(f"video: {played.shown} frames shown, {played.dropped} dropped")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
