"""``fbgfx idle``: dim the backlight, then blank the display after idle time; wake on touch."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading

import fbgfx

from .._open import resolve
from ..device import Framebuffer
from ..kiosk.idle import Idle
from ._args import add_duration, seconds
from ._command import CliError, Command, Context
from ._stop import stop_on_sigterm

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dim-after", type=seconds, default=30.0, metavar="S", help="dim after S seconds without input (default 30)"
    )
    p.add_argument(
        "--off-after",
        type=seconds,
        default=120.0,
        metavar="S",
        help="blank after S seconds without input, counted from the last input (default 120)",
    )
    p.add_argument(
        "--dim",
        type=_fraction,
        default=0.2,
        metavar="LEVEL",
        help="dimmed brightness, 0..1 of the maximum (default 0.2)",
    )
    p.add_argument(
        "--touch",
        metavar="EVENTDEV",
        action="append",
        help="the input device to watch (default: the touchscreen; repeatable)",
    )
    p.add_argument("--any-input", action="store_true", help="any input device wakes the display (keyboards, mice too)")
    p.add_argument(
        "--backlight",
        metavar="NAME",
        help="the backlight in /sys/class/backlight (default: the display's own, else the only one)",
    )
    p.add_argument(
        "--no-blank",
        action="store_true",
        help="leave the display on when dark: backlight only (e.g. a display another program owns)",
    )
    add_duration(p)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction 0..1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"--dim is a fraction of the full brightness, 0..1, not {text!r}")
    return value


def run(args: argparse.Namespace, context: Context) -> int:
    """Watch until --duration, Ctrl-C or SIGTERM; the display is left lit."""
    if args.off_after < args.dim_after:
        raise CliError(f"--off-after ({args.off_after:g} s) comes before --dim-after ({args.dim_after:g} s)")
    stop = threading.Event()
    with contextlib.ExitStack() as stack:
        stack.enter_context(stop_on_sigterm(stop))
        fb: Framebuffer | None = None
        if not args.no_blank:
            fb = stack.enter_context(fbgfx.open(args.device))
        touch = args.touch if args.touch and len(args.touch) > 1 else (args.touch[0] if args.touch else None)
        backlight = args.backlight
        if fb is None and backlight is None:
            from ..kiosk.backlight import find_backlight  # noqa: PLC0415 (the display named only picks the backlight)

            found = find_backlight(resolve(args.device), None)
            backlight = found.name if found is not None else None
        idle = stack.enter_context(
            Idle(
                fb,
                None if touch is None and args.any_input else touch,
                dim_after=args.dim_after,
                off_after=args.off_after,
                dim=args.dim,
                backlight=backlight if backlight is not None else (None if fb is not None else False),
                any_input=args.any_input,
                on_change=lambda state: print(f"fbgfx: idle: {state}", file=sys.stderr, flush=True),
            )
        )
        print(f"fbgfx: idle: watching {', '.join(idle.inputs)}", file=sys.stderr, flush=True)
        for note in idle.notes:
            print(f"fbgfx: note: {note}", file=sys.stderr, flush=True)
        said = len(idle.notes)
        waited = 0.0
        while not stop.wait(0.5):
            waited += 0.5
            for note in idle.notes[said:]:
                print(f"fbgfx: note: {note}", file=sys.stderr, flush=True)
            said = len(idle.notes)
            if idle.error is not None:
                raise idle.error
            if args.duration is not None and waited >= args.duration:
                break
    del context  # notes are printed as they come, not at the end
    return 0


COMMAND = Command(
    name="idle",
    help="dim, then blank the display when nobody touches it; a touch wakes it",
    description="After --dim-after seconds without input, dim the backlight to --dim; after --off-after "
    "seconds, blank the display (backlight power off, and FBIOBLANK on /dev/fbN or the CRTC off on drm:). "
    "Any touch (any input with --any-input) lights it at once; while dark the input device is grabbed "
    "(EVIOCGRAB), so the waking touch reaches no other program. Ctrl-C, SIGTERM or an error leave the "
    "display lit and the backlight at its starting level. The backlight is the display's own in "
    "/sys/class/backlight, else the only one, else --backlight NAME; with none, blanking only. "
    "Example: fbgfx idle -d /dev/fb0 --dim-after 60 --off-after 300 --dim 0.1",
    add_arguments=_arguments,
    run=run,
)
