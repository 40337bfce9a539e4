"""``fbgfx demo``: an animated tour of what fbgfx draws; a PNG of it where there is no screen."""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys
import time

import numpy as np
from PIL import Image

import fbgfx

from ..device import Framebuffer
from ..errors import FramebufferError
from ..screen import Screen
from ..surface import Surface
from ._args import add_duration, add_rotate
from ._command import Command, Context
from ._device import in_process_only, open_device, saved_screen

__all__ = ["COMMAND", "run_demo"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_duration(parser, "how long to run (default 10 on a screen, 2 on a virtual framebuffer)", flag="--seconds")
    add_rotate(parser)


def run(args: argparse.Namespace, context: Context) -> int:
    """Run the tour; on a machine without a framebuffer, on a virtual one, saved as a PNG."""
    virtual_note = None
    try:
        fb = open_device(args)
    except FramebufferError as e:
        # Only the default device may be replaced: -d names what the user wants.
        if args.device is not None or e.errno not in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
            raise
        fb = fbgfx.open("virtual:800x480:XRGB8888")
        default = os.environ.get("FRAMEBUFFER") or "/dev/fb0"
        virtual_note = f"no framebuffer here ({default} is missing): ran the demo on a virtual 800x480 one"
    with fb:
        virtual = fb.path.startswith("virtual:")
        # Nobody would see a demo on an in-process virtual framebuffer: keep a picture.
        out = args.out or ("demo.png" if in_process_only(fb) else None)
        duration = args.seconds if args.seconds is not None else (2.0 if virtual else 10.0)
        with saved_screen(fb, out, context, args.rotate) as screen:
            frames, elapsed = run_demo(screen, fb, duration)
    fps = frames / elapsed if elapsed > 0 else 0.0
    if virtual_note:
        print(
            f"fbgfx: {virtual_note}; {frames} frames ({fps:.0f} fps); picture: {os.path.abspath(out or '')}",
            file=sys.stderr,
        )
    elif out:
        print(f"fbgfx: {frames} frames ({fps:.0f} fps); picture: {os.path.abspath(out)}", file=sys.stderr)
    return 0


class _Demo:
    """The animated tour: four panels and an fps counter, drawn fresh every frame."""

    def __init__(self, screen: Screen, width: int, height: int, format_name: str) -> None:
        self.screen, self.w, self.h = screen, width, height
        self.format_name = format_name
        k = min(width / 800, height / 480)
        self.k = k
        self.fonts = {size: fbgfx.font(size=max(8, round(size * k))) for size in (14, 18, 26, 48)}
        pad = round(10 * k)
        top = round(44 * k)
        foot = round(30 * k)
        mid_x, mid_y = width // 2, top + (height - top - foot) // 2
        self.panels = {
            "primitives": (pad, top, mid_x - pad // 2, mid_y - pad // 2),
            "image": (mid_x + pad // 2, top, width - pad, mid_y - pad // 2),
            "alpha": (pad, mid_y + pad // 2, mid_x - pad // 2, height - foot),
            "buffers": (mid_x + pad // 2, mid_y + pad // 2, width - pad, height - foot),
        }
        x0, y0, x1, y1 = self.panels["image"]
        self.iterations = _mandelbrot(max(1, x1 - x0 - 2 * pad), max(1, y1 - y0 - round(30 * k) - pad))
        self.sprites = [_disc(round(46 * k), color) for color in ((255, 60, 60), (60, 255, 90), (70, 120, 255))]
        self.ball = [0.35, 0.3, 0.55, 0.42]  # x, y (fractions of the panel), velocity per second
        self.frames = 0

    def draw(self, s: Surface, t: float, dt: float, fps: float) -> None:
        w, h, k = self.w, self.h, self.k
        f14, f18, f26 = self.fonts[14], self.fonts[18], self.fonts[26]
        s.clear((14, 18, 30))
        s.rectangle((0, 0, w - 1, round(36 * k)), fill=(34, 46, 84))
        s.text((round(12 * k), round(18 * k)), "fbgfx demo", fill="white", font=f26, anchor="lm")
        buffering = getattr(self.screen, "buffering", "?")
        s.text(
            (w - round(12 * k), round(18 * k)),
            f"{w}x{h} {self.format_name}  {buffering} buffering",
            fill=(190, 205, 255),
            font=f18,
            anchor="rm",
        )
        for name, box in self.panels.items():
            s.rectangle(box, fill=(24, 30, 48), outline=(70, 84, 130), width=max(1, round(2 * k)))
            s.text((box[0] + round(8 * k), box[1] + round(6 * k)), name, fill=(150, 170, 230), font=f14)
        self._primitives(s, t)
        self._image(s, t)
        self._alpha(s, t)
        self._buffers(s, t, dt)
        s.text(
            (round(12 * k), h - round(15 * k)),
            f"{fps:5.1f} fps   frame {self.frames}   {t:4.1f} s",
            fill=(255, 230, 120),
            font=f18,
            anchor="lm",
        )
        s.text(
            (w - round(12 * k), h - round(15 * k)), "python -m fbgfx demo", fill=(120, 130, 160), font=f14, anchor="rm"
        )
        self.frames += 1

    def _primitives(self, s: Surface, t: float) -> None:
        x0, y0, x1, y1 = self.panels["primitives"]
        k = self.k
        pw, ph = x1 - x0, y1 - y0
        # A fan of lines sweeping round.
        cx, cy = x0 + pw * 0.22, y0 + ph * 0.58
        r = min(pw, ph) * 0.32
        for i in range(12):
            a = t * 1.5 + i * math.pi / 6
            color = (90 + 13 * i, 200 - 10 * i, 255 - 12 * i)
            s.line([(cx, cy), (cx + r * math.cos(a), cy + r * math.sin(a))], fill=color, width=max(1, round(2 * k)))
        # Rectangles and an ellipse.
        s.rectangle(
            (x0 + pw * 0.45, y0 + ph * 0.22, x0 + pw * 0.62, y0 + ph * 0.48),
            fill=(230, 90, 70),
            outline="white",
            width=max(1, round(2 * k)),
        )
        s.ellipse(
            (x0 + pw * 0.45, y0 + ph * 0.56, x0 + pw * 0.62, y0 + ph * 0.9),
            fill=(80, 200, 140),
            outline=(220, 255, 230),
            width=max(1, round(2 * k)),
        )
        # A star, turning.
        sx, sy, sr = x0 + pw * 0.82, y0 + ph * 0.56, min(pw, ph) * 0.26
        star = []
        for i in range(10):
            a = -math.pi / 2 + i * math.pi / 5 + t * 0.8
            rr = sr if i % 2 == 0 else sr * 0.45
            star.append((sx + rr * math.cos(a), sy + rr * math.sin(a)))
        s.polygon(star, fill=(255, 210, 60), outline=(255, 140, 0))

    def _image(self, s: Surface, t: float) -> None:
        x0, y0, x1, y1 = self.panels["image"]
        k = self.k
        n = self.iterations
        # A smooth blue-to-gold palette, cycled through the escape counts over time:
        # the picture moves at no cost.
        u = (np.sqrt(n / n.max()) + t * 0.08) % 1.0
        v = 1.0 - u
        rgb = np.empty(n.shape + (3,), np.uint8)
        rgb[..., 0] = np.clip(9.0 * v * u**3 * 255, 0, 255)
        rgb[..., 1] = np.clip(15.0 * v * v * u * u * 255, 0, 255)
        rgb[..., 2] = np.clip(8.5 * v**3 * u * 255 + 40 * v, 0, 255)
        rgb[n == n.max()] = 0
        s.blit(rgb, (x0 + round(10 * k), y0 + round(28 * k)))
        s.text(
            (x1 - round(8 * k), y0 + round(6 * k)),
            "numpy mandelbrot, blit",
            fill=(150, 170, 230),
            font=self.fonts[14],
            anchor="ra",
        )

    def _alpha(self, s: Surface, t: float) -> None:
        x0, y0, x1, y1 = self.panels["alpha"]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2 + 8 * self.k
        rr = min(x1 - x0, y1 - y0) * 0.16
        s.text((cx, cy), "alpha", fill=(235, 235, 245), font=self.fonts[48], anchor="mm")
        for i, sprite in enumerate(self.sprites):
            a = t * 0.9 + i * 2 * math.pi / 3
            px = cx + rr * math.cos(a) - sprite.width / 2
            py = cy + rr * math.sin(a) - sprite.height / 2
            s.blit(sprite, (round(px), round(py)), alpha=True)
        s.text(
            (x1 - round(8 * self.k), y0 + round(6 * self.k)),
            "RGBA sprites blended",
            fill=(150, 170, 230),
            font=self.fonts[14],
            anchor="ra",
        )

    def _buffers(self, s: Surface, t: float, dt: float) -> None:
        x0, y0, x1, y1 = self.panels["buffers"]
        k = self.k
        inner = (x0 + round(10 * k), y0 + round(28 * k), x1 - round(10 * k), y1 - round(10 * k))
        # A scrolling waveform: a new curve every frame, never a half-drawn one.
        mid, amp = (inner[1] + inner[3]) / 2, (inner[3] - inner[1]) * 0.3
        xs = np.linspace(inner[0], inner[2], 120)
        for phase, color in ((0.0, (70, 110, 200)), (1.7, (200, 90, 160))):
            ys = mid + amp * np.sin(xs / (40 * k) - t * 3 + phase) * np.cos(xs / (170 * k) + t * 0.7)
            s.line(list(zip(xs.tolist(), ys.tolist())), fill=color, width=max(1, round(2 * k)))
        # A bouncing ball with a fading trail.
        b = self.ball
        b[0] += b[2] * dt
        b[1] += b[3] * dt
        for i in (0, 1):
            if not 0.0 <= b[i] <= 1.0:
                b[i] = min(max(b[i], 0.0), 1.0)
                b[i + 2] = -b[i + 2]
        radius = round(16 * k)
        lo_x, hi_x = inner[0] + radius, inner[2] - radius
        lo_y, hi_y = inner[1] + radius, inner[3] - radius
        for i in range(5, -1, -1):
            gx = min(max(lo_x + (b[0] - b[2] * 0.05 * i) * (hi_x - lo_x), lo_x), hi_x)
            gy = min(max(lo_y + (b[1] - b[3] * 0.05 * i) * (hi_y - lo_y), lo_y), hi_y)
            level = 1.0 - i / 6
            color = (
                (round(250 * level), round(250 * level), 255)
                if i == 0
                else (round(40 + 80 * level), round(60 + 100 * level), round(120 + 120 * level))
            )
            s.ellipse(
                (gx - radius, gy - radius, gx + radius, gy + radius),
                fill=color,
                outline=(90, 160, 255) if i == 0 else None,
                width=max(1, round(3 * k)),
            )
        label = "page flips" if getattr(self.screen, "buffering", "") == "flip" else "double buffering"
        s.text(
            (x1 - round(8 * k), y0 + round(6 * k)),
            f"{label}: no tearing",
            fill=(150, 170, 230),
            font=self.fonts[14],
            anchor="ra",
        )


def _mandelbrot(width: int, height: int, steps: int = 48) -> np.ndarray:
    """Escape counts of the Mandelbrot set, (height, width) float32 (a picture made here, no download)."""
    x = np.linspace(-2.2, 0.8, width, dtype=np.float32)
    y = np.linspace(-1.2, 1.2, height, dtype=np.float32)
    c = x[None, :] + 1j * y[:, None]
    z = np.zeros_like(c)
    counts = np.full(c.shape, steps, np.float32)
    alive = np.ones(c.shape, bool)
    for i in range(steps):
        z[alive] = z[alive] * z[alive] + c[alive]
        escaped = alive & (np.abs(z) > 2)
        counts[escaped] = i
        alive &= ~escaped
    return counts


def _disc(radius: int, color: tuple[int, int, int]) -> Image.Image:
    """A soft-edged translucent RGBA disc sprite."""
    size = 2 * radius + 1
    yy, xx = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    d = np.sqrt(xx * xx + yy * yy) / max(radius, 1)
    alpha = (np.clip((1.0 - d) * 6, 0, 1) * 170).astype(np.uint8)
    rgba = np.empty((size, size, 4), np.uint8)
    rgba[..., :3] = color
    rgba[..., 3] = alpha
    return Image.fromarray(rgba, "RGBA")


def run_demo(screen: Screen, fb: Framebuffer, duration: float) -> tuple[int, float]:
    """Run the tour on an open screen for ``duration`` seconds; returns (frames, elapsed seconds)."""
    demo = _Demo(screen, screen.width, screen.height, fb.format.name)
    start = last = time.monotonic()
    fps, fps_frames, fps_start = 0.0, 0, start
    while True:
        now = time.monotonic()
        with screen.frame() as s:
            demo.draw(s, now - start, now - last, fps)
        last = now
        fps_frames += 1
        if now - fps_start >= 0.5:
            fps, fps_frames, fps_start = fps_frames / (now - fps_start), 0, now
        if time.monotonic() - start >= duration:
            return demo.frames, time.monotonic() - start


COMMAND = Command(
    name="demo",
    help="an animated tour; writes demo.png without a screen",
    description="An animated tour: primitives, text, an image, alpha blending, double buffering and an fps "
    "counter. With no framebuffer present it runs on a virtual 800x480 one and writes the last frame to a PNG.",
    add_arguments=_arguments,
    run=run,
    out=True,
)
