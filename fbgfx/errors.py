"""The fbgfx error hierarchy: one path for every failure a user can meet.

Device failures are ``OSError`` subclasses carrying ``errno`` and the device path, so
``except OSError`` and ``e.errno == errno.EACCES`` work as for any file.
"""

from __future__ import annotations

import errno as _errno
import os
import warnings
from collections.abc import Callable

__all__ = ["FramebufferError", "ModeError", "TouchError", "UnsupportedFormatError", "VideoError", "warn_on_error"]


class FramebufferError(OSError):
    """A framebuffer device could not be opened, read or driven.

    Attributes:
        errno: The kernel's error number (``errno.ENOENT``, ``errno.EACCES``, ...).
        filename: The device path, when there is one.
    """

    def __init__(self, err: int, message: str, path: str | None = None) -> None:
        super().__init__(err, message, path)

    def __str__(self) -> str:
        where = f"{self.filename}: " if self.filename else ""
        return f"{where}{self.strerror}"

    @classmethod
    def from_errno(cls, err: int, doing: str, path: str | None = None) -> FramebufferError:
        """Build the error for ``-errno`` returned by the kernel while *doing* something."""
        return cls(err, f"{doing}: {os.strerror(err)}", path)


class ModeError(FramebufferError):
    """The driver refused a video mode; the previous mode is still in place.

    Attributes:
        requested: The mode that was asked for, as a dict of ``fb_var_screeninfo`` names.
    """

    def __init__(
        self, err: int, message: str, path: str | None = None, requested: dict[str, int] | None = None
    ) -> None:
        super().__init__(err or _errno.EINVAL, message, path)
        self.requested = dict(requested or {})


class UnsupportedFormatError(ValueError):
    """A pixel layout (bitfields, bits per pixel or visual) that fbgfx cannot draw in."""


class TouchError(FramebufferError):
    """An input (touch) device could not be found, opened or read.

    A :class:`FramebufferError`, so one ``except`` covers fbgfx's device errors;
    ``errno`` says which: ``ENOENT`` (no touch device; the message lists what
    ``/dev/input`` has), ``EACCES`` (join the ``input`` group), ``ENODEV`` (unplugged).
    """


class VideoError(ValueError):
    """A video file that cannot be played: FFmpeg cannot open it, it has no video
    stream, or no decoder for it. The message names the file.

    Attributes:
        filename: The file.
    """

    def __init__(self, filename: str, message: str) -> None:
        super().__init__(f"{filename}: {message}")
        self.filename = filename


def warn_on_error(call: Callable[[], object], doing: str, *about: object, stacklevel: int = 2) -> None:
    """Run ``call``; any exception it raises becomes a ``RuntimeWarning`` saying what
    failed, for the paths where one failure must not stop the rest and nobody is there
    to catch it (restoring every device at exit, closing a framebuffer's parts, a
    program's display-change callbacks).

    Args:
        call: What to run.
        doing: What ``call`` does, ``%``-formatted with ``about`` only on failure
            (``"closing %r"``, part).
        stacklevel: As for :func:`warnings.warn`, counted from the caller.
    """
    try:
        call()
    except Exception as e:  # noqa: BLE001 - reported as a warning, and the rest goes on
        what = doing % about if about else doing
        warnings.warn(f"fbgfx: {what} failed: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=stacklevel + 1)
