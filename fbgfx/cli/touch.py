"""``fbgfx touch``: list input devices, print touches in screen coordinates, calibrate.

::

    fbgfx touch --list          # the input devices, and which one fbgfx would take
    fbgfx touch                 # print each touch: down/move/up, x, y, slot (Ctrl-C to stop)
    fbgfx touch --calibrate     # crosshairs to tap; prints FBGFX_TOUCH_CALIBRATION
"""

from __future__ import annotations

import argparse
import errno
import os
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .. import touch
from .._open import resolve
from ..drm import is_drm_spec
from ..errors import FramebufferError, TouchError
from ..touch import _evdev
from ._args import add_duration
from ._command import Command, Context
from ._device import open_device
from ._pictures import read_fifo

__all__ = ["COMMAND"]

#: The largest miss (pixels) a calibration may leave after the best fit: taps further off
#: than this from where one matrix puts them were not at their crosshairs.
MAX_MISS = 10.0

#: Where --calibrate puts its crosshairs (fractions of the logical screen) and their names.
TARGETS = [
    ((0.1, 0.1), "top left"),
    ((0.9, 0.1), "top right"),
    ((0.9, 0.9), "bottom right"),
    ((0.1, 0.9), "bottom left"),
    ((0.5, 0.5), "centre"),
]


def _arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the input devices and the one fbgfx would take")
    what.add_argument(
        "--calibrate", action="store_true", help="draw crosshairs to tap; print the matrix for $FBGFX_TOUCH_CALIBRATION"
    )
    p.add_argument(
        "--touch",
        metavar="PATH",
        help="input device or .evemu recording (default: $FBGFX_TOUCH, else the first touchscreen)",
    )
    p.add_argument(
        "--rotate",
        type=int,
        choices=[0, 90, 180, 270],
        help="degrees the picture is turned clockwise on the panel (default: $FBGFX_ROTATE, else 0)",
    )
    p.add_argument(
        "--calibration",
        metavar="'A B C D E F'",
        help="matrix for the printed events (default: $FBGFX_TOUCH_CALIBRATION)",
    )
    p.add_argument("--count", type=int, metavar="N", help="stop after printing N events")
    add_duration(p, "stop after S seconds (default: until Ctrl-C)", flag="--seconds")


def run(args: argparse.Namespace, context: Context) -> int:
    """List, print or calibrate, as the options say; returns the exit status."""
    del context  # every command is run with one; this one shows no notes
    if args.count is not None and args.count < 1:
        raise ValueError(f"--count must be 1 or more, not {args.count}")
    if args.list:
        return _list()
    if args.calibrate:
        return _calibrate(args)
    return _print_events(args)


# -- --list ---------------------------------------------------------------------------------


def _list() -> int:
    devices = touch.list_devices()
    if not devices:
        print(_evdev.describe_dev_input())
        return 0
    try:
        chosen: str | None = touch.find_device(devices).path
    except TouchError:
        chosen = None
    for d in devices:
        mark = "*" if d.path == chosen else " "
        print(f"{mark} {d.path}  {_describe(d)}")
    if chosen is None:
        print("no touchscreen or tablet among them")
    elif os.environ.get("FBGFX_TOUCH"):
        print(f"* = $FBGFX_TOUCH ({chosen})")
    else:
        print("* = what fbgfx.touch.open() takes (set $FBGFX_TOUCH to choose another)")
    return 0


def _describe(d: _evdev.InputDevice) -> str:
    """The device's summary, with its ranges when it can be opened."""
    if d.kind is None:
        return d.summary()
    try:
        fd = _evdev.open_fd(d.path)
    except TouchError as e:
        hint = "join the 'input' group to open it" if e.errno in (errno.EACCES, errno.EPERM) else e.strerror
        return f"{d.summary()} ({hint})"
    try:
        return _evdev.query(fd, d.path).summary()
    except TouchError:
        return d.summary()
    finally:
        os.close(fd)


# -- printing events ----------------------------------------------------------------------------


@dataclass
class _Panel:
    """Where printed touches land: the framebuffer's size turned by ``rotate``, without
    taking the display over as a Screen would."""

    fb: Any
    rotate: int


def _rotation(args: argparse.Namespace) -> int:
    if args.rotate is not None:
        return int(args.rotate)
    text = os.environ.get("FBGFX_ROTATE", "").strip() or "0"
    if text not in ("0", "90", "180", "270"):
        raise ValueError(f"$FBGFX_ROTATE must be 0, 90, 180 or 270 (degrees clockwise), not {text!r}")
    return int(text)


def _print_events(args: argparse.Namespace) -> int:
    rotate = _rotation(args)
    try:
        # Only the size is needed: look without changing anything, except on a drm:
        # display, which cannot be opened without being taken over.
        fb = open_device(args, readonly=not is_drm_spec(resolve(args.device)))
    except FramebufferError as e:
        if args.device is not None or e.errno != errno.ENOENT:
            raise
        fb = None  # no display: the device's own coordinates
    try:
        where = None if fb is None else _Panel(fb, rotate)
        deadline = None if args.seconds is None else time.monotonic() + args.seconds
        with _open_touch(args.touch, where, args.calibration, deadline) as ts:
            w, h = ts.size
            on = "raw device coordinates (no framebuffer)" if fb is None else f"{fb.path} {w}x{h}, rotate {rotate}"
            print(f"{ts.device.name} ({ts.path}) on {on}; Ctrl-C to stop", file=sys.stderr, flush=True)
            printed = 0
            while args.count is None or printed < args.count:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    break
                events = ts.read(wait)
                if not events and ts.ended:
                    break
                for ev in events[: None if args.count is None else args.count - printed]:
                    print(f"{ev.type:<4} x={ev.x} y={ev.y} slot={ev.slot} t={ev.time:.3f}", flush=True)
                    printed += 1
    finally:
        if fb is not None:
            fb.close()
    return 0


