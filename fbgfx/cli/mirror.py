"""``fbgfx mirror``: show on one display what another shows (the fbcp successor for small panels)."""

from __future__ import annotations

import argparse
import sys
import threading

import fbgfx

from ..kiosk.mirror import MIRROR_FITS, Mirror, MirrorStats
from ._args import add_duration, add_rotate
from ._command import CliError, Command, Context
from ._stop import stop_on_sigterm

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source",
        metavar="SOURCE",
        help="the display to copy: /dev/fbN, drm:[CARD][:connector=NAME], virtual:...:file=PATH",
    )
    p.add_argument("dest", metavar="DEST", help="the display to show it on: /dev/fbN, drm:..., virtual:...")
    p.add_argument(
        "--fit",
        choices=MIRROR_FITS,
        default="fit",
        help="fit: scale to fit, letterboxed (default); fill: cover DEST, cropping; stretch: ignore the aspect ratio",
    )
    add_rotate(p)
    p.add_argument(
        "--fps", type=_fps, metavar="N", help="looks a second (default: the source's refresh rate, at most 60)"
    )
    p.add_argument("--region", metavar="X0,Y0,X1,Y1", help="mirror only this rectangle of SOURCE (X1, Y1 exclusive)")
    add_duration(p)
    p.add_argument(
        "--stats", action="store_true", help="print frames mirrored and skipped, changed area and CPU every second"
    )


def _fps(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected frames a second, got {text!r}") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"--fps must be above 0 and at most 1000, got {text!r}")
    return value


def _region(text: str | None) -> tuple[int, int, int, int] | None:
    if text is None:
        return None
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"--region must be X0,Y0,X1,Y1 (four integers), not {text!r}") from None
    if x0 < 0 or y0 < 0 or x1 <= x0 or y1 <= y0:
        raise CliError(f"--region {text} is empty: X1 must be above X0 >= 0 and Y1 above Y0 >= 0")
    return x0, y0, x1, y1


def run(args: argparse.Namespace, context: Context) -> int:
    """Mirror until --duration, Ctrl-C or SIGTERM; report what was done on stderr."""
    del context  # every command is run with one; this one reports on stderr itself
    region = _region(args.region)
    stop = threading.Event()
    with (
        stop_on_sigterm(stop),
        fbgfx.open(args.dest) as dest,
        Mirror(args.source, dest, fit=args.fit, rotate=args.rotate, region=region) as mirror,
    ):
        try:
            mirror.run(args.fps, args.duration, stop, _print_stats if args.stats else None)
        finally:
            print(f"fbgfx: mirror: {mirror.stats}", file=sys.stderr, flush=True)
    return 0


def _print_stats(stats: MirrorStats) -> None:
    print(f"fbgfx: mirror: {stats}", file=sys.stderr, flush=True)


COMMAND = Command(
    name="mirror",
    help="show on one display what another shows (e.g. HDMI on a small SPI panel)",
    description="Show on DEST what SOURCE shows, continuously, whoever draws SOURCE: /dev/fbN, a DRM "
    "connector another program drives (drm:card0:connector=HDMI-A-1; reading another program's buffers "
    "needs root), or a file-backed virtual display. Only the tiles that changed are scaled and written; "
    "shrinking averages areas (box filter), growing is bilinear, 1:1 is exact. The mirror follows mode "
    "changes and flips, keeps the last picture while SOURCE shows nothing, and reports frames mirrored, "
    "skipped, changed area and CPU on exit. "
    "Example: sudo fbgfx mirror drm:card0:connector=HDMI-A-1 /dev/fb1 --fps 30 --rotate 90",
    add_arguments=_arguments,
    run=run,
)
