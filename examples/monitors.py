#!/usr/bin/env python3
"""monitors.py: a picture on every connected monitor, that survives unplugging.

Opens each connected display fbgfx.displays() lists (a Raspberry Pi 4's two HDMI
ports: drm:card0:connector=HDMI-A-1 and ...HDMI-A-2), draws a moving bar and the
display's name on each, and keeps going while monitors are unplugged and plugged back:
a monitor back at another size is heard through fb.display_events() and drawn at its
new size from the next frame.

python examples/monitors.py                          # every connected monitor
python examples/monitors.py --device drm:card0:connector=HDMI-A-1,HDMI-A-2   # mirrored
python examples/monitors.py --device virtual:800x480:RGB565 --out monitors.png --seconds 1
"""

import argparse
import time

import fbgfx

COLORS = ["tomato", "royalblue", "seagreen", "goldenrod"]


def draw(screen, fb, index, t, note):
    """One frame: a colour of its own, a bar that moves, the display's name."""
    w, h = screen.width, screen.height
    with screen.frame() as s:
        s.clear("black")
        s.rectangle((0, 0, w - 1, h // 6), fill=COLORS[index % len(COLORS)])
        x = int((t * 200) % max(w - 40, 1))
        s.rectangle((x, h // 2 - 20, x + 39, h // 2 + 19), fill="white")
        label = fb.drm.connector if fb.drm else fb.path
        big, small = fbgfx.font(size=max(h // 16, 10)), fbgfx.font(size=max(h // 24, 10))
        s.text((w // 2, h // 12), f"{label}  {w}x{h}", fill="white", font=big, anchor="mm")
        s.text((w // 2, h - h // 8), note, fill="lightgray", font=small, anchor="mm")


def main() -> None:
    parser = argparse.ArgumentParser(description="Draw on every connected monitor; survive unplugging.")
    parser.add_argument("-d", "--device", help="one display (default: every connected one fbgfx.displays() lists)")
    parser.add_argument("--out", help="save the first display to this PNG before exiting")
    parser.add_argument("--seconds", type=float, default=30, help="how long to run (default 30)")
    args = parser.parse_args()

    specs = [args.device] if args.device else [d.spec for d in fbgfx.displays() if d.connected and d.connector]
    if not specs:
        raise SystemExit("no connected monitor (fbgfx info --all lists what there is)")
    fbs = [fbgfx.open(spec) for spec in specs]
    try:
        screens = [fb.screen() for fb in fbs]
        notes = ["" for _ in fbs]
        start = time.monotonic()
        while time.monotonic() - start < args.seconds:
            t = time.monotonic() - start
            for i, fb in enumerate(fbs):
                for event in fb.display_events():  # on this thread, once a frame
                    notes[i] = f"{event.kind} at {event.mode}"
                    if event.kind == "resized":  # fb has taken the new size on
                        screens[i].close()
                        screens[i] = fb.screen()
                draw(screens[i], fb, i, t, notes[i] or "unplug me")
        if args.out:
            fbs[0].snapshot().save(args.out)
        for screen in screens:
            screen.close()
    finally:
        for fb in fbs:
            fb.close()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # every display was restored on the way out
        raise SystemExit(130) from None
