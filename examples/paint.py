#!/usr/bin/env python3
"""paint.py: finger painting, the smallest useful touch program to copy from.

A black canvas; every touch leaves a dot and every move a stroke, one colour per
finger; the CLEAR button in the top-right corner wipes the canvas. Touches come from
``fbgfx.touch`` in the screen's logical coordinates, so painting lands under the
finger whatever ``--rotate`` turns the picture to. Set ``$FBGFX_TOUCH_CALIBRATION``
(see ``fbgfx touch --calibrate``) if it lands beside it.

    python examples/paint.py                       # first touchscreen, /dev/fb0
    python examples/paint.py --rotate 90 --touch /dev/input/event2
    python examples/paint.py --device virtual:800x480 --out paint.png \\
        --touch tests/support/recordings/ft5406-multitouch.evemu
"""

from __future__ import annotations

import argparse
import time

import fbgfx
import fbgfx.touch

# One colour per finger (multi-touch slot).
COLORS = [(255, 215, 0), (0, 200, 255), (255, 80, 160), (120, 255, 120), (255, 140, 40)]


def main() -> None:
    parser = argparse.ArgumentParser(description="Finger painting on the framebuffer.")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument(
        "--rotate",
        type=int,
        choices=[0, 90, 180, 270],
        help="degrees the picture is turned clockwise on the panel (default: $FBGFX_ROTATE, else 0)",
    )
    parser.add_argument(
        "--touch", help="input device or .evemu recording (default: $FBGFX_TOUCH, else the first touchscreen)"
    )
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb, fb.screen(rotate=args.rotate) as screen:
        w, h = screen.width, screen.height
        brush = max(3, min(w, h) // 100)
        font = fbgfx.font(size=max(12, min(w, h) // 24))
        button = (w - w // 5, 0, w - 1, max(32, h // 12))  # CLEAR, top right
        last: dict[int, tuple[int, int]] = {}  # where each finger was

        def clear_canvas() -> None:
            with screen.frame() as s:
                s.clear("black")
                s.rectangle(button, fill=(70, 70, 70), outline="white")
                cx, cy = (button[0] + button[2]) // 2, (button[1] + button[3]) // 2
                s.text((cx, cy), "CLEAR", fill="white", font=font, anchor="mm")

        clear_canvas()
        touches = 0
        deadline: float | None = None if args.seconds is None else time.monotonic() + args.seconds
        with fbgfx.touch.open(args.touch, screen) as ts:
            print(f"paint: {ts.device.name} on a {w}x{h} screen (rotate {screen.rotate}), ready", flush=True)
            while deadline is None or time.monotonic() < deadline:
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                events = ts.read(timeout)
                if not events and ts.ended:
                    break  # a recording is over
                wipe = False
                with screen.frame() as s:  # one frame per batch of events
                    for ev in events:
                        if ev.type == "down":
                            touches += 1
                            if button[0] <= ev.x <= button[2] and button[1] <= ev.y <= button[3]:
                                wipe = True
                                break
                        if ev.type == "up":
                            last.pop(ev.slot, None)
                            continue
                        color = COLORS[ev.slot % len(COLORS)]
                        if ev.type == "move" and ev.slot in last:
                            s.line([last[ev.slot], (ev.x, ev.y)], fill=color, width=2 * brush)
                        s.ellipse((ev.x - brush, ev.y - brush, ev.x + brush, ev.y + brush), fill=color)
                        last[ev.slot] = (ev.x, ev.y)
                if wipe:
                    last.clear()
                    clear_canvas()
        if args.out:
            fb.snapshot().save(args.out)
    print(f"paint: {touches} touches")


if __name__ == "__main__":
    try:
        main()
    except fbgfx.FramebufferError as e:  # no screen, no touch device, no permission
        raise SystemExit(f"paint: {e}") from None
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
