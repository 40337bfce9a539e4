#!/usr/bin/env python3
"""layers.py: a moving picture in a layer with a clock in an alpha layer above it.

The Screen holds a still background; a layer in the middle shows a moving picture
(a video file with ``--video``, else a generated animation) at 30 frames a second; a
small half-transparent layer above it shows the time, drawn once a second. On a
display with free planes (atomic KMS) each layer is on a plane of its own and a frame
of one changes nothing of the others; elsewhere fbgfx composes them, with the same
pixels. It prints where each layer ended up.

    python examples/layers.py --device virtual:800x480 --seconds 2 --out layers.png
"""

import argparse
import time

import numpy as np

import fbgfx


def main() -> None:
    parser = argparse.ArgumentParser(description="Layers: a moving picture and a clock above a still screen.")
    parser.add_argument("-d", "--device", help="/dev/fbN, drm:, or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER)")
    parser.add_argument("--video", help="play this file in the layer (needs fbgfx[video])")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: run until Ctrl-C)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb, fb.screen() as screen:
        w, h = screen.width, screen.height
        with screen.frame() as s:  # the background: drawn once, never composed again
            for y in range(0, h, 8):
                s.rectangle((0, y, w - 1, y + 7), fill=(20, 30 + 100 * y // h, 60))
            s.text((16, 12), "fbgfx layers", fill="white", font=fbgfx.font(size=max(12, h // 20)))
        box = (w // 8, h // 6, w * 7 // 8, h * 5 // 6)
        movie = fb.layer(box)
        clock = fb.layer((box[0] + 10, box[1] + 10, box[0] + 190, box[1] + 50), alpha=True)
        for name, layer in (("picture", movie), ("clock", clock)):
            print(f"{name}: {'plane ' + str(layer.plane_id) if layer.hardware else layer.reason}")

        font = fbgfx.font(size=24)
        shown_second = None

        def draw_clock() -> None:
            nonlocal shown_second
            now = time.localtime()
            if now.tm_sec == shown_second:
                return
            shown_second = now.tm_sec
            with clock.frame(clear=True) as s:  # transparent, then drawn on
                s.rounded_rectangle((0, 0, 179, 39), radius=8, fill=(0, 0, 0, 150))
                s.text((12, 6), time.strftime("%H:%M:%S", now), fill="white", font=font)

        def on_frame(surface: fbgfx.Surface, t: float) -> None:
            del surface, t  # the clock has a layer of its own: nothing is drawn on the video
            draw_clock()

        start = time.monotonic()
        if args.video:
            movie.play(args.video, loop=True, duration=args.seconds, on_frame=on_frame)
        else:
            mw, mh = movie.size
            ys, xs = np.mgrid[0:mh, 0:mw]
            frame = 0
            while args.seconds is None or time.monotonic() - start < args.seconds:
                t = frame / 30
                rgb = np.empty((mh, mw, 3), np.uint8)
                rgb[..., 0] = (128 + 127 * np.sin(xs / 40 + t * 2)).astype(np.uint8)
                rgb[..., 1] = (128 + 127 * np.sin(ys / 30 - t * 3)).astype(np.uint8)
                rgb[..., 2] = 160
                movie.present(rgb)
                draw_clock()
                frame += 1
                time.sleep(max(0.0, start + frame / 30 - time.monotonic()))
        if args.out:
            fb.snapshot().save(args.out)


if __name__ == "__main__":
    main()
