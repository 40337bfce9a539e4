#!/usr/bin/env python3
"""clock.py: a big digital clock that redraws only the digits that change.

Each character sits in a fixed cell; once a second only the cells whose character
changed are cleared and drawn again, so a copy-buffered screen copies a few small
rectangles instead of the whole frame (most seconds: one digit).

    python examples/clock.py --device virtual:800x480:RGB565 --seconds 2 --out clock.png
"""

import argparse
import time

import fbgfx


def main() -> None:
    parser = argparse.ArgumentParser(description="A digital clock on the framebuffer.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: run until Ctrl-C)")
    args = parser.parse_args()

    background, ink = (8, 12, 20), (120, 255, 160)
    with fbgfx.open(args.device) as fb:
        with fb.screen() as screen:
            w, h = fb.width, fb.height
            size = h // 3
            while True:  # the biggest digits for which HH:MM:SS fits in 90% of the width
                font = fbgfx.font(size=size)
                digit_w = max(font.getbbox(c)[2] for c in "0123456789") + size // 12
                colon_w = font.getbbox(":")[2] + size // 6
                if 6 * digit_w + 2 * colon_w <= w * 0.9 or size <= 8:
                    break
                size = size * 9 // 10
            small = fbgfx.font(size=max(12, h // 18))
            # One fixed cell per character, as wide as the widest digit, so nothing moves.
            widths = [digit_w, digit_w, colon_w, digit_w, digit_w, colon_w, digit_w, digit_w]
            left = (w - sum(widths)) // 2
            cells = [left + sum(widths[:i]) for i in range(8)]
            top, bottom = h // 2 - size * 2 // 3, h // 2 + size * 2 // 3

            shown = " " * 8
            end = None if args.seconds is None else time.monotonic() + args.seconds
            updates = ticks = 0
            first = True
            while end is None or time.monotonic() < end:
                now = time.localtime()
                text = time.strftime("%H:%M:%S", now)
                with screen.frame() as s:
                    if first:
                        s.clear(background)
                        s.text(
                            (w // 2, h - h // 8),
                            time.strftime("%A %d %B %Y", now),
                            fill=(90, 140, 110),
                            font=small,
                            anchor="mm",
                        )
                        first = False
                    for i, (old, new) in enumerate(zip(shown, text)):
                        if old == new:
                            continue  # untouched cells cost nothing to flip
                        x, cell_w = cells[i], widths[i]
                        s.rectangle((x, top, x + cell_w - 1, bottom), fill=background)
                        s.text((x + cell_w // 2, h // 2), new, fill=ink, font=font, anchor="mm")
                        updates += 1
                shown = text
                ticks += 1
                # Sleep to the start of the next second.
                time.sleep(max(0.0, min(1 - time.time() % 1, (end or float("inf")) - time.monotonic())))
            if args.out:
                fb.snapshot().save(args.out)
    print(f"clock: {updates} cell updates in {ticks} ticks")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
