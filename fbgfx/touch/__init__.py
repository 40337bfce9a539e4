"""Touch input mapped to what is drawn: touchscreens, tablets and absolute pointers.

::

    with fbgfx.open() as fb, fb.screen(rotate=90) as screen, fbgfx.touch.open(screen=screen) as ts:
        for ev in ts:                 # TouchEvent(type='down', x=120, y=455, slot=0, time=...)
            ...

Events come in the screen's **logical** coordinates: the pixel under the finger in
what ``screen.frame()`` draws on, rotation applied. ``x`` and ``y`` are ints, clamped
into the screen, so they index ``Surface`` pixels directly.

The mapping of a raw device position to a logical pixel (:class:`TouchMapping`) is an
affine one, in libinput's convention, so calibration matrices carry over from
``LIBINPUT_CALIBRATION_MATRIX``:

1. normalise: ``n = (raw - minimum + 0.5) / (maximum - minimum + 1)`` per axis, from
   the device's absinfo (``EVIOCGABS``): 0..1 across the device, each raw step taken
   at its middle (so inverting an axis mirrors it exactly);
2. calibrate: ``(a*nx + b*ny + c, d*nx + e*ny + f)`` with the 6-number matrix
   ``a b c d e f`` (identity ``1 0 0 0 1 0``; swapped axes ``0 1 0 1 0 0``; X inverted
   ``-1 0 1 0 1 0``): 0..1 across the panel, as it is mounted, unrotated;
3. scale to the panel's pixels (the framebuffer's size) and take the pixel;
4. turn that pixel into the screen's logical one: the picture is turned ``rotate``
   degrees clockwise on the panel, so a touch is turned back.

The calibration describes how the touch sensor sits on the panel, so one matrix holds
for every rotation. ``fbgfx touch --calibrate`` measures it.

The input layer is read through fbgfx's own cffi module (``<linux/input.h>``, checked
by the C compiler) rather than python-evdev: fbgfx needs seven ioctls and one struct,
whose time fields the compiler lays out right on every architecture (32-bit ARM with a
64-bit ``time_t`` included), and Raspberry Pi OS users need no extra package.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import TouchError
from . import _evdev, _evemu, virtual
from ._evdev import AbsInfo, InputDevice
from ._touchscreen import (
    IDENTITY,
    TouchEvent,
    TouchMapping,
    Touchscreen,
    calibration_from_points,
    format_calibration,
    parse_calibration,
)

# Importable from fbgfx.touch as before it was a package, though not in __all__:
from ._touchscreen import MAX_SLOTS as MAX_SLOTS  # isort: skip
from ._touchscreen import Calibration as Calibration  # isort: skip

__all__ = [
    "IDENTITY",
    "AbsInfo",
    "InputDevice",
    "TouchEvent",
    "TouchMapping",
    "Touchscreen",
    "calibration_from_points",
    "find_device",
    "format_calibration",
    "list_devices",
    "open",
    "open_recording",
    "parse_calibration",
]


# -- finding and opening devices --------------------------------------------------------------


def list_devices() -> list[InputDevice]:
    """Every input event device (``/dev/input/eventN``), from sysfs where possible.

    A device that can be neither described by sysfs nor opened is left out.
    """
    found = []
    for path in _evdev.event_paths():
        try:
            found.append(_evdev.probe(path))
        except TouchError:
            continue
    return found


def _rank(info: InputDevice) -> int | None:
    """Lower is preferred: touchscreens, then tablets, then touchpads; None: unusable."""
    return {"touchscreen": 0, "tablet": 1, "touchpad": 2}.get(info.kind or "")


def find_device(devices: Sequence[InputDevice] | None = None) -> InputDevice:
    """The device :func:`open` takes without a path: ``$FBGFX_TOUCH``, else the first
    touchscreen (``INPUT_PROP_DIRECT``), else the first device with absolute X/Y and a
    touch or left button (tablets before touchpads).

    Raises:
        TouchError: ``ENOENT`` when there is none; the message lists ``/dev/input``.
    """
    env = os.environ.get("FBGFX_TOUCH")
    if env:
        return _evdev.probe(env)
    if devices is None:
        devices = list_devices()
    usable = [d for d in devices if _rank(d) is not None]
    if not usable:
        have = _evdev.describe_dev_input()
        raise TouchError(errno.ENOENT, f"no touchscreen or tablet found; {have}", _evdev.DEV_INPUT)
    return min(usable, key=lambda d: _rank(d) or 0)  # min keeps the first of equal rank


def open_recording(
    path: str,
    screen: Any = None,
    calibration: str | Sequence[float] | None = None,
    data: bytes | None = None,
) -> Touchscreen:
    """Replay a recording made with ``evemu-record`` as if it were the device.

    The events are fed through a pipe as ``struct input_event`` bytes, all at once, so
    the program reads them as from the device; iterating ends with the recording. For
    running and testing touch programs without the hardware.

    Args:
        path: The recording (evemu's text format: ``N:``, ``A:`` and ``E:`` lines).
        screen: As for :func:`open`.
        calibration: As for :func:`open`.
        data: The recording's bytes, when already read (a FIFO read within a
            deadline); ``path`` then only names it.

    Raises:
        OSError: The file cannot be read.
        ValueError: It is not an evemu recording.
        TouchError: The recorded device has no absolute X/Y axes.
    """
    info, events = _evemu.load(path, data)
    data = _evdev.encode(events)
    r, w = os.pipe()

    def feed() -> None:  # a pipe holds 64 KiB: write from a thread while the program reads
        try:
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BrokenPipeError:  # the Touchscreen was closed before the end
            pass

    threading.Thread(target=feed, name="fbgfx-touch-replay", daemon=True).start()
    return Touchscreen(r, info, screen, calibration)


def open(
    path: str | None = None,
    screen: Any = None,
    calibration: str | Sequence[float] | None = None,
) -> Touchscreen:
    """Open a touch device; its events come in ``screen``'s logical coordinates.

    Args:
        path: The event device (``/dev/input/event3``), an ``evemu-record``
            recording ending in ``.evemu`` to replay (see :func:`open_recording`), or
            a ``virtual:...:file=PATH`` display's spec (its virtual touchscreen, see
            :mod:`fbgfx.touch.virtual`); default ``$FBGFX_TOUCH`` (any of those, so a
            program can be run against a recording unchanged), else the virtual
            touchscreen of a file-backed virtual display (``screen``'s, else
            ``$FRAMEBUFFER``'s), else the first touchscreen, else the first tablet
            (see :func:`find_device`).
        screen: A :class:`~fbgfx.Screen` (its panel size and ``rotate``), a
            :class:`~fbgfx.Framebuffer` (unrotated), or None: the device's raw range
            from 0, unrotated.
        calibration: 6 numbers ``a b c d e f`` in libinput's convention (a string or a
            sequence); default ``$FBGFX_TOUCH_CALIBRATION``, else the identity.

    Raises:
        TouchError: No device (``ENOENT``, listing ``/dev/input``), no permission
            (``EACCES``: join the ``input`` group), or not a touch device.
        ValueError: A bad calibration.
    """
    if calibration is not None:
        calibration = parse_calibration(calibration)
    if path is None:
        path = os.environ.get("FBGFX_TOUCH") or None
    if path is None or path.startswith("virtual:"):
        display = virtual.display_file(path, screen)
        if display is not None:
            return virtual.open_reader(display, screen, calibration)
        if path is not None:
            raise TouchError(errno.EINVAL, "a virtual display without file= has no touchscreen", path)
        path = find_device().path
    if path.endswith(".evemu"):
        return open_recording(path, screen, calibration)
    fd = _evdev.open_fd(path)
    try:
        info = _evdev.query(fd, path)
        _evdev.set_monotonic(fd)
    except BaseException:
        os.close(fd)
        raise
    return Touchscreen(fd, info, screen, calibration)
