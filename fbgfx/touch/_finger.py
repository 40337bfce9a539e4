"""A finger on a touchscreen fbgfx makes: what the virtual and the uinput touchscreens share.

Touches are given in panel pixels (the framebuffer's, unrotated), turned into the raw
position a perfect sensor of the device's range reports there, and sent as the events
a kernel single-touch driver sends (``ABS_X``, ``ABS_Y``, ``BTN_TOUCH``, ``SYN_REPORT``).
"""

from __future__ import annotations

import errno
import math
import time
from abc import ABC, abstractmethod

from ..errors import TouchError
from . import _evdev
from ._evdev import AbsInfo, InputDevice

__all__ = ["Finger", "touchscreen_device"]

Event = tuple[int, int, int]


def touchscreen_device(path: str, name: str, size: tuple[int, int]) -> InputDevice:
    """What a touchscreen fbgfx makes for a ``(width, height)`` panel is: a direct
    single-touch device whose ``ABS_X``/``ABS_Y`` span the panel's pixels."""
    w, h = size
    return InputDevice(
        path=path,
        name=name,
        properties=frozenset({_evdev.INPUT_PROP_DIRECT}),
        axes=frozenset({_evdev.ABS_X, _evdev.ABS_Y}),
        keys=frozenset({_evdev.BTN_TOUCH}),
        absinfo={_evdev.ABS_X: AbsInfo(0, 0, w - 1), _evdev.ABS_Y: AbsInfo(0, 0, h - 1)},
    )


class Finger(ABC):
    """Press, move, release and tap on a touchscreen made for a panel.

    Attributes:
        device: What the touchscreen is (its axes' ranges among it).
        down: Whether the finger is on the glass.
    """

    device: InputDevice
    down: bool = False

    @property
    @abstractmethod
    def panel_size(self) -> tuple[int, int]:
        """The panel's ``(width, height)`` in pixels now."""

    @property
    @abstractmethod
    def readers(self) -> int:
        """How many programs have the touchscreen open now."""

    @abstractmethod
    def _write(self, data: bytes) -> int:
        """Hand ``struct input_event`` bytes to the touchscreen; returns the readers reached."""

    def wait_for_reader(self, timeout: float = 5.0) -> None:
        """Return once a program has the touchscreen open.

        Touches sent while no reader is open reach nobody, as on a real panel; a test
        waits here before touching an app that is still starting.

        Raises:
            TouchError: ``ETIMEDOUT`` after ``timeout`` seconds with no reader.
        """
        deadline = time.monotonic() + timeout
        pause = 0.001
        while not self.readers:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TouchError(
                    errno.ETIMEDOUT,
                    f"no program opened the display's touchscreen (fbgfx.touch.open()) within {timeout:g} s",
                    self.device.path,
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.02)

    def press(self, x: float, y: float) -> int:
        """Put the finger down at panel pixel ``(x, y)``; returns the readers reached."""
        down = self._down(x, y)
        self.down = True
        return self._send([down])

    def move(self, x: float, y: float) -> int:
        """Move the finger to panel pixel ``(x, y)`` (a hover while it is up); returns the readers reached."""
        rx, ry = self._raw(x, y)
        return self._send([[(_evdev.EV_ABS, _evdev.ABS_X, rx), (_evdev.EV_ABS, _evdev.ABS_Y, ry)]])

    def release(self) -> int:
        """Lift the finger; returns the readers reached."""
        self.down = False
        return self._send([[(_evdev.EV_KEY, _evdev.BTN_TOUCH, 0)]])

    def tap(self, x: float, y: float) -> int:
        """Press and release at panel pixel ``(x, y)`` in one write: a reader reads both at once."""
        down = self._down(x, y)
        self.down = False
        return self._send([down, [(_evdev.EV_KEY, _evdev.BTN_TOUCH, 0)]])

    def _down(self, x: float, y: float) -> list[Event]:
        rx, ry = self._raw(x, y)
        return [
            (_evdev.EV_ABS, _evdev.ABS_X, rx),
            (_evdev.EV_ABS, _evdev.ABS_Y, ry),
            (_evdev.EV_KEY, _evdev.BTN_TOUCH, 1),
        ]

    def _raw(self, x: float, y: float) -> tuple[int, int]:
        """The device position a perfect sensor reports for panel pixel ``(x, y)``: the
        raw step whose middle maps back into that pixel (see :class:`~fbgfx.touch.TouchMapping`)."""
        w, h = self.panel_size
        try:
            fx, fy = float(x), float(y)
        except (TypeError, ValueError):
            raise TypeError(f"a touch position is two numbers (x, y), not {x!r}, {y!r}") from None
        if not (0 <= fx < w and 0 <= fy < h):
            raise ValueError(f"({x}, {y}) is outside the {w}x{h} panel: a finger touches the glass")
        ax, ay = self.device.absinfo[_evdev.ABS_X], self.device.absinfo[_evdev.ABS_Y]
        sx, sy = ax.maximum - ax.minimum + 1, ay.maximum - ay.minimum + 1
        rx = ax.minimum + min(math.floor((math.floor(fx) + 0.5) * sx / w), sx - 1)
        ry = ay.minimum + min(math.floor((math.floor(fy) + 0.5) * sy / h), sy - 1)
        return rx, ry

    def _send(self, frames: list[list[Event]]) -> int:
        now = time.monotonic_ns() // 1000
        sec, usec = divmod(now, 1_000_000)
        events = []
        for frame in frames:
            events += [(sec, usec, t, c, v) for t, c, v in frame]
            events.append((sec, usec, _evdev.EV_SYN, _evdev.SYN_REPORT, 0))
        return self._write(_evdev.encode(events))
