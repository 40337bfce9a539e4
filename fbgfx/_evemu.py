"""Recordings of input devices in evemu's text format (``evemu-record`` writes them).

A recording describes the device (``N:`` name, ``P:`` properties, ``B:`` capability
bitmaps, ``A:`` axis ranges) and lists its events (``E: sec.usec type code value``),
so a touch program can be run and tested without the hardware.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._evdev import AbsInfo, InputDevice

__all__ = ["load"]

_EV_KEY = 0x01


def load(path: str) -> tuple[InputDevice, list[tuple[int, int, int, int, int]]]:
    """The device description and the events of an evemu recording.

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
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
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
                    lo, hi, fuzz, flat, res = (int(v) for v in (fields[1:] + ["0"] * 5)[:5])
                    axes[code] = AbsInfo(lo, lo, hi, fuzz, flat, res)
                elif tag == "E":
                    stamp, type_, code_, value = rest.split()
                    sec, _, usec = stamp.partition(".")
                    events.append((int(sec), int(usec or 0), int(type_, 16), int(code_, 16), int(value)))
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{number}: not an evemu recording line: {line.strip()!r}") from None
    if not name and not events:
        raise ValueError(f"{path}: not an evemu recording (no N: or E: lines)")
    info = InputDevice(path, name, frozenset(props), frozenset(axes), frozenset(_bits(key_bytes)), axes)
    return info, events


def _bits(data: Iterable[int]) -> set[int]:
    return {i * 8 + bit for i, byte in enumerate(data) for bit in range(8) if byte >> bit & 1}
