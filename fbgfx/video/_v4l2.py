"""Which V4L2 hardware decoder FFmpeg can use here: asked of the kernel, not guessed.

FFmpeg's ``*_v4l2m2m`` decoders drive a *stateful* memory-to-memory device: one that
takes the compressed stream on its OUTPUT queue. A device qualifies only when
``VIDIOC_QUERYCAP`` says memory-to-memory and ``VIDIOC_ENUM_FMT`` lists the codec's
stateful fourcc (``H264``, ``HEVC``...) on that queue. That rules out what a
``/dev/video*`` glob let in: cameras and capture cards, and the *stateless* decoders
(the Raspberry Pi 4/5's HEVC at ``/dev/video19`` lists ``S265``, which needs the
request API FFmpeg's v4l2m2m decoders do not speak).

The two ioctls go through :func:`fcntl.ioctl` with :mod:`struct` layouts of the kernel's
``v4l2_capability`` and ``v4l2_fmtdesc`` (fixed-size uapi structs); tests replace
:data:`IOCTL` and :data:`DEVICES` with a double at that boundary.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["CODECS", "Device", "choose", "devices"]

#: FFmpeg's software decoder name -> (the stateful V4L2 fourcc, FFmpeg's V4L2 decoder).
CODECS: dict[str, tuple[str, str]] = {
    "h264": ("H264", "h264_v4l2m2m"),
    "hevc": ("HEVC", "hevc_v4l2m2m"),
    "mpeg4": ("MPG4", "mpeg4_v4l2m2m"),
    "mpeg2video": ("MPG2", "mpeg2_v4l2m2m"),
    "vp8": ("VP80", "vp8_v4l2m2m"),
    "vp9": ("VP90", "vp9_v4l2m2m"),
}

# struct v4l2_capability: driver[16] card[32] bus_info[32] version capabilities device_caps reserved[3]
_CAPABILITY = struct.Struct("=16s32s32sIII12x")
# struct v4l2_fmtdesc: index type flags description[32] pixelformat mbus_code reserved[3]
_FMTDESC = struct.Struct("=III32sII12x")


def _ioc(direction: int, number: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (ord("V") << 8) | number


VIDIOC_QUERYCAP = _ioc(2, 0, _CAPABILITY.size)  # _IOR('V', 0, struct v4l2_capability)
VIDIOC_ENUM_FMT = _ioc(3, 2, _FMTDESC.size)  # _IOWR('V', 2, struct v4l2_fmtdesc)
_CAP_VIDEO_M2M_MPLANE = 0x00004000
_CAP_VIDEO_M2M = 0x00008000
_CAP_DEVICE_CAPS = 0x80000000
_BUF_TYPE_VIDEO_OUTPUT = 2
_BUF_TYPE_VIDEO_OUTPUT_MPLANE = 10

#: The ioctl call (``fcntl.ioctl``'s signature): a test double stands in here.
IOCTL: Callable[[int, int, Any], Any] = fcntl.ioctl
#: Lists the V4L2 device nodes.
DEVICES: Callable[[], Iterable[str]] = lambda: sorted(glob.glob("/dev/video*"))  # noqa: E731


@dataclass(frozen=True)
class Device:
    """A memory-to-memory V4L2 device and the fourccs its OUTPUT queue takes."""

    path: str
    card: str
    formats: frozenset[str]


def devices() -> list[Device]:
    """The memory-to-memory devices, each with its OUTPUT queue's formats."""
    found = []
    for path in DEVICES():
        try:
            fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            device = _probe(fd, path)
        except OSError:
            device = None
        finally:
            os.close(fd)
        if device is not None:
            found.append(device)
    return found


def _probe(fd: int, path: str) -> Device | None:
    raw = IOCTL(fd, VIDIOC_QUERYCAP, bytes(_CAPABILITY.size))
    _driver, card, _bus, _version, caps, device_caps = _CAPABILITY.unpack(bytes(raw))
    if caps & _CAP_DEVICE_CAPS:
        caps = device_caps
    if caps & _CAP_VIDEO_M2M_MPLANE:
        queue = _BUF_TYPE_VIDEO_OUTPUT_MPLANE
    elif caps & _CAP_VIDEO_M2M:
        queue = _BUF_TYPE_VIDEO_OUTPUT
    else:
        return None  # a camera, a capture card, an output-only device
    name = card.split(b"\0", 1)[0].decode("utf-8", "replace")
    return Device(path, name, frozenset(_formats(fd, queue)))


def _formats(fd: int, queue: int) -> list[str]:
    formats = []
    for index in range(64):
        try:
            raw = IOCTL(fd, VIDIOC_ENUM_FMT, _FMTDESC.pack(index, queue, 0, b"", 0, 0))
        except OSError:  # EINVAL past the last one
            break
        fourcc = _FMTDESC.unpack(bytes(raw))[4]
        formats.append(fourcc.to_bytes(4, "little").decode("ascii", "replace"))
    return formats


def choose(codec: str, available: Iterable[str]) -> tuple[str | None, str]:
    """The V4L2 decoder FFmpeg should use for ``codec`` here, or None, and why (one line).

    Args:
        codec: FFmpeg's software decoder name (``h264``, ``hevc``...).
        available: FFmpeg's decoders (``av.codecs_available``).
    """
    if codec not in CODECS:
        return None, f"no V4L2 decoder handles {codec}"
    fourcc, name = CODECS[codec]
    if name not in available:
        return None, f"this FFmpeg has no {name}"
    with contextlib.suppress(OSError):
        for device in devices():
            if fourcc in device.formats:
                return name, f"{device.path} ({device.card}) decodes {fourcc}"
    return None, f"no V4L2 memory-to-memory device decodes {fourcc}"
