"""Touchscreens: the mapping of device positions to logical pixels, calibration, and
:class:`Touchscreen`, which reads a device's events (single- and multi-touch).

:mod:`fbgfx.touch` re-exports these names and opens devices; see its docstring for the
mapping's steps.
"""

from __future__ import annotations

import errno
import math
import os
import select
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    NamedTuple,
)

from .._closing import ClosesOnExit
from ..errors import TouchError
from . import _evdev
from ._evdev import InputDevice

__all__ = [
    "IDENTITY",
    "MAX_SLOTS",
    "Calibration",
    "TouchEvent",
    "TouchMapping",
    "Touchscreen",
    "calibration_from_points",
    "format_calibration",
    "parse_calibration",
]

#: The calibration matrix that changes nothing.
IDENTITY: tuple[float, float, float, float, float, float] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)

Calibration = tuple[float, float, float, float, float, float]
_ROTATIONS = (0, 90, 180, 270)
# Bytes read per os.read: 256 events.
_READ_SIZE = 256 * _evdev.EVENT_SIZE
#: The most multi-touch slots a device may have: the kernel's input core refuses more
#: (``input_mt_init_slots``), so a device or recording declaring more is not believed.
MAX_SLOTS = 1024
# Beyond this many pixels a mapped position is no screen's: a calibration taking the
# device's range there is refused when the device is opened.
_PIXEL_LIMIT = float(1 << 31)


class TouchEvent(NamedTuple):
    """One contact going down, moving or going up.

    Attributes:
        type: ``'down'``, ``'move'`` or ``'up'``.
        x: Logical column (int, ``0 <= x < screen.width``).
        y: Logical row (int, ``0 <= y < screen.height``).
        slot: Which contact (multi-touch slot; 0 for single-touch devices and tablets).
        time: The kernel's timestamp in seconds, on the clock of ``time.monotonic()``
            for devices opened by :func:`open`.
    """

    type: str
    x: int
    y: int
    slot: int
    time: float


# -- the mapping -------------------------------------------------------------------------


def parse_calibration(text: str | Sequence[float]) -> Calibration:
    """A calibration matrix from 6 numbers (``"a b c d e f"``, commas allowed) or a sequence.

    Raises:
        ValueError: Not 6 finite numbers.
    """
    if isinstance(text, str):
        parts: Sequence[Any] = text.replace(",", " ").split()
    else:
        parts = list(text)
    try:
        values = tuple(float(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"a touch calibration is 6 numbers 'a b c d e f', not {text!r}") from None
    if len(values) != 6 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"a touch calibration is 6 finite numbers 'a b c d e f', not {text!r}")
    a, b, c, d, e, f = values
    return (a, b, c, d, e, f)


def format_calibration(matrix: Sequence[float]) -> str:
    """The matrix as ``$FBGFX_TOUCH_CALIBRATION`` takes it: ``"a b c d e f"``, to 5
    decimals (a hundredth of a pixel on a 1280-pixel panel)."""
    out = []
    for v in matrix:
        text = f"{round(float(v), 5) + 0.0:.5f}".rstrip("0").rstrip(".")
        out.append("0" if text in ("", "-0") else text)
    return " ".join(out)


