"""The Linux input layer (evdev), reached through :mod:`fbgfx._ffi`.

What an input device is (name, properties, axes and buttons) comes from sysfs, which
anyone may read, or from the ``EVIOCG*`` ioctls on an open device; the absolute axis
ranges only from ``EVIOCGABS``. ``struct input_event`` is decoded in C, where the
compiler knows its layout (its time fields differ between 64-bit, 32-bit and 32-bit
with 64-bit ``time_t``). No cdata leaves this module.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
)

from .._ffi import ffi, lib
from ..errors import TouchError

__all__ = [
    "EVENT_SIZE",
    "AbsInfo",
    "InputDevice",
    "decode",
    "device_error",
    "encode",
    "event_paths",
    "keys_down",
    "mt_slots",
    "open_fd",
    "probe",
    "query",
    "set_monotonic",
]

#: Bytes of one ``struct input_event`` on this machine.
EVENT_SIZE: int = lib.FBGFX_INPUT_EVENT_SIZE

EV_SYN, EV_KEY, EV_ABS = lib.EV_SYN, lib.EV_KEY, lib.EV_ABS
SYN_REPORT, SYN_DROPPED = lib.SYN_REPORT, lib.SYN_DROPPED
ABS_X, ABS_Y = lib.ABS_X, lib.ABS_Y
ABS_MT_SLOT, ABS_MT_TRACKING_ID = lib.ABS_MT_SLOT, lib.ABS_MT_TRACKING_ID
ABS_MT_POSITION_X, ABS_MT_POSITION_Y = lib.ABS_MT_POSITION_X, lib.ABS_MT_POSITION_Y
BTN_LEFT, BTN_TOUCH = lib.BTN_LEFT, lib.BTN_TOUCH
INPUT_PROP_POINTER, INPUT_PROP_DIRECT = lib.INPUT_PROP_POINTER, lib.INPUT_PROP_DIRECT

#: Where the kernel lists input devices and their nodes (tests point these elsewhere).
SYSFS_INPUT = "/sys/class/input"
DEV_INPUT = "/dev/input"

_LONG_BITS = struct.calcsize("L") * 8
_EVENT_NODE = re.compile(r"event(\d+)$")


@dataclass(frozen=True)
class AbsInfo:
    """One absolute axis as ``EVIOCGABS`` reports it (``struct input_absinfo``).

    Attributes:
        value: The axis's current value.
        minimum: The smallest value the device reports.
        maximum: The largest value the device reports (inclusive).
        fuzz: Noise the kernel filters out.
        flat: Dead zone (joysticks).
        resolution: Units per millimetre (0 when unknown).
    """

    value: int
    minimum: int
    maximum: int
    fuzz: int = 0
    flat: int = 0
    resolution: int = 0


@dataclass(frozen=True)
class InputDevice:
    """What an input device is, from sysfs or its ioctls.

    Attributes:
        path: The event node (``/dev/input/event3``).
        name: The device's name (``"QEMU Virtio Tablet"``).
        properties: ``INPUT_PROP_*`` codes it has (``INPUT_PROP_DIRECT`` = 1: a
            touchscreen, where the finger is on the picture).
        axes: ``ABS_*`` codes it reports.
        keys: ``KEY_*``/``BTN_*`` codes it reports.
        absinfo: Each axis's range, when the device was opened (empty from sysfs).
    """

    path: str
    name: str
    properties: frozenset[int] = frozenset()
    axes: frozenset[int] = frozenset()
    keys: frozenset[int] = frozenset()
    absinfo: dict[int, AbsInfo] = field(default_factory=dict, compare=False, hash=False)

    @property
    def multitouch(self) -> bool:
        """Reports contacts in slots (multi-touch protocol B)."""
        return {ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y} <= self.axes

    @property
    def kind(self) -> str | None:
        """``"touchscreen"``, ``"tablet"``, ``"touchpad"``, or None when it has no
        absolute X/Y with a touch or left button (keyboards, mice, buttons)."""
        xy = {ABS_X, ABS_Y} <= self.axes or self.multitouch
        if INPUT_PROP_DIRECT in self.properties and xy:
            return "touchscreen"
        if not (xy and (BTN_TOUCH in self.keys or BTN_LEFT in self.keys)):
            return None
        return "touchpad" if INPUT_PROP_POINTER in self.properties else "tablet"

    def summary(self) -> str:
        """One line for lists: ``QEMU Virtio Tablet: tablet, 0..32767 x 0..32767``."""
        what = self.kind or "not a touch device"
        if self.multitouch:
            what += ", multi-touch"
        x, y = (ABS_MT_POSITION_X, ABS_MT_POSITION_Y) if self.multitouch else (ABS_X, ABS_Y)
        if x in self.absinfo and y in self.absinfo:
            ax, ay = self.absinfo[x], self.absinfo[y]
            what += f", {ax.minimum}..{ax.maximum} x {ay.minimum}..{ay.maximum}"
        return f"{self.name}: {what}"


# -- finding devices ---------------------------------------------------------------------


def event_paths() -> list[str]:
    """The ``/dev/input/eventN`` nodes, in number order (event2 before event10)."""
    found = []
    for path in glob.glob(os.path.join(DEV_INPUT, "event*")):
        m = _EVENT_NODE.search(path)
        if m:
            found.append((int(m.group(1)), path))
    return [path for _, path in sorted(found)]


def probe(path: str) -> InputDevice:
    """Describe the device at ``path`` from sysfs; open it when sysfs does not know it.

    Raises:
        TouchError: Neither sysfs nor the device could be read.
    """
    info = _from_sysfs(path)
    if info is not None:
        return info
    fd = open_fd(path)
    try:
        return query(fd, path)
    finally:
        os.close(fd)


def _from_sysfs(path: str) -> InputDevice | None:
    base = os.path.join(SYSFS_INPUT, os.path.basename(path), "device")
    try:
        with open(os.path.join(base, "name")) as f:
            name = f.read().strip()
        return InputDevice(
            path=path,
            name=name,
            properties=_sysfs_bits(os.path.join(base, "properties")),
            axes=_sysfs_bits(os.path.join(base, "capabilities", "abs")),
            keys=_sysfs_bits(os.path.join(base, "capabilities", "key")),
        )
    except (OSError, ValueError):
        return None


def _sysfs_bits(path: str) -> frozenset[int]:
    """Parse a sysfs bitmap: hex words of a C ``long`` each, most significant first."""
    with open(path) as f:
        words = f.read().split()
    return _set_bits(int(word, 16) for word in reversed(words))


# -- an open device ------------------------------------------------------------------------


def open_fd(path: str) -> int:
    """Open an event node for reading, non-blocking.

    Raises:
        TouchError: With a message saying what to do (ENOENT lists ``/dev/input``;
            EACCES says to join the ``input`` group).
    """
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise device_error(e.errno or errno.EIO, path, "opening") from None


def device_error(err: int, path: str, doing: str) -> TouchError:
    """The error for ``err`` met while *doing* something with the device at ``path``."""
    if err == errno.ENOENT:
        return TouchError(err, f"no such input device; {describe_dev_input()}", path)
    if err in (errno.EACCES, errno.EPERM):
        return TouchError(
            err,
            "permission denied: add your user to the 'input' group (sudo usermod -aG input $USER) and log in again",
            path,
        )
    if err == errno.ENODEV:
        return TouchError(err, "the input device is gone (unplugged, or its driver was unloaded)", path)
    return TouchError(err, f"{doing}: {os.strerror(err)}", path)


def describe_dev_input() -> str:
    """What ``/dev/input`` holds, for error messages."""
    if not os.path.isdir(DEV_INPUT):
        return f"{DEV_INPUT} does not exist (no input drivers loaded)"
    paths = event_paths()
    if not paths:
        return f"{DEV_INPUT} has no event devices"
    names = []
    for path in paths:
        info = _from_sysfs(path)
        names.append(f"{os.path.basename(path)} ({info.name})" if info else os.path.basename(path))
    return f"{DEV_INPUT} has: " + ", ".join(names)


def query(fd: int, path: str) -> InputDevice:
    """Describe an open evdev device through its ioctls, with its axis ranges.

    Raises:
        TouchError: ``fd`` is not an evdev device (``ENOTTY``) or the kernel refused.
    """
    name = ffi.new("char[]", 256)
    _check(lib.fbgfx_input_name(fd, name, 255), path, "reading the device name (EVIOCGNAME)")
    properties = _bits(lambda buf, n: lib.fbgfx_input_props(fd, buf, n), lib.INPUT_PROP_MAX, path, "EVIOCGPROP")
    axes = _bits(lambda buf, n: lib.fbgfx_input_bits(fd, EV_ABS, buf, n), lib.ABS_MAX, path, "EVIOCGBIT")
    keys = _bits(lambda buf, n: lib.fbgfx_input_bits(fd, EV_KEY, buf, n), lib.KEY_MAX, path, "EVIOCGBIT")
    absinfo = {}
    c = ffi.new("struct input_absinfo *")
    for axis in sorted(axes):
        _check(lib.fbgfx_input_absinfo(fd, axis, c), path, f"reading axis {axis:#x} (EVIOCGABS)")
        absinfo[axis] = AbsInfo(c.value, c.minimum, c.maximum, c.fuzz, c.flat, c.resolution)
    return InputDevice(path, ffi.string(name).decode("utf-8", "replace"), properties, axes, keys, absinfo)


def keys_down(fd: int, path: str) -> frozenset[int]:
    """The keys and buttons held now (``EVIOCGKEY``)."""
    return _bits(lambda buf, n: lib.fbgfx_input_keys(fd, buf, n), lib.KEY_MAX, path, "EVIOCGKEY")


def mt_slots(fd: int, path: str, code: int, slots: int) -> list[int]:
    """Each slot's current value of ``ABS_MT_*`` axis ``code`` (``EVIOCGMTSLOTS``)."""
    values = ffi.new("int32_t[]", slots + 1)
    values[0] = code
    _check(lib.fbgfx_input_mt_slots(fd, values, slots + 1), path, "reading the touch slots (EVIOCGMTSLOTS)")
    return [values[i] for i in range(1, slots + 1)]


