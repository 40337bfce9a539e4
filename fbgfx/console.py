"""The text console on a framebuffer: keep it from drawing over the picture.

A virtual terminal (VT) whose console is drawn on the framebuffer keeps scribbling
text and blinking a cursor over whatever a program shows. Switching the VT to
``KD_GRAPHICS`` (``KDSETMODE``) stops that; :class:`Console` does it and puts the
previous KD mode back on :meth:`Console.restore`, at exit and on fatal signals
(see :mod:`fbgfx._restore`).

Not being on a VT is normal (ssh, a service, CI): then nothing happens, and no error.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from . import _restore
from ._ffi import lib

__all__ = ["KD_GRAPHICS", "KD_TEXT", "Console", "VirtualTerminal", "find_vt"]

#: ``<linux/kd.h>`` console modes, as the compiler read them.
KD_TEXT: int = lib.KD_TEXT
KD_GRAPHICS: int = lib.KD_GRAPHICS

TTY_MAJOR = 4  # /dev/tty0../dev/tty63 are VTs (minor 0 is "the current one")
SYSFS_ACTIVE_VT = "/sys/class/tty/tty0/active"

# errnos by which a file says "I am not a VT".
_NOT_A_VT = (errno.ENOTTY, errno.EINVAL, errno.ENOSYS)


class VirtualTerminal:
    """An open VT whose KD mode can be read and set (``KDGETMODE`` / ``KDSETMODE``).

    Args:
        fd: An open file descriptor of the VT; it is closed by :meth:`close`.
        path: Its path, for messages.
    """

    def __init__(self, fd: int, path: str = "") -> None:
        self._lib = lib
        self.fd = fd
        self.path = path

    def get_mode(self) -> int:
        """The current KD mode (``KD_TEXT`` or ``KD_GRAPHICS``).

        Raises:
            OSError: Not a VT (ENOTTY/EINVAL), or the kernel refused.
        """
        rc = self._lib.fbgfx_kd_get_mode(self.fd)
        if rc < 0:
            raise OSError(-rc, f"{self.path}: reading the console mode (KDGETMODE): {os.strerror(-rc)}", self.path)
        return int(rc)

    def set_mode(self, mode: int) -> None:
        """Set the KD mode.

        Raises:
            OSError: EPERM when this process may not (not its terminal, no
                ``CAP_SYS_TTY_CONFIG``), ENOTTY when not a VT.
        """
        rc = self._lib.fbgfx_kd_set_mode(self.fd, int(mode))
        if rc < 0:
            raise OSError(-rc, f"{self.path}: setting the console mode (KDSETMODE): {os.strerror(-rc)}", self.path)

    def close(self) -> None:
        """Close the file descriptor; safe to call twice."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __repr__(self) -> str:
        return f"<VirtualTerminal {self.path or self.fd}>"


def _is_vt_fd(fd: int) -> bool:
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == TTY_MAJOR and os.minor(st.st_rdev) < 64


def _candidates(stdin_fd: int | None, active_path: str, fallback: str | None) -> Iterator[tuple[str, int | None]]:
    """Where the framebuffer console may be, best first."""
    if stdin_fd is not None and _is_vt_fd(stdin_fd):
        # Our own terminal: KDSETMODE on it needs no privilege.
        yield f"/proc/self/fd/{stdin_fd}", stdin_fd
    try:
        with open(active_path, encoding="ascii") as f:
            active = f.read().strip()
        if active.startswith("tty") and active[3:].isdigit():
            yield f"/dev/{active}", None
    except OSError:
        pass
    if fallback:
        yield fallback, None


