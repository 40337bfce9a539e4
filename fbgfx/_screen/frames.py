"""Counting the frames a display has shown, for every process that looks at it.

A :class:`~fbgfx.Screen` on a file-backed virtual display adds one to the counter in
``PATH.frames`` beside the display's files, when a waiter has made it (the test
display does), each time it shows a frame (a flip, a ``present()``, the end of a
``frame()`` block); on any other display it counts into the file ``$FBGFX_FRAMES``
names, when set. A test waits for an app's next frame by
watching the counter (:meth:`FrameCounter.wait_beyond`), in its own process or another,
instead of sleeping.

The counter is 8 bytes, little-endian, changed under an ``flock`` of the file. Counting
is an aid: where the file cannot be opened (a read-only folder, something else at that
path), frames are not counted and drawing goes on.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
import time
import weakref
from typing import Any

from ..virtual import VirtualDevice

__all__ = ["SUFFIX", "FrameCounter", "counter_for"]

#: Appended to a framebuffer file's path to name its frame counter.
SUFFIX = ".frames"
_SIZE = 8


def counter_for(fb: Any) -> FrameCounter | None:
    """The counter a Screen on ``fb`` adds its frames to, or None: none to keep."""
    device = getattr(fb, "device", None)
    if isinstance(device, VirtualDevice) and device.shared:
        # Counted only where a waiter made the counter: a Screen adds no file beside the display.
        return None if device.readonly else FrameCounter(device.path + SUFFIX, create=False)
    path = os.environ.get("FBGFX_FRAMES")
    return FrameCounter(path) if path else None


class FrameCounter:
    """The count of frames shown, in a file shared by every process.

    Args:
        path: The counter file.
        create: Create it (empty: 0 frames) when missing; else a missing counter
            counts nothing, and is not looked for again.
    """

    def __init__(self, path: str, *, create: bool = True) -> None:
        self.path = path
        self._create = create
        self._missing = False
        self._fd = -1
        self._pid = 0
        self._lock = threading.Lock()
        # Closes the descriptor if the counter is dropped unclosed (a Screen never closed).
        self._closer: weakref.finalize[[int], FrameCounter] | None = None

    def bump(self) -> None:
        """Count one frame shown (nothing when the file cannot be used)."""
        with self._lock:
            fd = self._open()
            if fd < 0:
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                os.pwrite(fd, (_decode(os.pread(fd, _SIZE, 0)) + 1).to_bytes(_SIZE, "little"), 0)
            except OSError:
                pass
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def read(self) -> int:
        """The frames counted so far (0 before the first)."""
        with self._lock:
            fd = self._open()
            if fd < 0:
                return 0
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                return _decode(os.pread(fd, _SIZE, 0))
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def wait_beyond(self, count: int, timeout: float) -> int | None:
        """Wait until more than ``count`` frames were shown.

        Returns:
            The count then, or None when ``timeout`` seconds passed first.
        """
        deadline = time.monotonic() + timeout
        pause = 0.0005
        while True:
            now = self.read()
            if now > count:
                return now
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.01)

    def close(self) -> None:
        """Close the file; safe twice (a later bump opens it again)."""
        with self._lock:
            self._release()

    def _release(self) -> None:
        closer, self._closer, self._fd = self._closer, None, -1
        if closer is not None:
            closer()

    def _open(self) -> int:
        """This process's descriptor of the file (a forked child opens its own, as an
        inherited one would share the parent's lock), or -1 when it cannot be used."""
        if self._fd >= 0:
            if self._pid == os.getpid():
                return self._fd
            self._release()  # the parent's, inherited: closing this copy leaves it theirs
        if self._missing:
            return -1
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_CREAT if self._create else 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError:
            self._missing = not self._create  # a Screen looks once: no failed open per frame
            return -1
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size not in (0, _SIZE):
            os.close(fd)  # not a counter fbgfx made: leave it alone
            return -1
        self._fd, self._pid = fd, os.getpid()
        self._closer = weakref.finalize(self, os.close, fd)
        return fd


def _decode(data: bytes) -> int:
    return int.from_bytes(data, "little") if len(data) == _SIZE else 0