@dataclass(frozen=True)
class TouchMapping:
    """Raw device coordinates to logical screen pixels: a pure function of the axis
    ranges, the calibration, the panel's size and the rotation (see the module doc).

    Attributes:
        x_range: The raw X axis as ``(minimum, maximum)``, inclusive.
        y_range: The raw Y axis as ``(minimum, maximum)``, inclusive.
        panel: The panel's ``(width, height)`` in pixels, as mounted (unrotated).
        rotate: Degrees the picture is turned clockwise on the panel: 0, 90, 180, 270.
        calibration: The 6-number matrix in libinput's convention.
    """

    x_range: tuple[int, int]
    y_range: tuple[int, int]
    panel: tuple[int, int]
    rotate: int = 0
    calibration: Calibration = IDENTITY

    def __post_init__(self) -> None:
        if self.rotate not in _ROTATIONS:
            raise ValueError(f"rotate must be one of 0, 90, 180, 270 (degrees clockwise), not {self.rotate!r}")
        for name, (lo, hi) in (("X", self.x_range), ("Y", self.y_range)):
            if hi < lo:
                raise ValueError(f"the device's {name} axis has no range ({lo}..{hi})")
        if self.panel[0] < 1 or self.panel[1] < 1:
            raise ValueError(f"the panel size must be positive, not {self.panel[0]}x{self.panel[1]}")
        object.__setattr__(self, "calibration", parse_calibration(self.calibration))
        a, b, c, d, e, f = self.calibration
        w, h = self.panel
        # Affine: the extremes are at the corners of the device's range.
        for nx in (0.0, 1.0):
            for ny in (0.0, 1.0):
                px, py = (a * nx + b * ny + c) * w, (d * nx + e * ny + f) * h
                if not (abs(px) < _PIXEL_LIMIT and abs(py) < _PIXEL_LIMIT):
                    raise ValueError(
                        f"the touch calibration {format_calibration(self.calibration)} takes the device's corner "
                        f"({nx:g}, {ny:g}) to pixel ({px:.3g}, {py:.3g}), outside any screen; "
                        "use a matrix from fbgfx touch --calibrate"
                    )

    @property
    def size(self) -> tuple[int, int]:
        """The logical ``(width, height)``: the panel's, swapped for 90 and 270."""
        w, h = self.panel
        return (h, w) if self.rotate in (90, 270) else (w, h)

    def normalize(self, raw_x: float, raw_y: float) -> tuple[float, float]:
        """Step 1: raw device coordinates to 0..1 across the device."""
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (raw_x - x0 + 0.5) / (x1 - x0 + 1), (raw_y - y0 + 0.5) / (y1 - y0 + 1)

    def panel_pixel(self, raw_x: float, raw_y: float) -> tuple[int, int]:
        """Steps 1-3: the panel pixel under a raw position, clamped into the panel."""
        nx, ny = self.normalize(raw_x, raw_y)
        a, b, c, d, e, f = self.calibration
        w, h = self.panel
        return _pixel((a * nx + b * ny + c) * w, w), _pixel((d * nx + e * ny + f) * h, h)

    def __call__(self, raw_x: float, raw_y: float) -> tuple[int, int]:
        """The logical pixel ``(x, y)`` under a raw device position."""
        return self.from_panel(*self.panel_pixel(raw_x, raw_y))

    def from_panel(self, px: int, py: int) -> tuple[int, int]:
        """Step 4: a panel pixel to the logical pixel drawn there."""
        w, h = self.panel
        r = self.rotate
        if r == 0:
            return px, py
        if r == 90:  # logical (x, y) is drawn at panel (w-1-y, x)
            return py, w - 1 - px
        if r == 180:
            return w - 1 - px, h - 1 - py
        return h - 1 - py, px  # 270: logical (x, y) is drawn at panel (y, h-1-x)

    def to_panel(self, x: int, y: int) -> tuple[int, int]:
        """The panel pixel where logical pixel ``(x, y)`` is drawn (inverse of
        :meth:`from_panel`)."""
        w, h = self.panel
        r = self.rotate
        if r == 0:
            return x, y
        if r == 90:
            return w - 1 - y, x
        if r == 180:
            return w - 1 - x, h - 1 - y
        return y, h - 1 - x


def _pixel(value: float, size: int) -> int:
    """The pixel under ``value``, clamped into ``0..size-1`` (also for a value that is
    not finite: a raw position far outside the device's declared range)."""
    if value != value:  # NaN
        return 0
    return int(math.floor(min(max(value, 0.0), size - 1.0)))


