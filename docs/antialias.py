#!/usr/bin/env python3
"""Make docs/antialias.png: the same gauge drawn without and with ``antialias=True``,
side by side and enlarged 2x (each pixel a 2x2 block) so the edges can be seen.

    python docs/antialias.py            # writes docs/antialias.png
"""

from __future__ import annotations

import math
import pathlib
import sys

from PIL import Image

import fbgfx

W, H, ZOOM = 200, 170, 2
PANEL, TRACK, BAND, TEXT, DIM = (26, 32, 46), (48, 56, 76), (90, 200, 255), (225, 230, 240), (130, 140, 160)


def gauge(s: fbgfx.Surface, value: float, smooth: bool) -> None:
    """A 270-degree gauge (the dashboard example's), with or without antialiasing."""
    s.clear(PANEL)
    cx, cy, r, thick = 100, 92, 70, 14
    ring = (cx - r, cy - r, cx + r - 1, cy + r - 1)  # the circle of radius r around (cx, cy)
    s.arc(ring, 135, 405, fill=TRACK, width=thick, antialias=smooth)
    s.arc(ring, 135, 135 + 270 * value, fill=BAND, width=thick, antialias=smooth)
    a = math.radians(135 + 270 * value)
    tip = (cx - 0.5 + (r - 20) * math.cos(a), cy - 0.5 + (r - 20) * math.sin(a))
    side = (math.cos(a + math.pi / 2) * 4, math.sin(a + math.pi / 2) * 4)
    base = (cx - 0.5, cy - 0.5)
    needle = [tip, (base[0] + side[0], base[1] + side[1]), (base[0] - side[0], base[1] - side[1])]
    s.polygon(needle, fill=TEXT, antialias=smooth)
    s.circle(base, 6, fill=TEXT, antialias=smooth)
    font = fbgfx.font(size=15)
    s.text((cx, cy + 46), f"{value * 100:.0f}%", fill=TEXT, font=font, anchor="mm")
    s.text((cx, H - 6), f"antialias={smooth}", fill=DIM, font=font, anchor="md")


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name("antialias.png")
    picture = Image.new("RGB", (2 * W * ZOOM, H * ZOOM))
    for i, smooth in enumerate((False, True)):
        s = fbgfx.Surface(W, H, "XRGB8888")
        gauge(s, 0.62, smooth)
        picture.paste(s.to_image().resize((W * ZOOM, H * ZOOM), Image.Resampling.NEAREST), (i * W * ZOOM, 0))
    picture.save(out, optimize=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
