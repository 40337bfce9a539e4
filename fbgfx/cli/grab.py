"""``fbgfx grab``: save what the screen shows as an image file."""

from __future__ import annotations

import argparse

from ._common import Command, Context, image_format, open_device, parse_region, save_image

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("output", metavar="OUT.png", help="where to write the picture")
    parser.add_argument("--region", metavar="X,Y,W,H", help="only this rectangle of the visible page")


def run(args: argparse.Namespace, context: Context) -> int:
    """Save the visible page (or ``--region`` of it); the device is opened read-only."""
    image_format(args.output)  # before the device is opened: a typo changes nothing
    with open_device(args, readonly=True) as fb:
        region = parse_region(args.region, fb.width, fb.height) if args.region else None
        image = fb.snapshot()
    if region:
        x, y, w, h = region
        image = image.crop((x, y, x + w, y + h))
    save_image(image, args.output)
    return 0


COMMAND = Command(
    name="grab",
    help="save a screenshot of the visible page",
    description="Save what the screen shows (the visible page, any pixel format) as an image file; the "
    "format follows the extension (.png, .bmp, .jpg ...). OUT is replaced whole or not at all.",
    add_arguments=_arguments,
    run=run,
)