def calibration_from_points(
    touched: Sequence[tuple[float, float]], targets: Sequence[tuple[float, float]]
) -> Calibration:
    """The calibration matrix that best takes touched positions to their targets.

    Args:
        touched: Where the device said each tap was, normalised 0..1 across the device
            (:meth:`TouchMapping.normalize` of the raw position).
        targets: Where each tap should have been, 0..1 across the unrotated panel
            (a pixel's centre: ``((px + 0.5) / width, (py + 0.5) / height)``).

    Returns:
        The least-squares affine fit (exact for 3 points not on a line), in libinput's
        convention.

    Raises:
        ValueError: Fewer than 3 points, different counts, or the points on a line.
    """
    import numpy as np  # noqa: PLC0415 (a least-squares solve; numpy is a dependency of fbgfx anyway)

    if len(touched) != len(targets) or len(touched) < 3:
        raise ValueError("calibration needs 3 or more taps, each with its target")
    src = np.array([[x, y, 1.0] for x, y in touched], dtype=np.float64)
    dst = np.array(targets, dtype=np.float64)
    if np.linalg.matrix_rank(src, tol=1e-6) < 3:
        raise ValueError("the taps lie on one line (or one point): tap each crosshair, not the same spot")
    solution, *_ = np.linalg.lstsq(src, dst, rcond=None)
    (a, d), (b, e), (c, f) = solution.tolist()
    return (a, b, c, d, e, f)


# -- what a screen tells the mapping ---------------------------------------------------------


def _panel_and_rotation(screen: Any, device_size: tuple[int, int]) -> tuple[tuple[int, int], int]:
    """The panel size and rotation of ``screen``: a :class:`~fbgfx.Screen` (its
    ``fb``'s size and its ``rotate``), a :class:`~fbgfx.Framebuffer` (its size, no
    rotation) or None (no screen: the device's own raw range, unrotated)."""
    if screen is None:
        return device_size, 0
    fb = getattr(screen, "fb", screen)
    rotate = int(getattr(screen, "rotate", 0) or 0)
    return (int(fb.width), int(fb.height)), rotate


# -- turning kernel events into touches --------------------------------------------------------


class _SingleTouch:
    """One contact from ``ABS_X``/``ABS_Y`` and a button: ``BTN_TOUCH`` (touchscreens,
    pens) or ``BTN_LEFT`` (absolute pointers such as qemu's tablet)."""

    def __init__(self, info: InputDevice, held: frozenset[int]) -> None:
        self.button = _evdev.BTN_TOUCH if _evdev.BTN_TOUCH in info.keys else _evdev.BTN_LEFT
        ax, ay = info.absinfo[_evdev.ABS_X], info.absinfo[_evdev.ABS_Y]
        self.x, self.y = ax.value, ay.value
        self.down = self.button in held
        self.pressed = self.released = self.moved = False
        self.last: tuple[int, int] | None = None

    def event(self, type_: int, code: int, value: int) -> None:
        if type_ == _evdev.EV_ABS:
            if code == _evdev.ABS_X:
                self.x, self.moved = value, True
            elif code == _evdev.ABS_Y:
                self.y, self.moved = value, True
        elif type_ == _evdev.EV_KEY and code == self.button:
            if value and not self.down:
                self.pressed, self.down = True, True
            elif not value and self.down:
                self.released, self.down = True, False

    def report(self, mapping: TouchMapping, t: float, out: list[TouchEvent]) -> None:
        pos = mapping(self.x, self.y)
        if self.pressed:
            out.append(TouchEvent("down", pos[0], pos[1], 0, t))
            self.last = pos
        if self.released:
            out.append(TouchEvent("up", pos[0], pos[1], 0, t))
        elif self.down and not self.pressed and self.moved and pos != self.last:
            out.append(TouchEvent("move", pos[0], pos[1], 0, t))
            self.last = pos
        self.pressed = self.released = self.moved = False

    def resync(self, held: frozenset[int], info: InputDevice) -> None:
        """After the kernel dropped events: take its state, as a frame of changes."""
        down = self.button in held
        self.pressed, self.released = down and not self.down, self.down and not down
        self.down = down
        self.x, self.y = info.absinfo[_evdev.ABS_X].value, info.absinfo[_evdev.ABS_Y].value
        self.moved = True


class _Slot:
    __slots__ = ("began", "ended", "id", "last", "moved", "x", "y")

    def __init__(self, id_: int, x: int, y: int) -> None:
        self.id, self.x, self.y = id_, x, y
        self.began = self.ended = self.moved = False
        self.last: tuple[int, int] | None = None