def set_monotonic(fd: int) -> bool:
    """Ask for timestamps on ``CLOCK_MONOTONIC`` (``time.monotonic()``); False if refused."""
    return bool(lib.fbgfx_input_clock_monotonic(fd) == 0)


def _bits(call: Callable[[Any, int], int], highest: int, path: str, name: str) -> frozenset[int]:
    """A kernel bitmap read into C longs (the kernel's unit, also for 32-bit programs on
    a 64-bit kernel) and turned into the set of codes whose bit is set."""
    longs = highest // _LONG_BITS + 1
    buf = ffi.new("uint8_t[]", longs * _LONG_BITS // 8)
    _check(call(buf, len(buf)), path, f"reading capabilities ({name})")
    return _set_bits(struct.unpack(f"{longs}L", ffi.buffer(buf)))


def _set_bits(words: Iterable[int]) -> frozenset[int]:
    """The numbers of the bits set in a bitmap of C longs, least significant long first
    (``test_bit`` of the kernel's ``input.h``)."""
    bits = set()
    for i, word in enumerate(words):
        bit = 0
        while word:
            if word & 1:
                bits.add(i * _LONG_BITS + bit)
            word >>= 1
            bit += 1
    return frozenset(bits)


def _check(rc: int, path: str, doing: str) -> int:
    if rc < 0:
        # ENOSYS: qemu-user's answer to an ioctl it does not translate (as console.py takes it).
        if -rc in (errno.ENOTTY, errno.EINVAL, errno.ENOSYS) and doing.startswith("reading the device name"):
            raise TouchError(-rc, "not an input event device (expected /dev/input/eventN)", path)
        raise device_error(-rc, path, doing)
    return rc


# -- events ----------------------------------------------------------------------------------

#: One decoded event: (seconds, microseconds, type, code, value).
RawEvent = tuple[int, int, int, int, int]


def decode(data: bytes) -> tuple[list[RawEvent], int]:
    """Decode the whole ``struct input_event`` records at the start of ``data``.

    Returns:
        The events and the number of bytes they took (a partial record at the end,
        possible on a pipe, is left for the next read).
    """
    count = len(data) // EVENT_SIZE
    if count == 0:
        return [], 0
    out = ffi.new("struct fbgfx_input_event[]", count)
    n = lib.fbgfx_input_decode(ffi.from_buffer(data), count * EVENT_SIZE, out, count)
    return [(e.sec, e.usec, e.type, e.code, e.value) for e in out[0:n]], n * EVENT_SIZE


def encode(events: Iterable[Sequence[int]]) -> bytes:
    """``struct input_event`` bytes, as ``/dev/input/eventN`` hands them out, for
    ``(seconds, microseconds, type, code, value)`` tuples (recordings, tests)."""
    items = [tuple(int(v) for v in e) for e in events]
    if not items:
        return b""
    cin = ffi.new("struct fbgfx_input_event[]", len(items))
    for c, (sec, usec, type_, code, value) in zip(cin, items):
        c.sec, c.usec, c.type, c.code, c.value = sec, usec, type_, code, value
    out = bytearray(len(items) * EVENT_SIZE)
    rc = lib.fbgfx_input_encode(cin, len(items), ffi.from_buffer(out), len(out))
    if rc < 0:  # pragma: no cover - the buffer is sized above
        raise ValueError("encoding input events: buffer too small")
    return bytes(out)
