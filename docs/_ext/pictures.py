#!/usr/bin/env python3
"""Draw the documentation's pictures with fbgfx itself, on virtual displays.

The docs build runs :func:`make_all` (through ``fbgfx_docs``) into ``docs/_generated/``;
run it by hand to look at them::

    python docs/_ext/pictures.py /tmp/pictures

Every picture is what a :class:`fbgfx.Surface` or a virtual display holds after the
drawing calls shown beside it in the docs: nothing is retouched.
"""

from __future__ import annotations

import contextlib
import io
import math
import pathlib
import sys
from typing import Callable

from PIL import Image

import fbgfx
from fbgfx.cli import main as fbgfx_cli

Draw = Callable[[fbgfx.Surface], None]

TILE_W, TILE_H = 160, 112
BACK, INK, ACCENT, DIM = (24, 28, 38), (235, 238, 245), (90, 200, 255), (130, 140, 160)
FILL, WARM = (40, 120, 200), (255, 170, 40)


def _label(s: fbgfx.Surface, text: str) -> None:
    s.text((TILE_W // 2, TILE_H - 4), text, fill=DIM, font=fbgfx.font(size=12), anchor="md")


# Each drawing primitive: the call the Drawing page shows beside its picture.
PRIMITIVES: dict[str, tuple[str, Draw]] = {
    "point": (
        "s.point([(x, y) ...], fill=INK)",
        lambda s: s.point([(20 + 8 * i, 20 + (i * 37) % 60) for i in range(16)], fill=INK),
    ),
    "line": (
        "s.line([(16, 80), (60, 20), (100, 70), (144, 16)], fill=ACCENT, width=3)",
        lambda s: s.line([(16, 80), (60, 20), (100, 70), (144, 16)], fill=ACCENT, width=3),
    ),
    "rectangle": (
        "s.rectangle((30, 14, 129, 83), fill=FILL, outline=INK, width=2)",
        lambda s: s.rectangle((30, 14, 129, 83), fill=FILL, outline=INK, width=2),
    ),
    "rounded_rectangle": (
        "s.rounded_rectangle((30, 14, 129, 83), 16, fill=FILL, outline=INK, width=2)",
        lambda s: s.rounded_rectangle((30, 14, 129, 83), 16, fill=FILL, outline=INK, width=2),
    ),
    "ellipse": (
        "s.ellipse((30, 14, 129, 83), fill=FILL, outline=INK, width=2)",
        lambda s: s.ellipse((30, 14, 129, 83), fill=FILL, outline=INK, width=2),
    ),
    "circle": (
        "s.circle((80, 48), 34, fill=WARM, outline=INK, width=2)",
        lambda s: s.circle((80, 48), 34, fill=WARM, outline=INK, width=2),
    ),
    "arc": (
        "s.arc((40, 10, 119, 89), 135, 405, fill=ACCENT, width=8)",
        lambda s: s.arc((40, 10, 119, 89), 135, 405, fill=ACCENT, width=8),
    ),
    "chord": (
        "s.chord((40, 10, 119, 89), 200, 340, fill=FILL, outline=INK)",
        lambda s: s.chord((40, 10, 119, 89), 200, 340, fill=FILL, outline=INK),
    ),
    "pieslice": (
        "s.pieslice((40, 10, 119, 89), 30, 300, fill=WARM, outline=INK)",
        lambda s: s.pieslice((40, 10, 119, 89), 30, 300, fill=WARM, outline=INK),
    ),
    "polygon": (
        "s.polygon([(80, 8), (140, 60), (100, 88), (30, 80), (20, 30)], fill=FILL, outline=INK)",
        lambda s: s.polygon([(80, 8), (140, 60), (100, 88), (30, 80), (20, 30)], fill=FILL, outline=INK),
    ),
    "regular_polygon": (
        "s.regular_polygon((80, 48, 40), 6, fill=WARM, outline=INK)",
        lambda s: s.regular_polygon((80, 48, 40), 6, fill=WARM, outline=INK),
    ),
    "text": (
        's.text((80, 48), "Hello", fill=INK, font=fbgfx.font(size=32), anchor="mm")',
        lambda s: s.text((80, 48), "Hello", fill=INK, font=fbgfx.font(size=32), anchor="mm"),
    ),
    "blit": (
        "s.blit(Image.radial_gradient('L').convert('RGB').resize((72, 72)), (44, 12))",
        lambda s: s.blit(Image.radial_gradient("L").convert("RGB").resize((72, 72)), (44, 12)),
    ),
}


def primitive(name: str) -> Image.Image:
    """One primitive drawn on a small XRGB8888 surface, labelled with its name."""
    s = fbgfx.Surface(TILE_W, TILE_H, "XRGB8888")
    s.clear(BACK)
    PRIMITIVES[name][1](s)
    _label(s, name)
    return s.to_image()


def gauge(s: fbgfx.Surface, value: float, smooth: bool, label: bool = True) -> None:
    """A 270-degree gauge (the dashboard example's), with or without antialiasing."""
    w, h = s.width, s.height
    s.clear((26, 32, 46))
    cx, cy, r, thick = w // 2, 92, 70, 14
    ring = (cx - r, cy - r, cx + r - 1, cy + r - 1)  # the circle of radius r around (cx, cy)
    s.arc(ring, 135, 405, fill=(48, 56, 76), width=thick, antialias=smooth)
    s.arc(ring, 135, 135 + 270 * value, fill=ACCENT, width=thick, antialias=smooth)
    a = math.radians(135 + 270 * value)
    tip = (cx - 0.5 + (r - 20) * math.cos(a), cy - 0.5 + (r - 20) * math.sin(a))
    side = (math.cos(a + math.pi / 2) * 4, math.sin(a + math.pi / 2) * 4)
    base = (cx - 0.5, cy - 0.5)
    needle = [tip, (base[0] + side[0], base[1] + side[1]), (base[0] - side[0], base[1] - side[1])]
    s.polygon(needle, fill=INK, antialias=smooth)
    s.circle(base, 6, fill=INK, antialias=smooth)
    font = fbgfx.font(size=15)
    s.text((cx, cy + 46), f"{value * 100:.0f}%", fill=INK, font=font, anchor="mm")
    if label:
        s.text((cx, h - 6), f"antialias={smooth}", fill=DIM, font=font, anchor="md")


def antialias() -> Image.Image:
    """The same gauge without and with ``antialias=True``, enlarged 2x (a pixel a 2x2 block)."""
    w, h, zoom = 200, 170, 2
    picture = Image.new("RGB", (2 * w * zoom, h * zoom))
    for i, smooth in enumerate((False, True)):
        s = fbgfx.Surface(w, h, "XRGB8888")
        gauge(s, 0.62, smooth)
        picture.paste(s.to_image().resize((w * zoom, h * zoom), Image.Resampling.NEAREST), (i * w * zoom, 0))
    return picture


def rotation() -> Image.Image:
    """One frame drawn on a 240x160 panel at rotate 0, 90, 180 and 270: what the panel shows."""
    tiles = []
    for rotate in (0, 90, 180, 270):
        with fbgfx.open("virtual:240x160:RGB565") as fb, fb.screen(rotate=rotate) as screen:
            with screen.frame() as s:
                s.clear(BACK)
                s.rectangle((0, 0, screen.width - 1, 27), fill=FILL)
                s.text((6, 6), f"rotate={rotate}", fill=INK, font=fbgfx.font(size=15))
                s.polygon([(10, 40), (40, 40), (10, 70)], fill=WARM)  # the logical top-left corner
                s.text((10, 78), "top left", fill=DIM, font=fbgfx.font(size=12))
            tiles.append(fb.snapshot().convert("RGB"))
    gap = 12
    picture = Image.new("RGB", (4 * 240 + 3 * gap, 160), (255, 255, 255))
    for i, tile in enumerate(tiles):
        picture.paste(tile, (i * (240 + gap), 0))
    return picture


def serve_page() -> Image.Image:
    """What ``fbgfx serve``'s page shows: its status bar over the display's canvas.

    The canvas is the display's own picture (a small dashboard drawn here); the bar is
    drawn after page.html's style (#222 bar, green dot when live). It is a picture of the
    page, not a browser screenshot: the docs build needs no browser.
    """
    with fbgfx.open("virtual:480x320:RGB565") as fb, fb.screen() as screen:
        with screen.frame() as s:
            s.clear((12, 16, 24))
            gauge_box = fbgfx.Surface(200, 170, "XRGB8888")
            gauge(gauge_box, 0.42, True, label=False)
            s.blit(gauge_box.to_image(), (20, 40))
            s.text((250, 60), "CPU  42%", fill=INK, font=fbgfx.font(size=22))
            s.text((250, 100), "MEM  1.2 GB", fill=INK, font=fbgfx.font(size=22))
            for i in range(8):
                s.rectangle((250 + i * 26, 230 - 12 * i, 270 + i * 26, 240), fill=ACCENT)
            s.text((20, 10), "dashboard", fill=DIM, font=fbgfx.font(size=16))
        display = fb.snapshot().convert("RGB")
    page_w, bar = 560, 22
    page = fbgfx.Surface(page_w, bar + 360, "XRGB8888")
    page.clear((0x11, 0x11, 0x11))
    page.rectangle((0, 0, page_w - 1, bar - 1), fill=(0x22, 0x22, 0x22))
    page.circle((14, bar // 2), 4, fill=(0x55, 0xCC, 0x55), antialias=True)
    page.text((26, bar // 2), "live: virtual:480x320:RGB565, touch on", fill=(0xBB, 0xBB, 0xBB), anchor="lm")
    page.blit(display, ((page_w - display.width) // 2, bar + (360 - display.height) // 2))
    return page.to_image()


def demo(path: pathlib.Path) -> None:
    """What ``fbgfx demo`` draws: a short run on a virtual display, saved by ``--out``."""
    with contextlib.redirect_stderr(io.StringIO()) as err:
        status = fbgfx_cli(["demo", "-d", "virtual:800x480:XRGB8888", "--seconds", "0.3", "--out", str(path)])
    if status != 0:
        raise RuntimeError(f"fbgfx demo failed: {err.getvalue()}")


def make_all(out: pathlib.Path) -> list[pathlib.Path]:
    """Write every picture into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    pictures: dict[str, Callable[[], Image.Image]] = {
        "antialias.png": antialias,
        "rotation.png": rotation,
        "serve-page.png": serve_page,
    }
    for name in PRIMITIVES:
        pictures[f"primitive-{name}.png"] = lambda name=name: primitive(name)  # type: ignore[misc]
    demo(out / "demo.png")
    written = [out / "demo.png"]
    for filename, make in pictures.items():
        path = out / filename
        make().save(path, optimize=True)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in make_all(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_generated")):
        print(path)