class _MultiTouch:
    """Contacts in slots (multi-touch protocol B): ``ABS_MT_SLOT`` chooses a slot,
    ``ABS_MT_TRACKING_ID`` >= 0 starts a contact in it and -1 ends it."""

    def __init__(self, ids: list[int], xs: list[int], ys: list[int], current: int) -> None:
        self.slots = [_Slot(i, x, y) for i, x, y in zip(ids, xs, ys)]
        self.current = current

    def event(self, type_: int, code: int, value: int) -> None:
        if type_ != _evdev.EV_ABS:
            return
        if code == _evdev.ABS_MT_SLOT:
            self.current = value
            return
        if not 0 <= self.current < len(self.slots):
            return  # a slot the device did not announce: nothing to attach it to
        s = self.slots[self.current]
        if code == _evdev.ABS_MT_TRACKING_ID:
            if value < 0:
                if s.id >= 0:
                    s.ended = True
            elif value != s.id:
                if s.id >= 0:  # a new contact without the old one's end (events dropped)
                    s.ended = True
                s.began = True
            s.id = value
        elif code == _evdev.ABS_MT_POSITION_X:
            s.x, s.moved = value, True
        elif code == _evdev.ABS_MT_POSITION_Y:
            s.y, s.moved = value, True

    def report(self, mapping: TouchMapping, t: float, out: list[TouchEvent]) -> None:
        for n, s in enumerate(self.slots):
            if not (s.began or s.ended or s.moved):
                continue
            pos = mapping(s.x, s.y)
            if s.ended:
                up = s.last if s.began and s.last is not None else pos
                out.append(TouchEvent("up", up[0], up[1], n, t))
                s.last = None
            if s.began:
                out.append(TouchEvent("down", pos[0], pos[1], n, t))
                s.last = pos
            elif s.id >= 0 and s.moved and pos != s.last:
                out.append(TouchEvent("move", pos[0], pos[1], n, t))
                s.last = pos
            s.began = s.ended = s.moved = False

    def resync(self, ids: list[int], xs: list[int], ys: list[int]) -> None:
        """After the kernel dropped events: take its slot state as a frame of changes."""
        current = self.current
        for n, (s, id_, x, y) in enumerate(zip(self.slots, ids, xs, ys)):
            self.current = n
            self.event(_evdev.EV_ABS, _evdev.ABS_MT_TRACKING_ID, id_)
            if (x, y) != (s.x, s.y):
                s.x, s.y, s.moved = x, y, True
        self.current = current


# -- the device ----------------------------------------------------------------------------


