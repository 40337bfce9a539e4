#!/usr/bin/env python3
"""hello.py: the smallest fbgfx program, a greeting drawn on the framebuffer.

python examples/hello.py                      # on $FRAMEBUFFER or /dev/fb0
python examples/hello.py --device virtual:800x480:RGB565 --out hello.png
"""

import argparse
import time

import fbgfx


def main() -> None:
    parser = argparse.ArgumentParser(description="Say hello on the framebuffer.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--seconds", type=float, default=5, help="how long to show it (default 5)")
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb:  # mode, pan and palette come back on close
        with fb.screen() as screen:  # double buffered; the text console keeps quiet until it closes
            w, h = fb.width, fb.height
            with screen.frame() as s:  # shown when the block ends
                s.clear("midnightblue")
                s.rectangle((20, 20, w - 21, h - 21), outline="white", width=3)
                s.ellipse((w // 2 - 60, h // 4 - 60, w // 2 + 60, h // 4 + 60), fill="gold", outline="orange", width=4)
                s.text(
                    (w // 2, h // 2 + 20),
                    "Hello, framebuffer!",
                    fill="white",
                    font=fbgfx.font(size=h // 10),
                    anchor="mm",
                )
                s.text(
                    (w // 2, h - 50),
                    f"{w}x{h} {fb.format.name}",
                    fill="lightblue",
                    font=fbgfx.font(size=h // 20),
                    anchor="mm",
                )
            time.sleep(args.seconds)
            if args.out:
                fb.snapshot().save(args.out)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
