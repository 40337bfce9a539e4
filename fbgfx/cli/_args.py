"""Argument types and options the ``fbgfx`` commands share: durations, rotation,
fit, sizes, regions and colours.
"""

from __future__ import annotations

import argparse
import re

from ..color import parse_color
from ..screen import resolve_rotate
from ._command import CliError

__all__ = [
    "MAX_SIDE",
    "add_duration",
    "add_fit",
    "add_rotate",
    "parse_background",
    "parse_region",
    "parse_size",
    "seconds",
]


# Most a caller would give as a screen or frame size; guards huge allocations from typos.
MAX_SIDE = 16384


def seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"seconds must be a finite number >= 0, got {text!r}")
    return value


def add_duration(
    parser: argparse.ArgumentParser,
    text: str = "stop after S seconds (default: until Ctrl-C or SIGTERM)",
    flag: str = "--duration",
) -> None:
    """``--duration S`` (or ``flag``): how long a command runs, in :func:`seconds`."""
    parser.add_argument(flag, type=seconds, metavar="S", help=text)


def add_rotate(parser: argparse.ArgumentParser) -> None:
    """``--rotate DEG``: the picture turned clockwise on the panel (``Screen(rotate=)``)."""
    parser.add_argument(
        "--rotate",
        type=_degrees,
        metavar="DEG",
        help="turn the picture DEG degrees clockwise on the panel: 0, 90, 180 or 270 (default: $FBGFX_ROTATE, else 0)",
    )


def _degrees(text: str) -> int:
    """argparse type: 0, 90, 180 or 270."""
    try:
        return resolve_rotate(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 0, 90, 180 or 270 (degrees clockwise), got {text!r}") from None


def add_fit(parser: argparse.ArgumentParser) -> None:
    """``--fit`` / ``--fill`` / ``--stretch`` / ``--center``, one of them, default fit."""
    group = parser.add_mutually_exclusive_group()
    helps = {
        "fit": "scale to fit inside the screen, keeping the aspect ratio (default)",
        "fill": "scale to cover the whole screen, cropping the overflow",
        "stretch": "scale to the screen size, ignoring the aspect ratio",
        "center": "no scaling, centred (cropped when larger)",
    }
    for name, text in helps.items():
        group.add_argument(f"--{name}", dest="fit", action="store_const", const=name, help=text)
    parser.set_defaults(fit="fit")


def parse_size(text: str | None, what: str = "--size") -> tuple[int, int]:
    """Parse ``WIDTHxHEIGHT``.

    Raises:
        CliError: Not two positive integers joined by ``x``, or a side beyond 16384.
    """
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m:
        raise CliError(f"{what} must be WIDTHxHEIGHT, e.g. 800x480, not {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (0 < w <= MAX_SIDE and 0 < h <= MAX_SIDE):
        raise CliError(f"{what} {w}x{h} is out of range (1..{MAX_SIDE} per side)")
    return w, h


def parse_region(text: str, width: int, height: int) -> tuple[int, int, int, int]:
    """Parse ``X,Y,W,H`` and check it lies inside a ``width`` x ``height`` page.

    Raises:
        CliError: Not four integers, or not inside the page.
    """
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"--region must be X,Y,W,H (four integers), not {text!r}") from None
    if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > width or y + h > height:
        raise CliError(f"--region {text} is not inside the {width}x{height} screen")
    return x, y, w, h


def parse_background(text: str) -> tuple[int, int, int]:
    """A ``--background`` colour as RGB, read as drawing reads colours (:func:`fbgfx.color.parse_color`).

    Raises:
        CliError: Not a colour.
    """
    try:
        return parse_color(text)[:3]
    except ValueError:
        raise CliError(f"unknown colour {text!r}: use a name (black, navy), #rrggbb or rgb(r,g,b)") from None