class Touchscreen(ClosesOnExit):
    """An open touch device whose events come in a screen's logical coordinates.

    Made by :func:`open`; the constructor takes an already open file descriptor, for
    recordings and pipes of ``struct input_event`` bytes (then ``device`` must carry
    ``absinfo`` for the axes, as :func:`fbgfx.touch._evdev.query` gives it).

    Args:
        fd: An open descriptor of an event device, pipe or file; the Touchscreen owns it.
        device: What the device is and its axis ranges.
        screen: Where touches land: a :class:`~fbgfx.Screen` (its panel and rotation),
            a :class:`~fbgfx.Framebuffer` (unrotated), or None: no screen, coordinates
            are the device's raw range moved to start at 0 (``0..maximum-minimum``).
        calibration: The 6-number matrix (a string or a sequence); default
            ``$FBGFX_TOUCH_CALIBRATION``, else the identity.

    Raises:
        TouchError: The device has no absolute X/Y axes.
        ValueError: A bad calibration or rotation.
    """

    def __init__(
        self,
        fd: int,
        device: InputDevice,
        screen: Any = None,
        calibration: str | Sequence[float] | None = None,
    ) -> None:
        self._fd = fd
        self._wake = (-1, -1)
        self._pending = b""
        self._queue: list[TouchEvent] = []
        self._dropping = False
        self._eof = False
        self._mapping_key: tuple[tuple[int, int], int] | None = None
        self._mapping: TouchMapping | None = None
        # read() in one thread, close() in another: close wakes the reader through a
        # pipe in its poll set, and the last reader out closes the descriptors.
        self._lock = threading.Lock()
        self._readers = 0
        self._closing = False
        try:
            self.device = device
            self.path = device.path
            source = "the calibration"
            if calibration is None:
                env = os.environ.get("FBGFX_TOUCH_CALIBRATION")
                source = "$FBGFX_TOUCH_CALIBRATION" if env else source
                calibration = env or IDENTITY
            try:
                self.calibration: Calibration = parse_calibration(calibration)
                self.screen = screen
                self._evdev_fd = bool(device.absinfo) and _is_char_device(fd)
                self._tracker = self._make_tracker()
                _ = self.mapping  # checked now: a matrix that overflows is an error at open
            except ValueError as e:
                if source.startswith("$"):
                    raise ValueError(f"{source}: {e}") from None
                raise
            os.set_blocking(fd, False)
            self._wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN)
            self._poll.register(self._wake[0], select.POLLIN)
        except BaseException:
            self._fd = -1
            for d in (fd, *self._wake):
                if d >= 0:
                    os.close(d)
            self._wake = (-1, -1)
            raise

    def _make_tracker(self) -> _SingleTouch | _MultiTouch:
        info = self.device
        slots = {_evdev.ABS_MT_SLOT, _evdev.ABS_MT_POSITION_X, _evdev.ABS_MT_POSITION_Y}
        if info.multitouch and slots <= info.absinfo.keys():
            self._axes = (_evdev.ABS_MT_POSITION_X, _evdev.ABS_MT_POSITION_Y)
            count = info.absinfo[_evdev.ABS_MT_SLOT].maximum + 1
            if not 1 <= count <= MAX_SLOTS:
                raise TouchError(
                    errno.EINVAL,
                    f"{info.name!r} declares {count} multi-touch slots; the kernel's input core allows 1 to "
                    f"{MAX_SLOTS}",
                    self.path,
                )
            return _MultiTouch(*self._slot_state(count), info.absinfo[_evdev.ABS_MT_SLOT].value)
        if {_evdev.ABS_X, _evdev.ABS_Y} <= info.absinfo.keys():
            self._axes = (_evdev.ABS_X, _evdev.ABS_Y)
            return _SingleTouch(info, self._held())
        raise TouchError(errno.EINVAL, f"{info.name!r} has no absolute X/Y axes: not a touch device", self.path)

    def _slot_state(self, count: int) -> tuple[list[int], list[int], list[int]]:
        info = self.device
        if self._evdev_fd:
            try:
                return tuple(  # type: ignore[return-value]
                    _evdev.mt_slots(self._fd, self.path, code, count)
                    for code in (_evdev.ABS_MT_TRACKING_ID, _evdev.ABS_MT_POSITION_X, _evdev.ABS_MT_POSITION_Y)
                )
            except TouchError:
                pass
        x = info.absinfo[_evdev.ABS_MT_POSITION_X].value
        y = info.absinfo[_evdev.ABS_MT_POSITION_Y].value
        return [-1] * count, [x] * count, [y] * count

    def _held(self) -> frozenset[int]:
        if self._evdev_fd:
            try:
                return _evdev.keys_down(self._fd, self.path)
            except TouchError:
                pass
        return frozenset()

    # -- mapping -----------------------------------------------------------------------

    @property
    def mapping(self) -> TouchMapping:
        """The mapping in force: follows the screen's size and rotation as they change."""
        ax, ay = (self.device.absinfo[a] for a in self._axes)
        raw_size = (ax.maximum - ax.minimum + 1, ay.maximum - ay.minimum + 1)
        panel, rotate = _panel_and_rotation(self.screen, raw_size)
        key = (panel, rotate)
        if key != self._mapping_key or self._mapping is None:
            self._mapping = TouchMapping(
                (ax.minimum, ax.maximum), (ay.minimum, ay.maximum), panel, rotate, self.calibration
            )
            self._mapping_key = key
        return self._mapping

    @property
    def size(self) -> tuple[int, int]:
        """The logical ``(width, height)`` events are in."""
        return self.mapping.size

    # -- reading ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closing or self._fd < 0

    @property
    def ended(self) -> bool:
        """True once a recording, file or pipe has no more events (a device never ends)."""
        return self._eof and not self._queue

    def fileno(self) -> int:
        """The descriptor to wait on with :mod:`selectors` (readable: call :meth:`read`)."""
        self._check_open()
        return self._fd

    def read(self, timeout: float | None = None) -> list[TouchEvent]:
        """The touch events available, waiting up to ``timeout`` seconds for the first.

        Args:
            timeout: Seconds to wait; None waits until there is an event, 0 does not wait.

        Returns:
            The events, oldest first; empty when the time ran out (or a recording ended).

        Raises:
            TouchError: The device was unplugged (``ENODEV``) or could not be read.
        """
        with self._lock:
            self._check_open()
            self._readers += 1
            fd = self._fd
        try:
            deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
            while not self._closing:
                self._fill(fd)
                if self._queue or self._eof:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                # Readable, hung up (a pipe's end), in error (unplugged) or woken by
                # close(): _fill and the loop's test tell which.
                self._poll.poll(None if remaining is None else math.ceil(remaining * 1000))
            out, self._queue = self._queue, []
            return out
        finally:
            with self._lock:
                self._readers -= 1
                last = self._closing and self._readers == 0
            if last:
                self._close_descriptors()

    def __iter__(self) -> Iterator[TouchEvent]:
        """Each event as it comes, blocking; ends when a recording or pipe ends, or
        when another thread closes the device."""
        while not self.closed:
            events = self.read()
            if not events and self.ended:
                return
            yield from events

    def _fill(self, fd: int) -> None:
        """Read what ``fd`` (the device, kept open while a read() runs) has now and
        turn it into touch events."""
        while not self._eof and not self._closing:
            try:
                data = os.read(fd, _READ_SIZE)
            except BlockingIOError:
                break
            except OSError as e:
                raise _evdev.device_error(e.errno or errno.EIO, self.path, "reading touch events") from None
            if not data:
                self._eof = True
                break
            self._process(self._pending + data)
            if len(data) < _READ_SIZE:
                break
        if self._dropping and self._evdev_fd:
            # Everything queued after the overflow has been read and skipped: the
            # kernel's state now is newer than all of it. Take it as one frame.
            self._dropping = False
            self._resync()
            self._tracker.report(self.mapping, time.monotonic(), self._queue)

    def _process(self, data: bytes) -> None:
        events, used = _evdev.decode(data)
        self._pending = data[used:]
        tracker = self._tracker
        for sec, usec, type_, code, value in events:
            if type_ == _evdev.EV_SYN:
                if code == _evdev.SYN_DROPPED:
                    # The kernel's buffer overflowed and lost events. A device is
                    # asked for its state once the rest of its queue is read (_fill);
                    # a recording or pipe resumes at its next SYN_REPORT.
                    self._dropping = True
                elif code == _evdev.SYN_REPORT:
                    if self._dropping and not self._evdev_fd:
                        self._dropping = False
                        continue
                    if not self._dropping:
                        tracker.report(self.mapping, sec + usec / 1e6, self._queue)
            elif not self._dropping:
                tracker.event(type_, code, value)

    def _resync(self) -> None:
        if not self._evdev_fd:
            return
        try:
            if isinstance(self._tracker, _MultiTouch):
                self._tracker.resync(*self._slot_state(len(self._tracker.slots)))
            else:
                info = _evdev.query(self._fd, self.path)
                self._tracker.resync(self._held(), info)
        except TouchError:
            pass

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the device; safe to call twice.

        A :meth:`read` waiting in another thread returns at once (with what it has,
        usually nothing), and iterating ends.
        """
        with self._lock:
            if self._closing:
                return
            self._closing = True
            reading = self._readers > 0
        if reading:
            try:
                os.write(self._wake[1], b"x")  # the reader closes the descriptors on its way out
            except OSError:
                pass
            return
        self._close_descriptors()

    def _close_descriptors(self) -> None:
        fds, self._wake = (self._fd, *self._wake), (-1, -1)
        self._fd = -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.size[0]}x{self.size[1]}"
        return f"<Touchscreen {self.path} {self.device.name!r} {state}>"

    def _check_open(self) -> None:
        if self._closing or self._fd < 0:
            raise TouchError(errno.EBADF, "the touch device is closed", self.path)


def _is_char_device(fd: int) -> bool:
    return stat.S_ISCHR(os.fstat(fd).st_mode)
