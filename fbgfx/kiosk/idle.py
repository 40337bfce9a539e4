"""Dimming and blanking an idle display, woken by a touch: ``fbgfx idle`` and :class:`fbgfx.Idle`.

An :class:`Idle` watches input devices from a thread of its own. After ``dim_after``
seconds without input it dims the backlight to ``dim`` (a fraction of its
``max_brightness``); after ``off_after`` seconds it blanks the display: backlight power
off, and the display itself (``FBIOBLANK`` on ``/dev/fbN``, the CRTC turned off on a
``drm:`` display). Any input lights it again at once. While the display is dark the input
devices are taken with an exclusive grab (``EVIOCGRAB``), so the touch that wakes it
reaches no other program (a kiosk's browser does not press the button under the
finger); the grab is let go once the display is lit and the finger lifted.

Whatever ends it (:meth:`Idle.close`, an exception, ``SIGTERM``/``SIGINT`` through
:mod:`fbgfx._restore`) leaves the display lit and the backlight at the level it had
when the Idle started.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
from typing import Any

from .. import _restore
from .._ffi import lib
from ..device import Framebuffer
from ..errors import FramebufferError, TouchError
from ..touch import _evdev
from .backlight import BL_POWER_OFF, BL_POWER_ON, Backlight, find_backlight

__all__ = ["DARK", "DIM", "LIT", "Idle"]

LIT, DIM, DARK = "lit", "dim", "dark"
# A grab kept past the wake for a key or finger still down is let go after this long.
_GRAB_HOLD = 5.0
_READ = 4096


class _Input:
    """One input device read raw: its fd, what is held down, whether it is grabbed."""

    def __init__(self, fd: int, path: str, owner: Any = None) -> None:
        self.fd, self.path, self.owner = fd, path, owner
        os.set_blocking(fd, False)  # drained until empty: never wait in read()
        self.pending = b""
        self.down: set[int] = set()
        self.grabbed = False
        self.can_grab = True

    def drain(self) -> bool:
        """Read what is there; True when anything came."""
        got = False
        while True:
            try:
                data = os.read(self.fd, _READ)
            except BlockingIOError:
                return got
            except OSError as e:
                raise _evdev.device_error(e.errno or errno.EIO, self.path, "reading") from None
            if not data:
                return got
            got = True
            events, used = _evdev.decode(self.pending + data)
            self.pending = (self.pending + data)[used:]
            for _, _, type_, code, value in events:
                if type_ == _evdev.EV_KEY:
                    (self.down.add if value else self.down.discard)(code)
                elif type_ == _evdev.EV_ABS and code == _evdev.ABS_MT_TRACKING_ID and value < 0:
                    pass  # a lifted contact; BTN_TOUCH says when the last one is

    def grab(self, on: bool) -> bool:
        """Take (or let go) the device for this descriptor alone; False where it cannot be."""
        if not self.can_grab or self.grabbed == on:
            return self.grabbed == on
        rc = lib.fbgfx_input_grab(self.fd, int(on))
        if rc < 0:
            if on:
                self.can_grab = False
            return False
        self.grabbed = on
        return True

    def close(self) -> None:
        if self.grabbed:
            self.grab(False)
        if self.owner is not None:
            self.owner.close()
        elif self.fd >= 0:
            os.close(self.fd)
        self.fd = -1


class Idle:
    """Dim, then blank ``fb`` when no input came for a while; wake it on any input.

    Runs in a thread from construction until :meth:`close` (use it as a context
    manager). The display is lit at start.

    Args:
        fb: The display to blank (None: backlight only). An open Framebuffer:
            ``/dev/fbN`` (``FBIOBLANK``), ``drm:`` (CRTC off) or ``virtual:``.
        touch: The input to watch: an event device path, several, an
            ``evemu-record`` file or a ``virtual:...:file=`` display's touchscreen
            (see :func:`fbgfx.touch.open`), an open ``Touchscreen``, or None: the
            touchscreen :func:`fbgfx.touch.open` finds for ``fb``.
        dim_after: Seconds without input before dimming (None: never dim).
        off_after: Seconds without input before blanking, counted from the last
            input too (None: never blank).
        dim: The dimmed brightness, a fraction (0..1) of ``max_brightness``.
        backlight: A backlight's name, a :class:`~fbgfx.kiosk.backlight.Backlight`,
            None (find the display's, see :func:`~fbgfx.kiosk.backlight.find_backlight`),
            or False (none: blanking only).
        any_input: Watch every input device (``/dev/input/event*``), not only ``touch``.
        on_change: Called with the new state (``"lit"``, ``"dim"``, ``"dark"``) from
            the Idle's thread.

    Attributes:
        state: ``"lit"``, ``"dim"`` or ``"dark"``.
        notes: What the Idle could not do, said once each (no backlight, a display
            that cannot blank, an input that cannot be grabbed).
        error: The exception that stopped the thread, if one did.

    Raises:
        ValueError: Times below 0, ``off_after`` before ``dim_after``, ``dim`` outside 0..1.
        TouchError: The input device cannot be opened.
        FramebufferError: The backlight named does not exist, or several do and none
            is the display's.
    """

    def __init__(
        self,
        fb: Framebuffer | None,
        touch: Any = None,
        *,
        dim_after: float | None = 30.0,
        off_after: float | None = 120.0,
        dim: float = 0.2,
        backlight: str | Backlight | bool | None = None,
        any_input: bool = False,
        on_change: Any = None,
    ) -> None:
        for what, value in (("dim_after", dim_after), ("off_after", off_after)):
            if value is not None and not 0 <= value < float("inf"):
                raise ValueError(f"{what} must be a finite number of seconds >= 0, not {value!r}")
        if dim_after is not None and off_after is not None and off_after < dim_after:
            raise ValueError(f"off_after ({off_after} s) comes before dim_after ({dim_after} s)")
        if not 0 <= dim <= 1:
            raise ValueError(f"dim is a fraction of the full brightness, 0..1, not {dim!r}")
        self.fb, self.dim_after, self.off_after, self.dim = fb, dim_after, off_after, dim
        self.on_change = on_change
        self.state = LIT
        self.notes: list[str] = []
        self.error: BaseException | None = None
        self._lock = threading.RLock()  # a signal's restore may come while close() holds it
        self._closed = False
        self._inputs: list[_Input] = []
        self._last_input = time.monotonic()
        self._grab_since = 0.0
        self._blanked = False
        if backlight is False:
            self.backlight: Backlight | None = None
        elif isinstance(backlight, Backlight):
            self.backlight = backlight
        else:
            display = fb.path if fb is not None else None
            self.backlight = find_backlight(display, backlight if isinstance(backlight, str) else None)
        if self.backlight is None:
            self._note("no backlight found: blanking only")
            self._start_level, self._start_power = 0, BL_POWER_ON
        else:
            self._start_level, self._start_power = self.backlight.brightness, self.backlight.power
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            self._open_inputs(touch, any_input)
        except BaseException:
            self._close_fds()
            raise
        _restore.register(self, self._restore)
        self._thread = threading.Thread(target=self._run, name="fbgfx-idle", daemon=True)
        self._thread.start()

    # -- inputs -----------------------------------------------------------------------------------

    def _open_inputs(self, touch: Any, any_input: bool) -> None:
        from .. import touch as touch_module  # noqa: PLC0415 (the input layer only when an Idle starts)

        if any_input:
            for path in _evdev.event_paths():
                try:
                    self._inputs.append(_Input(_evdev.open_fd(path), path))
                except TouchError as e:
                    self._note(f"{path}: {e.strerror}")
        if touch is None and any_input:
            pass  # every device is watched already
        elif isinstance(touch, (list, tuple)):
            for path in touch:
                self._add_touch(touch_module.open(str(path), self.fb))
        elif touch is None or isinstance(touch, (str, os.PathLike)):
            self._add_touch(touch_module.open(None if touch is None else os.fspath(touch), self.fb))
        else:
            self._inputs.append(_Input(touch.fileno(), getattr(touch, "path", "touch")))
        if not self._inputs:
            raise TouchError(errno.ENOENT, "no input device to watch", _evdev.DEV_INPUT)

    def _add_touch(self, ts: Any) -> None:
        if any(i.path == ts.device.path for i in self._inputs):
            ts.close()
            return
        self._inputs.append(_Input(ts.fileno(), ts.device.path, owner=ts))

    @property
    def inputs(self) -> list[str]:
        """The input devices watched."""
        return [i.path for i in self._inputs]

    # -- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._closed:
                self._tick()
        except BaseException as e:  # noqa: BLE001 - kept for the program, and the screen lit
            self.error = e
            with contextlib.suppress(BaseException):
                self._restore()

    def _tick(self) -> None:
        now = time.monotonic()
        idle = now - self._last_input
        want = LIT
        if self.off_after is not None and idle >= self.off_after:
            want = DARK
        elif self.dim_after is not None and idle >= self.dim_after:
            want = DIM
        if want != self.state and not (want == DIM and self.state == DARK):
            self._enter(want)
        deadlines = [t for t in (self.dim_after, self.off_after) if t is not None and t > idle]
        timeout = (min(deadlines) - idle) if deadlines else None
        if any(i.grabbed for i in self._inputs) and self.state == LIT:
            timeout = 0.05 if timeout is None else min(timeout, 0.05)
        fds = [self._wake_r] + [i.fd for i in self._inputs]
        ready, _, _ = select.select(fds, [], [], timeout)
        if self._wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 64)
        came = False
        for inp in self._inputs:
            if inp.fd in ready and inp.drain():
                came = True
        if came:
            self._last_input = time.monotonic()
            if self.state != LIT:
                self._enter(LIT)
        self._let_go()

    def _let_go(self) -> None:
        """Release the grab once lit and nothing is held (or it was held too long)."""
        if self.state != LIT:
            return
        held_too_long = time.monotonic() - self._grab_since > _GRAB_HOLD
        for inp in self._inputs:
            if inp.grabbed and (not inp.down or held_too_long):
                inp.grab(False)

    def _enter(self, state: str) -> None:
        with self._lock:
            if self._closed and state != LIT:
                return
            bl = self.backlight
            if state == DARK:
                for inp in self._inputs:
                    inp.down.clear()
                    if not inp.grab(True) and not inp.can_grab:
                        self._note(f"{inp.path}: cannot be grabbed: the waking touch reaches other programs too")
                self._grab_since = time.monotonic()
                if bl is not None:
                    bl.power = BL_POWER_OFF
                self._blank(True)
            elif state == DIM:
                if bl is not None:
                    bl.brightness = round(bl.max_brightness * self.dim)
            else:
                self._blank(False)
                if bl is not None:
                    bl.brightness = self._start_level
                    bl.power = self._start_power if self._start_power >= 0 else BL_POWER_ON
                self._grab_since = time.monotonic()
            self.state = state
        if self.on_change is not None:
            self.on_change(state)

    def _blank(self, on: bool) -> None:
        fb = self.fb
        if fb is None or on == self._blanked:
            return
        try:
            done = fb.blank("powerdown" if on else "unblank")
        except FramebufferError as e:
            if not on:
                raise
            self._note(f"the display cannot blank ({e.strerror}): backlight only")
            return
        if on and not done:
            self._note("the display cannot blank: backlight only")
            return
        self._blanked = on

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # -- the program's side ---------------------------------------------------------------------

    def wake(self) -> None:
        """Count now as input: light the display and start the idle time again."""
        self._last_input = time.monotonic()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"w")

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._closed

    def _restore(self) -> None:
        """Light the display and put the backlight back as it was at start."""
        with self._lock:
            self._blank(False)
            bl = self.backlight
            if bl is not None:
                bl.brightness = self._start_level
                bl.power = self._start_power if self._start_power >= 0 else BL_POWER_ON
            for inp in self._inputs:
                inp.grab(False)
            self.state = LIT

    def close(self) -> None:
        """Stop watching, light the display, put the backlight back; safe twice."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"q")
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        try:
            self._restore()
        finally:
            _restore.unregister(self)
            self._close_fds()

    def _close_fds(self) -> None:
        for inp in self._inputs:
            with contextlib.suppress(OSError):
                inp.close()
        self._inputs = []
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> Idle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Idle {self.state} inputs={self.inputs}>"
