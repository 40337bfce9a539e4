"""A touchscreen made through ``/dev/uinput``: touches for a real kernel's display.

On ``/dev/fbN`` or a ``drm:`` display there is no virtual touchscreen, so a test (or a
browser bridge) that touches the panel makes a kernel input device instead: a
single-touch screen (``INPUT_PROP_DIRECT``, ``ABS_X``/``ABS_Y`` spanning the panel's
pixels, ``BTN_TOUCH``) whose events any program reads from ``/dev/input/eventN``, as
from the panel's own. :func:`finger_for` picks the right one for a display::

    from fbgfx.touch.uinput import finger_for

    with fbgfx.open("/dev/fb0") as fb, finger_for(fb) as finger:
        os.environ["FBGFX_TOUCH"] = finger.device.path   # for the app started next
        finger.tap(100, 50)                               # panel pixels

Creating a uinput device needs write access to ``/dev/uinput`` (root, or a udev rule)
and the ``uinput`` module; where either is missing, :class:`UinputTouch` raises a
:class:`~fbgfx.TouchError` saying which.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import time
from typing import Any

from .._closing import ClosesOnExit
from .._ffi import ffi, lib
from ..errors import TouchError
from . import _evdev
from ._finger import Finger, touchscreen_device
from .virtual import VirtualTouch, display_file

__all__ = ["NAME", "UINPUT", "UinputTouch", "finger_for"]

#: Where the kernel's uinput device is.
UINPUT = "/dev/uinput"
#: The device name it gets (``ts.device.name`` in the app).
NAME = "fbgfx uinput touchscreen"
#: How long to wait for the event node to appear (devtmpfs or udev makes it).
_NODE_TIMEOUT = 5.0


class UinputTouch(Finger, ClosesOnExit):
    """A finger on a touchscreen made through ``/dev/uinput`` for a display's panel.

    Args:
        display: A :class:`~fbgfx.Framebuffer` (its panel size, followed as it
            changes) or a ``(width, height)`` panel size.
        path: The uinput device.
        name: The input device's name.

    Attributes:
        device: The input device made (``device.path``: its ``/dev/input/eventN``).

    Raises:
        TouchError: No ``/dev/uinput`` (``ENOENT``: ``modprobe uinput``), no
            permission (``EACCES``), or the kernel refused the device.
    """

    def __init__(self, display: Any, *, path: str = UINPUT, name: str = NAME) -> None:
        self._fb = None if isinstance(display, tuple) else display
        w, h = display if isinstance(display, tuple) else (int(display.width), int(display.height))
        self._fd = -1
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise _open_error(e.errno or errno.EIO, path) from None
        try:
            _check(lib.fbgfx_uinput_create(self._fd, name.encode()[:79], w, h), path, "creating the touchscreen")
            sysname = ffi.new("char[]", 64)
            _check(lib.fbgfx_uinput_sysname(self._fd, sysname, 64), path, "naming the touchscreen (Linux 3.15+)")
            node = _event_node(ffi.string(sysname).decode())
        except BaseException:
            self.close()
            raise
        self.device = touchscreen_device(node, name, (w, h))
        self._size = (w, h)
        self.down = False

    @property
    def panel_size(self) -> tuple[int, int]:
        """The panel's ``(width, height)`` in pixels now."""
        if self._fb is not None:
            return int(self._fb.width), int(self._fb.height)
        return self._size

    @property
    def readers(self) -> int:
        """How many open descriptors of the event node this process can see (all, as root)."""
        try:
            node = os.stat(self.device.path)
        except OSError:
            return 0
        count = 0
        for link in glob.glob("/proc/[0-9]*/fd/*"):
            with contextlib.suppress(OSError):
                st = os.stat(link)
                count += (st.st_rdev, st.st_ino, st.st_dev) == (node.st_rdev, node.st_ino, node.st_dev)
        return count

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._fd < 0

    def close(self) -> None:
        """Remove the touchscreen; safe twice."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            lib.fbgfx_uinput_destroy(fd)
            os.close(fd)

    def __repr__(self) -> str:
        where = getattr(self, "device", None)
        return f"<UinputTouch {where.path if where else '?'}{' closed' if self.closed else ''}>"

    def _write(self, data: bytes) -> int:
        if self._fd < 0:
            raise TouchError(errno.EBADF, "the uinput touchscreen is closed", self.device.path)
        try:
            os.write(self._fd, data)
        except OSError as e:
            raise TouchError(e.errno or errno.EIO, f"sending a touch: {e.strerror}", UINPUT) from None
        return self.readers


def finger_for(fb: Any) -> Finger:
    """The touchscreen to touch ``fb``'s panel with: a file-backed virtual display's own
    (:class:`~fbgfx.touch.virtual.VirtualTouch`), else a uinput one (:class:`UinputTouch`).

    Raises:
        TouchError: An in-memory virtual display (no other program can read its
            touches: ``EINVAL``), or uinput is missing (see :class:`UinputTouch`).
    """
    if display_file(None, fb) is not None:
        return VirtualTouch(fb)
    if str(getattr(fb, "path", "")).startswith("virtual"):
        raise TouchError(
            errno.EINVAL,
            "only a virtual display with a file (virtual:WxH:file=PATH) has a virtual touchscreen",
            str(fb.path),
        )
    return UinputTouch(fb)


def _open_error(err: int, path: str) -> TouchError:
    if err == errno.ENOENT:
        return TouchError(
            err, "no uinput device: load the kernel module (sudo modprobe uinput) to make a touchscreen", path
        )
    if err in (errno.EACCES, errno.EPERM):
        return TouchError(
            err,
            "permission denied: making a touchscreen needs root, or a udev rule such as "
            'KERNEL=="uinput", GROUP="input", MODE="0660" and membership of that group',
            path,
        )
    return TouchError(err, f"opening: {os.strerror(err)}", path)


def _check(rc: int, path: str, doing: str) -> None:
    if rc < 0:
        raise TouchError(-rc, f"{doing}: {os.strerror(-rc)}", path)


def _event_node(sysname: str) -> str:
    """The ``/dev/input/eventN`` of the input device ``sysname``, once it exists."""
    base = os.path.join("/sys/devices/virtual/input", sysname)
    deadline = time.monotonic() + _NODE_TIMEOUT
    pause = 0.001
    while True:
        events = sorted(glob.glob(os.path.join(base, "event*")))
        if events:
            node = os.path.join(_evdev.DEV_INPUT, os.path.basename(events[0]))
            if os.path.exists(node):
                return node
        if time.monotonic() > deadline:
            raise TouchError(errno.ENODEV, f"the touchscreen {sysname} got no event node in {_evdev.DEV_INPUT}", base)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
