"""Recordings of input devices in evemu's text format (``evemu-record`` writes them).

A recording describes the device (``N:`` name, ``P:`` properties, ``B:`` capability
bitmaps, ``A:`` axis ranges) and lists its events (``E: sec.usec type code value``),
so a touch program can be run and tested without the hardware.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from ._evdev import AbsInfo, InputDevice

__all__ = ["load"]

_EV_KEY = 0x01


def load(path: str, data: bytes | None = None) -> tuple[InputDevice, list[tuple[int, int, int, int, int]]]:
    """The device description and the events of an evemu recording.

    Args:
        path: The recording.
        data: Its bytes, when already read (from a FIFO); then ``path`` only names it.

    Returns:
        An :class:`InputDevice` whose ``path`` is the recording's, with its axes'
        ranges, and the events as ``(seconds, microseconds, type, code, value)``.

    Raises:
        OSError: The file cannot be read.
        ValueError: A line is not in evemu's format.
    """
    name = ""
    props: set[int] = set()
    key_bytes: list[int] = []
    axes: dict[int, AbsInfo] = {}
    events = []
    try:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path}: not an evemu recording (not UTF-8 text: byte {e.start} is {e.object[e.start]:#x})"
        ) from None
    for number, line in enumerate(io.StringIO(text, newline=None), 1):
        tag, _, rest = line.rstrip("\n").partition(": ")
        try:
            if tag == "N":
                name = rest
            elif tag == "P":
                props |= _bits(int(b, 16) for b in rest.split())
            elif tag == "B" and int(rest.split()[0], 16) == _EV_KEY:
                key_bytes += [int(b, 16) for b in rest.split()[1:]]
            elif tag == "A":
                fields = rest.split()
                code = int(fields[0], 16)
                lo, hi, fuzz, flat, res = (_s32(int(v)) for v in (fields[1:] + ["0"] * 5)[:5])
                axes[_u16(code)] = AbsInfo(lo, lo, hi, fuzz, flat, res)
            elif tag == "E":
                stamp, type_, code_, value = rest.split()
                sec, _, usec = stamp.partition(".")
                events.append(
                    (
                        _range(int(sec), 0, _S64, "seconds"),
                        _range(int(usec or 0), 0, 999_999, "microseconds"),
                        _u16(int(type_, 16)),
                        _u16(int(code_, 16)),
                        _s32(int(value)),
                    )
                )
        except _OutOfRange as e:
            raise ValueError(f"{path}:{number}: {e}: {line.strip()!r}") from None
        except (ValueError, IndexError):
            raise ValueError(f"{path}:{number}: not an evemu recording line: {line.strip()!r}") from None
    if not name and not events:
        raise ValueError(f"{path}: not an evemu recording (no N: or E: lines)")
    info = InputDevice(path, name, frozenset(props), frozenset(axes), frozenset(_bits(key_bytes)), axes)
    return info, events


_S32 = 1 << 31
_S64 = (1 << 63) - 1


class _OutOfRange(Exception):
    """A number a kernel event could not carry; the message says which."""


def _range(value: int, low: int, high: int, what: str) -> int:
    if not low <= value <= high:
        raise _OutOfRange(f"{what} {value} is outside {low}..{high}")
    return value


def _s32(value: int) -> int:
    """An event value or axis limit: the kernel's are signed 32-bit."""
    return _range(value, -_S32, _S32 - 1, "value")


def _u16(value: int) -> int:
    """An event type or code: the kernel's are 16-bit."""
    return _range(value, 0, 0xFFFF, "type or code")


def _bits(data: Iterable[int]) -> set[int]:
    return {i * 8 + bit for i, byte in enumerate(data) for bit in range(8) if byte >> bit & 1}
