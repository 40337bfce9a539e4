"""The text console on a framebuffer: keep it from drawing over the picture.

A virtual terminal (VT) whose console is drawn on the framebuffer keeps scribbling
text and blinking a cursor over whatever a program shows. Switching the VT to
``KD_GRAPHICS`` (``KDSETMODE``) stops that; :class:`Console` does it and puts the
previous KD mode back on :meth:`Console.restore`, at exit and on fatal signals
(see :mod:`fbgfx._restore`).

Not being on a VT is normal (ssh, a service, CI): then nothing happens, and no error.

A program killed with SIGKILL cannot put the mode back, and the next program would find
``KD_GRAPHICS`` and take it for the original. So fbgfx records what it found, with the
holder's pid, in ``/run/fbgfx`` (or ``$XDG_RUNTIME_DIR/fbgfx``, else a private folder
in the temporary directory); the next opener that finds the holder dead takes the
recorded mode as the true original and restores that.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
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

    @property
    def record_key(self) -> str | None:
        """Which VT this is (its device number), for the record of who holds it."""
        try:
            rdev = os.fstat(self.fd).st_rdev
        except OSError:
            return None
        return f"tty-{os.major(rdev)}.{os.minor(rdev)}"

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
        self._record: _HolderRecord | None = None
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
        record = _HolderRecord.of(self.tty)
        if previous == KD_GRAPHICS:
            found = record.read() if record is not None else None
            if record is None or found is None or found.alive:
                return True  # someone else (a display server, another Screen) owns it
            # fbgfx left it so and died (SIGKILL) before restoring: the original is recorded
            previous = found.mode
            self._previous = previous
            _restore.register(self, self.restore)
            self._record = record
            record.write(previous)
            return True
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
        if record is not None:
            self._record = record
            record.write(previous)
        return True

    def restore(self) -> None:
        """Put the KD mode back as it was; safe to call more than once."""
        previous, self._previous = self._previous, None
        record, self._record = self._record, None
        try:
            if previous is not None and self.tty is not None and os.getpid() == self._pid:
                try:
                    self.tty.set_mode(previous)
                except OSError as e:
                    warnings.warn(f"fbgfx: could not restore the console mode: {e}", RuntimeWarning, stacklevel=2)
                if record is not None:
                    record.remove()
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


# -- who holds a VT in graphics mode -------------------------------------------------------------

#: Where holders are recorded, first usable wins (tests point it elsewhere).
RECORD_DIRS: tuple[str, ...] = ("/run/fbgfx",)


def _record_dirs() -> list[str]:
    dirs = list(RECORD_DIRS)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        dirs.append(os.path.join(runtime, "fbgfx"))
    dirs.append(os.path.join(tempfile.gettempdir(), f"fbgfx-{os.getuid()}"))
    return dirs


def _start_time(pid: int) -> str | None:
    """A process's start time (``/proc/PID/stat`` field 22): a pid used again by a new
    process has another. None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else ""


class _Found:
    """A record read back: the mode the holder found, and whether it still runs."""

    def __init__(self, mode: int, alive: bool) -> None:
        self.mode, self.alive = mode, alive


class _HolderRecord:
    """The file saying which process switched a VT to graphics and what mode it found."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.path: str | None = None

    @classmethod
    def of(cls, tty: Any) -> _HolderRecord | None:
        key = getattr(tty, "record_key", None)
        return cls(str(key)) if key else None

    def _dir(self, create: bool) -> str | None:
        for directory in _record_dirs():
            try:
                if create:
                    os.makedirs(directory, mode=0o700, exist_ok=True)
                st = os.lstat(directory)
            except OSError:
                continue
            # only a folder of ours (or root's) that nobody else may write into is believed
            if stat.S_ISDIR(st.st_mode) and st.st_uid in (0, os.getuid()) and not st.st_mode & 0o022:
                return directory
        return None

    def read(self) -> _Found | None:
        """The record left for this VT, or None (none, unreadable or not to be trusted)."""
        directory = self._dir(create=False)
        if directory is None:
            return None
        path = os.path.join(directory, f"console-{self.key}.json")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid not in (0, os.getuid()) or st.st_size > 4096:
                return None
            doc = json.loads(os.read(fd, 4096).decode())
            pid, mode, start = int(doc["pid"]), int(doc["mode"]), str(doc["start"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        finally:
            os.close(fd)
        if mode not in (KD_TEXT, KD_GRAPHICS):
            return None
        return _Found(mode, _start_time(pid) == start)

    def write(self, mode: int) -> None:
        """Record that this process switched the VT, having found ``mode``."""
        directory = self._dir(create=True)
        if directory is None:
            return  # nowhere to record: a SIGKILL then leaves the console as before
        path = os.path.join(directory, f"console-{self.key}.json")
        doc = {"pid": os.getpid(), "start": _start_time(os.getpid()), "mode": mode}
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".console-", suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
            self.path = path
        except OSError:
            return

    def remove(self) -> None:
        """Forget the record once the mode is back (only the one this process wrote)."""
        if self.path is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.path = None