def find_vt(
    stdin: Any = None, active_path: str = SYSFS_ACTIVE_VT, fallback: str | None = "/dev/tty0"
) -> VirtualTerminal | None:
    """Open the VT the framebuffer console is showing, or None when there is none.

    Tries standard input when it is a VT, then the active VT named in
    ``/sys/class/tty/tty0/active``, then ``/dev/tty0``. Each must answer
    ``KDGETMODE`` to count.

    Args:
        stdin: A file (or fd) to try first; default ``sys.stdin``.
        active_path: Where sysfs names the active VT.
        fallback: The last path to try (``/dev/tty0``, "the current VT"), or None.
    """
    if stdin is None:
        stdin = sys.stdin
    try:
        stdin_fd = stdin if isinstance(stdin, int) else stdin.fileno()
    except (AttributeError, OSError, ValueError):
        stdin_fd = None
    for path, fd in _candidates(stdin_fd, active_path, fallback):
        try:
            if fd is not None:
                fd = os.dup(fd)
            else:
                fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError:
            continue
        vt = VirtualTerminal(fd, path)
        try:
            vt.get_mode()
        except OSError:
            vt.close()
            continue
        return vt
    return None


def _is_kernel_framebuffer(fb: Any) -> bool:
    path = str(getattr(fb, "path", ""))
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode)


class Console:
    """The KD mode of one VT, switched to graphics while fbgfx shows a picture.

    Args:
        tty: The VT: a :class:`VirtualTerminal`, or any object with ``get_mode()``,
            ``set_mode(mode)`` and optionally ``close()`` (tests pass a fake). None
            means "not on a VT": every method then does nothing.
        owns: Close ``tty`` on :meth:`restore`.

    Example:
        >>> with Console.for_framebuffer(fb):   # KD_GRAPHICS while inside
        ...     draw()
    """

    def __init__(self, tty: Any = None, *, owns: bool = False) -> None:
        self.tty = tty
        self._owns = owns
        self._previous: int | None = None
        self._pid = os.getpid()  # a forked child leaves its parent's console alone

    @classmethod
    def for_framebuffer(cls, fb: Any) -> Console:
        """The console of the VT showing on a kernel framebuffer; an inactive one for
        a virtual framebuffer or when no VT can be found."""
        if not _is_kernel_framebuffer(fb):
            return cls(None)
        return cls(find_vt(), owns=True)

    @property
    def active(self) -> bool:
        """True while this Console holds the VT in graphics mode."""
        return self._previous is not None

    def graphics(self) -> bool:
        """Switch the VT to ``KD_GRAPHICS``, remembering the mode it had.

        Returns:
            True when the console is now in graphics mode because of this call or
            was already; False when there is no VT or it may not be switched (a
            warning says why; drawing still works, the cursor may show).
        """
        if self.tty is None or self.active:
            return self.active
        try:
            previous = int(self.tty.get_mode())
        except OSError as e:
            if e.errno not in _NOT_A_VT:
                warnings.warn(f"fbgfx: cannot read the console mode: {e}", RuntimeWarning, stacklevel=2)
            return False
        if previous == KD_GRAPHICS:
            return True  # someone else (a display server, another Screen) owns it
        _restore.register(self, self.restore)
        try:
            self.tty.set_mode(KD_GRAPHICS)
        except OSError as e:
            _restore.unregister(self)
            warnings.warn(
                f"fbgfx: cannot switch the console to graphics mode ({e}); text and the cursor may show "
                "over the picture (run from the console itself or as root)",
                RuntimeWarning,
                stacklevel=2,
            )
            return False
        self._previous = previous
        return True

    def restore(self) -> None:
        """Put the KD mode back as it was; safe to call more than once."""
        previous, self._previous = self._previous, None
        try:
            if previous is not None and self.tty is not None and os.getpid() == self._pid:
                try:
                    self.tty.set_mode(previous)
                except OSError as e:
                    warnings.warn(f"fbgfx: could not restore the console mode: {e}", RuntimeWarning, stacklevel=2)
        finally:
            _restore.unregister(self)
            if self._owns and self.tty is not None and hasattr(self.tty, "close"):
                self.tty.close()
                self.tty = None

    def __enter__(self) -> Console:
        self.graphics()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()

    def __repr__(self) -> str:
        state = "graphics" if self.active else ("idle" if self.tty is not None else "no VT")
        return f"<Console {self.tty!r} {state}>"