# -- --calibrate ---------------------------------------------------------------------------------


def _calibrate(args: argparse.Namespace) -> int:
    import fbgfx  # noqa: PLC0415 (fbgfx.open only when calibrating)

    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    with open_device(args) as fb:
        # The touch device is read raw (no screen, no calibration): its own coordinates.
        with fb.screen(rotate=args.rotate) as screen, _open_touch(args.touch, None, touch.IDENTITY, deadline) as ts:
            w, h = screen.width, screen.height
            to_panel = touch.TouchMapping((0, 0), (0, 0), (fb.width, fb.height), screen.rotate).to_panel
            raw_w, raw_h = ts.size
            font = fbgfx.font(size=max(12, min(w, h) // 24))
            touched, targets = [], []
            events = _events(ts, deadline)
            for (fx, fy), name in TARGETS:
                x, y = min(int(fx * w), w - 1), min(int(fy * h), h - 1)
                _crosshair(screen, x, y, w, h, f"tap the crosshair ({name})", font)
                print(f"tap the crosshair at the {name}", file=sys.stderr, flush=True)
                rx, ry = _one_tap(events)
                touched.append(((rx + 0.5) / raw_w, (ry + 0.5) / raw_h))
                px, py = to_panel(x, y)
                targets.append(((px + 0.5) / fb.width, (py + 0.5) / fb.height))
            matrix = touch.calibration_from_points(touched, targets)
            miss, worst = _largest_miss(matrix, touched, targets, fb.width, fb.height)
            good = miss <= MAX_MISS
            with screen.frame() as s:
                s.clear("black")
                s.text((w // 2, h // 2), "calibrated" if good else "try again", fill="white", font=font, anchor="mm")
    if not good:
        raise TouchError(
            errno.EINVAL,
            f"no calibration: the taps do not fit one matrix (the {TARGETS[worst][1]} tap is still {miss:.0f} "
            f"pixels off after the best fit, more than {MAX_MISS:.0f}); tap the centre of each crosshair and "
            "run --calibrate again",
            ts.path,
        )
    print(f"largest miss after calibration: {miss:.1f} pixels", file=sys.stderr)
    print(f'export FBGFX_TOUCH_CALIBRATION="{touch.format_calibration(matrix)}"')
    return 0


def _open_touch(path: str | None, screen: Any, calibration: Any, deadline: float | None) -> touch.Touchscreen:
    """touch.open(), with a recording in a FIFO (``--touch`` or ``$FBGFX_TOUCH``) read
    within ``deadline`` (``--seconds``): opening a FIFO waits for a writer."""
    path = path or os.environ.get("FBGFX_TOUCH") or None
    if path is not None and path.endswith(".evemu"):
        data = read_fifo(path, deadline, "a recording", "--seconds")
        if data is not None:
            return touch.open_recording(path, screen, calibration, data=data)
    return touch.open(path, screen, calibration)


def _crosshair(screen: Any, x: int, y: int, w: int, h: int, text: str, font: Any) -> None:
    arm = max(8, min(w, h) // 16)
    with screen.frame() as s:
        s.clear("black")
        s.line([(x - arm, y), (x + arm, y)], fill="white", width=1)
        s.line([(x, y - arm), (x, y + arm)], fill="white", width=1)
        s.ellipse((x - arm // 2, y - arm // 2, x + arm // 2, y + arm // 2), outline="red")
        s.text((w // 2, h // 3 if y > h // 2 else 2 * h // 3), text, fill="white", font=font, anchor="mm")


def _events(ts: touch.Touchscreen, deadline: float | None) -> Iterator[touch.TouchEvent]:
    """Touch events one at a time until ``deadline``; a recording's end is an error."""
    while True:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            raise TouchError(errno.ETIMEDOUT, "no tap in time (--seconds)", ts.path)
        events = ts.read(wait)
        if not events and ts.ended:
            raise TouchError(errno.ENODATA, "the recording ended before every crosshair was tapped", ts.path)
        yield from events


def _one_tap(events: Iterator[touch.TouchEvent]) -> tuple[float, float]:
    """The raw position of the next press: the median of where it was while down, so
    the first unsettled samples of a resistive panel do not count."""
    xs: list[int] = []
    ys: list[int] = []
    for ev in events:
        if ev.slot != 0:
            continue  # one finger
        if ev.type in ("down", "move"):
            xs.append(ev.x)
            ys.append(ev.y)
        elif ev.type == "up" and xs:
            break
    return statistics.median(xs), statistics.median(ys)


def _largest_miss(
    matrix: touch.Calibration,
    touched: list[tuple[float, float]],
    targets: list[tuple[float, float]],
    width: int,
    height: int,
) -> tuple[float, int]:
    """The largest distance (pixels) from a tap, mapped by ``matrix``, to its target,
    and which tap it is."""
    a, b, c, d, e, f = matrix
    misses = []
    for (nx, ny), (tx, ty) in zip(touched, targets):
        dx = (a * nx + b * ny + c - tx) * width
        dy = (d * nx + e * ny + f - ty) * height
        misses.append((dx * dx + dy * dy) ** 0.5)
    worst = max(range(len(misses)), key=misses.__getitem__)
    return misses[worst], worst


COMMAND = Command(
    name="touch",
    help="list touch devices, print touches in screen coordinates, calibrate",
    description="Print each touch (down, move, up) in the screen's logical coordinates, "
    "--list the input devices and the one fbgfx takes, or --calibrate: tap five crosshairs "
    "and get the matrix for $FBGFX_TOUCH_CALIBRATION.",
    add_arguments=_arguments,
    run=run,
)
