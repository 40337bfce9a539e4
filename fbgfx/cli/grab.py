"""``fbgfx grab``: save what the screen shows as an image file."""

from __future__ import annotations

import argparse

from PIL import Image

from ..drm import read_scanout
from ..pixelformat import PixelFormat
from ..screen import resolve_rotate
from ._args import add_rotate, parse_region
from ._command import Command, Context
from ._device import drm_target, open_device
from ._pictures import image_format, save_image

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("output", metavar="OUT.png", help="where to write the picture")
    parser.add_argument("--region", metavar="X,Y,W,H", help="only this rectangle of the visible page")
    add_rotate(parser)


def run(args: argparse.Namespace, context: Context) -> int:
    """Save the visible page (or ``--region`` of it); the device is opened read-only.

    With ``--rotate DEG`` (or ``$FBGFX_ROTATE``) the panel shows a picture turned DEG
    degrees clockwise: the picture is turned back, so the file holds it as it was
    drawn, and ``--region`` is in its coordinates.
    """
    del context  # every command is run with one; this one shows no notes
    image_format(args.output)  # before the device is opened: a typo changes nothing
    rotate = resolve_rotate(args.rotate)
    target = drm_target(args)
    if target is not None:
        # What the card shows, whoever shows it (the buffer on screen, through GETFB2).
        name, native = read_scanout(target[0], target[1].get("connector"))
        image = Image.fromarray(PixelFormat.from_name(name).unpack(native))
    else:
        with open_device(args, readonly=True) as fb:
            image = fb.snapshot()
    if rotate:
        image = image.rotate(rotate, expand=True)  # Pillow turns counter-clockwise: back
    region = parse_region(args.region, image.width, image.height) if args.region else None
    if region:
        x, y, w, h = region
        image = image.crop((x, y, x + w, y + h))
    save_image(image, args.output)
    return 0


COMMAND = Command(
    name="grab",
    help="save a screenshot of the visible page",
    description="Save what the screen shows (the visible page, any pixel format) as an image file; the "
    "format follows the extension (.png, .bmp, .jpg ...). OUT is replaced whole or not at all. "
    "With --rotate DEG, the picture as drawn on a screen turned DEG degrees clockwise. On a drm: display "
    "(as root) every plane on screen is read and composed as the display engine does, layers included; "
    "no writeback connector is used.",
    add_arguments=_arguments,
    run=run,
)
