"""``fbgfx mode``: print, list, test or set the video mode, with a test card to check it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..device import Framebuffer
from ..modes import Timings, parse_mode
from ..screen import resolve_rotate
from ..screeninfo import describe_mode
from ._args import add_duration, add_rotate
from ._clock import now, wait_until
from ._command import CliError, Command, Context
from ._device import open_device, open_screen, save_screen

__all__ = ["COMMAND", "mode_card"]

_BARS = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255)]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mode", nargs="?", metavar="WxH[-BPP][@VIRTUAL_HEIGHT]", help="the mode to test or set")
    parser.add_argument("--list", action="store_true", help="list the modes the system knows for this device")
    parser.add_argument("--test", action="store_true", help="ask the driver whether it takes MODE; change nothing")
    parser.add_argument("--keep", action="store_true", help="leave MODE set after exit")
    add_duration(parser, "preview for this many seconds, then restore")
    add_rotate(parser)


def run(args: argparse.Namespace, context: Context) -> int:
    """Print, list, test or set (and preview) the mode."""
    wanted: dict[str, Any] | None = parse_mode(args.mode).set_mode_args() if args.mode else None
    if (args.test or args.keep) and not wanted:
        raise CliError("--test and --keep need a MODE, e.g. fbgfx mode 800x600-16 --test")
    if args.test and args.keep:
        raise CliError("--test changes nothing, so it cannot be combined with --keep")
    resolve_rotate(args.rotate)  # a bad $FBGFX_ROTATE fails before the mode changes
    with open_device(args) as fb:
        if args.list:
            _list_modes(fb)
        if not wanted:
            if not args.list:
                print(f"{describe_mode(_current(fb))} {fb.format.name}")
            return 0
        if args.test:
            got = fb.test_mode(**wanted)
            print(f"{args.mode}: the driver takes it ({describe_mode(got)})")
            return 0
        fb.set_mode(**wanted)
        if args.keep:
            fb.keep_mode()
            print(f"mode set: {describe_mode(_current(fb))} {fb.format.name}")
            save_screen(fb, args.out)
            return 0
        _preview(fb, args, context)
    return 0


def _current(fb: Framebuffer) -> dict[str, int]:
    """The mode as :func:`describe_mode` reads it (a drm: display has no ``fb.var``)."""
    if fb.drm is None:
        var = fb.var
        return {k: getattr(var, k) for k in ("xres", "yres", "bits_per_pixel", "xres_virtual", "yres_virtual")}
    return {
        "xres": fb.width,
        "yres": fb.height,
        "bits_per_pixel": fb.format.bpp,
        "xres_virtual": fb.width,
        "yres_virtual": fb.height,
    }


def _list_modes(fb: Framebuffer) -> None:
    var = _current(fb)
    refresh: float | None
    if fb.drm is not None:
        refresh = float(fb.drm.mode.vrefresh) or None
    else:
        rates = Timings.from_var(fb.var).rates(var["xres"], var["yres"])
        refresh = rates.refresh if rates else None
    modes = list(fb.modes())
    print(f"current: {describe_mode(var)} {fb.format.name}" + (f" ({refresh:.0f} Hz)" if refresh else ""))
    if not modes:
        print("  (the system lists no modes for this device; any mode the driver takes can still be tried)")
    for m in modes:
        current = (
            (m.width, m.height) == (var["xres"], var["yres"])
            and m.bpp in (None, var["bits_per_pixel"])
            and (not refresh or not m.refresh or abs(m.refresh - refresh) < 1.5)
        )
        print(f"{'*' if current else ' '} {m.label}")


def _preview(fb: Framebuffer, args: argparse.Namespace, context: Context) -> None:
    """Show a test card in the new mode until Ctrl-C or --duration (the mode is restored by close)."""
    deadline = None if args.duration is None else now() + args.duration
    label = f"{describe_mode(_current(fb))} {fb.format.name}"  # before the Screen adds a page
    screen = open_screen(fb, args.out, context, args.rotate)
    try:
        screen.present(mode_card(screen.width, screen.height, label), fit="stretch")
        if deadline is None and sys.stderr.isatty():
            print(f"fbgfx: previewing {args.mode}; Ctrl-C restores the previous mode", file=sys.stderr)
        try:
            wait_until(deadline)
        finally:
            save_screen(fb, args.out)
    finally:
        screen.close()


def mode_card(width: int, height: int, label: str = "") -> Image.Image:
    """A PIL RGB test card: colour bars, a gray ramp, a border and a label.

    Any size a driver takes works, down to 1x1: parts with no room are left out.
    """
    img = Image.new("RGB", (width, height), "black")
    top = height * 2 // 3
    draw = ImageDraw.Draw(img)
    for i, color in enumerate(_BARS):
        x0, x1 = i * width // 7, (i + 1) * width // 7 - 1
        if top > 0 and x1 >= x0:  # a screen under 7 pixels wide has no room for some bars
            draw.rectangle((x0, 0, x1, top - 1), fill=color)
    if height > top:
        ramp = np.repeat(np.linspace(0, 255, width).astype(np.uint8)[None, :], height - top, axis=0)
        img.paste(Image.fromarray(np.dstack([ramp] * 3)), (0, top))
    border = min(max(2, min(width, height) // 60), (min(width, height) + 1) // 2)
    draw.rectangle((0, 0, width - 1, height - 1), outline=(255, 0, 0), width=border)
    if label:
        font: Any
        try:
            font = ImageFont.load_default(size=max(12, height // 16))
        except TypeError:  # Pillow < 10.1 has only the small bitmap font
            font = ImageFont.load_default()
        box = draw.textbbox((width // 2, top // 2), label, font=font, anchor="mm")
        # Only where it fits inside the bars: a tiny mode gets the card without it.
        if box[0] - 8 >= border and box[2] + 8 < width - border and box[1] - 6 >= border and box[3] + 6 < top:
            draw.rectangle((box[0] - 8, box[1] - 6, box[2] + 8, box[3] + 6), fill="black")
            draw.text((width // 2, top // 2), label, fill="white", font=font, anchor="mm")
    return img


COMMAND = Command(
    name="mode",
    help="list, test or set the video mode (like fbset)",
    description="Without arguments: print the current mode. With a MODE such as 800x600-16 or 800x600-32@1200 "
    "(1200 virtual lines): set it and show a test pattern until Ctrl-C or --duration, then put the old mode "
    "back; --keep leaves it set; --test only asks the driver.",
    add_arguments=_arguments,
    run=run,
    out=True,
)
