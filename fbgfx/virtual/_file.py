"""Framebuffer files: a virtual device's video memory in a file other processes open too.

A framebuffer file ``PATH`` holds the video memory; the mode, pan offset, colour map
and the options the device was created with live in ``PATH.state.json`` beside it.
That state file is what makes ``PATH`` a framebuffer file: :class:`FramebufferFile`
creates ``PATH`` only when nothing exists there (never following a symlink), and
refuses any existing ``PATH`` without a valid state file — it never truncates, grows
or overwrites a file it did not create. The file never changes size after creation,
so no process ever loses the memory it mapped. Changes are made under an ``flock``
of the memory file and published by writing a new state file beside it (a unique
``tempfile.mkstemp`` name, then ``os.replace``).

This module keeps the bytes, the locks and the state file's format;
:class:`fbgfx.virtual.VirtualDevice` keeps the fbdev rules the state must follow.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import mmap
import os
import reprlib
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import FramebufferError
from ..pixelformat import FORMATS, PixelFormat
from ..screeninfo import BITFIELD_NAMES, VAR_FIELDS, Bitfield, VarScreenInfo
from ._guard import Guard
from ._spec import MAX_MEMORY, MAX_SIDE, MODE_POLICIES, VirtualOptions

__all__ = ["STATE_SUFFIX", "DeviceState", "FramebufferFile"]

#: Appended to a framebuffer file's path to name its state file.
STATE_SUFFIX = ".state.json"
_STATE_VERSION = 1
_MAX_STATE_BYTES = 1 << 20
_U32 = (1 << 32) - 1

#: The options a state file keeps: what the device was created with, worked out.
_RECORD_FIELDS = (
    "memory",
    "stride_align",
    "line_length",
    "can_pan",
    "modes",
    "can_vsync",
    "can_blank",
    "id",
    "mode_list",
)


@dataclass
class DeviceState:
    """What a state file says about a device.

    Attributes:
        device: The options the device was created with (``memory`` and
            ``mode_list`` worked out); None in a state file of fbgfx 0.1.
        memory: The video memory size a state file of fbgfx 0.1 gives; None otherwise.
        var, format, visual, cmap: The current mode, its pixel format and visual, and
            the (256, 4) uint16 colour map.
    """

    device: VirtualOptions | None
    memory: int | None
    var: VarScreenInfo
    format: PixelFormat
    visual: int
    cmap: np.ndarray


class FramebufferFile:
    """One opener's framebuffer file: the memory file's descriptor and lock, the state file.

    Args:
        path: Where the memory file is (or is to be created).
        readonly: Open for reading only, create nothing.
    """

    def __init__(self, path: str, readonly: bool) -> None:
        self.path = path
        self.state_path = path + STATE_SUFFIX
        self.readonly = readonly
        self.closed = False
        self._fd = -1
        self._guard: Guard | None = None
        self._pid = os.getpid()
        self._mode = 0o666 & ~_umask()  # as open(..., "w") would create them

    def create(self, size: int, state: DeviceState) -> mmap.mmap | None:
        """Create the framebuffer file with ``size`` bytes of zeros and ``state``, and map
        it; None when something exists at the path.

        The memory file is made complete under a unique temporary name, locked, and
        then hard-linked into place, which fails if anything (even a dangling symlink)
        is at the path; the lock keeps other openers out until the state file is written.
        """
        path = self.path
        if os.path.lexists(path):
            return None  # opening an existing file reserves nothing (the filesystem may be full)
        directory = os.path.dirname(os.path.abspath(path))
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".new")
        except OSError as e:
            raise FramebufferError(
                e.errno or errno.EIO, f"cannot create the framebuffer file: {e.strerror}", path
            ) from None
        linked = False
        try:
            os.fchmod(fd, self._mode)
            fcntl.flock(fd, fcntl.LOCK_EX)
            # The space is reserved now, not when pixels are first written: a sparse file
            # on a full filesystem would kill the process with SIGBUS at its first frame.
            try:
                os.posix_fallocate(fd, 0, size)
            except OSError as e:
                if os.path.lexists(path):
                    os.close(fd)
                    return None  # another opener created it meanwhile: open that one
                if e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                    raise FramebufferError(
                        e.errno,
                        f"no room for {size} bytes of video memory on its filesystem ({e.strerror})",
                        path,
                    ) from None
                raise
            try:
                os.link(tmp, path)
            except FileExistsError:
                os.close(fd)
                return None
            linked = True
            self._fd = fd
            mem = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            self._guard = Guard(mem, writable=True)
            self.write_state(state)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return mem
        except BaseException as e:
            if self._guard is not None:
                self._guard.close()
                self._guard = None
            if linked:
                _unlink_if_same(path, fd)
            if self._fd == fd:
                self._fd = -1
            with contextlib.suppress(OSError):
                os.close(fd)
            if isinstance(e, OSError) and not isinstance(e, FramebufferError):
                raise FramebufferError(
                    e.errno or errno.EIO, f"cannot create the framebuffer file: {e.strerror}", path
                ) from None
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def adopt(self, take: Callable[[DeviceState], int]) -> mmap.mmap:
        """Open the existing framebuffer file and map it.

        Args:
            take: Called with the state file's contents, under the lock; takes the
                device as it is and returns its video memory size in bytes.
        """
        path = self.path
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if self.readonly:
                raise FramebufferError(
                    errno.ENOENT,
                    "no such framebuffer file (a read-only open creates nothing: "
                    "draw on the device first, e.g. with fbgfx show)",
                    path,
                ) from None
            raise FramebufferError(
                errno.ENOENT, "the framebuffer file vanished while it was being opened", path
            ) from None
        except OSError as e:
            raise FramebufferError(
                e.errno or errno.EIO, f"cannot open the framebuffer file: {e.strerror}", path
            ) from None
        _refuse_special(st, path)
        # O_NONBLOCK: opening never waits (a FIFO swapped in is refused by fstat below)
        flags = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
        flags |= os.O_RDONLY if self.readonly else os.O_RDWR
        try:
            fd = os.open(path, flags)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise FramebufferError(errno.ELOOP, "is a symbolic link; file= does not follow links", path) from None
            hint = " (fbgfx.open(..., readonly=True) only reads it)" if e.errno in (errno.EACCES, errno.EPERM) else ""
            raise FramebufferError(
                e.errno or errno.EIO, f"cannot open the framebuffer file: {e.strerror}{hint}", path
            ) from None
        try:
            now = os.fstat(fd)
            _refuse_special(now, path)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise FramebufferError(errno.EAGAIN, "the file was replaced while it was being opened", path)
            self._fd = fd
            self._mode = stat.S_IMODE(now.st_mode) & 0o666
            fcntl.flock(fd, fcntl.LOCK_SH)  # wait for a creator to finish writing the state
            try:
                memory_size = take(self.read_state(opening=True))
                size = os.fstat(fd).st_size
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            if size != memory_size:
                raise self.corrupt(f"it describes {memory_size} bytes of video memory but {path} holds {size}")
            prot = mmap.PROT_READ if self.readonly else mmap.PROT_READ | mmap.PROT_WRITE
            mem = mmap.mmap(fd, memory_size, mmap.MAP_SHARED, prot)
            self._guard = Guard(mem, writable=not self.readonly)
            return mem
        except BaseException:
            self._fd = -1
            os.close(fd)
            raise

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the file against other processes' changes (an exclusive ``flock``)."""
        fd = self._lock_fd()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_fd(self) -> int:
        """This process's own descriptor of the memory file: a forked child shares its
        parent's open file, and with it the parent's lock."""
        if self.closed:
            raise self._error(errno.EBADF, "the device is closed")
        if self._pid != os.getpid():
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            if (os.fstat(fd).st_ino, os.fstat(fd).st_dev) != (os.fstat(self._fd).st_ino, os.fstat(self._fd).st_dev):
                os.close(fd)
                raise self._error(errno.ESTALE, "the framebuffer file was replaced; open it again")
            os.close(self._fd)
            self._fd, self._pid = fd, os.getpid()
        return self._fd

    def read_state(self, opening: bool) -> DeviceState:
        """The state file's contents, checked field by field.

        Args:
            opening: True while opening (a missing state file means the path is not a
                framebuffer file), False later (it was removed under the device).

        Raises:
            FramebufferError: The state file is missing, unreadable or corrupt.
        """
        path = self.state_path
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
        except FileNotFoundError:
            if opening:
                raise FramebufferError(
                    errno.EINVAL,
                    f"not a framebuffer file (there is no {os.path.basename(path)} beside it); fbgfx uses only "
                    "files it created itself: give file= a path where nothing exists yet",
                    self.path,
                ) from None
            raise self._error(errno.ESTALE, f"{path} was removed; open the device again") from None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise self.corrupt("it is a symbolic link") from None
            raise FramebufferError(e.errno or errno.EIO, f"cannot read {path}: {e.strerror}", self.path) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, whose error names the fd
                raise self.corrupt("it is not a regular file")
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as f:
            data = f.read(_MAX_STATE_BYTES + 1)
        if len(data) > _MAX_STATE_BYTES:
            raise self.corrupt(f"it is larger than {_MAX_STATE_BYTES} bytes")
        try:
            return _parse_state(data)
        except _Corrupt as e:
            raise self.corrupt(str(e)) from None

    def write_state(self, state: DeviceState) -> None:
        """Publish the state: a unique temporary file beside it, then an atomic rename
        (which replaces a symlink planted there instead of writing through it)."""
        path = self.state_path
        var = {name: getattr(state.var, name) for name in VAR_FIELDS}
        for name in BITFIELD_NAMES:
            bf = var[name]
            var[name] = {"offset": bf.offset, "length": bf.length, "msb_right": bf.msb_right}
        assert state.device is not None
        device = {name: getattr(state.device, name) for name in _RECORD_FIELDS}
        device["mode_list"] = list(device["mode_list"] or [])
        doc = {
            "version": _STATE_VERSION,
            "device": device,
            "var": var,
            "format": state.format.name,
            "visual": state.visual,
            "cmap": state.cmap.tolist(),
        }
        data = json.dumps(doc, separators=(",", ":")).encode()
        directory, name = os.path.split(path)
        try:
            fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".tmp")
        except OSError as e:
            raise FramebufferError(e.errno or errno.EIO, f"cannot write {path}: {e.strerror}", self.path) from None
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), self._mode)
                f.write(data)
            os.replace(tmp, path)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(e, OSError):
                raise FramebufferError(e.errno or errno.EIO, f"cannot write {path}: {e.strerror}", self.path) from None
            raise

    def check_size(self, size: int) -> None:
        """Raise :class:`FramebufferError` (``ENODEV``) when the memory file holds fewer
        than ``size`` bytes, or held fewer when the mapping was last touched: another
        program truncated it. Touching the missing pages would kill this process with
        SIGBUS, but for the guard (:mod:`fbgfx.virtual._guard`), which puts zero pages there and
        marks the mapping lost: the device is gone for good then. One ``fstat``."""
        fd = self._fd
        if fd < 0:
            return
        if self._guard is not None and self._guard.lost:
            raise FramebufferError(
                errno.ENODEV,
                "the framebuffer file was truncated under its mapping by another program (which is like "
                "unplugging the device); what was drawn since went nowhere: open it again once it is recreated",
                self.path,
            )
        try:
            have = os.fstat(fd).st_size
        except OSError:
            return  # closed meanwhile: the caller's own checks say so
        if have < size:
            raise FramebufferError(
                errno.ENODEV,
                f"the framebuffer file shrank to {have} of its {size} bytes (another program truncated it, "
                "which is like unplugging the device); open it again once it is recreated",
                self.path,
            )

    def corrupt(self, what: str) -> FramebufferError:
        """The error for a state file that does not describe the device, saying ``what``."""
        return FramebufferError(
            errno.EINVAL,
            f"the device state in {self.state_path} is unusable: {what}; to reset the device, "
            f"delete {self.path} and {self.state_path}",
            self.path,
        )

    def close(self) -> None:
        """Close the memory file's descriptor (the mapping stays the device's); safe twice."""
        self.closed = True
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.close()  # before the device unmaps the memory
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def _error(self, err: int, doing: str) -> FramebufferError:
        return FramebufferError.from_errno(err, doing, self.path)


class _Corrupt(Exception):
    """A state file that does not describe a device; the message says what is wrong."""


def _parse_state(data: bytes) -> DeviceState:
    """Check a state file's contents field by field; raises :class:`_Corrupt`."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise _Corrupt("its JSON is nested too deeply") from None
    except ValueError as e:
        raise _Corrupt(f"it is not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise _Corrupt("it is not a JSON object")
    for key in ("device", "var", "format", "visual", "cmap"):
        if key not in doc:
            raise _Corrupt(f"it has no {key!r}")
    record: VirtualOptions | None = None
    memory: int | None = None
    device = doc["device"]
    if "version" not in doc and isinstance(device, list) and len(device) == 4:
        memory = _int(device[3], "device memory", 1, MAX_MEMORY)  # fbgfx 0.1's [w, h, format, memory]
    elif doc.get("version") == _STATE_VERSION and isinstance(device, dict):
        record = _device_of(device)
    else:
        raise _Corrupt(f"it is not a state fbgfx knows (version {_show(doc.get('version'))})")
    var = _var_of(doc["var"])
    name = doc["format"]
    if not isinstance(name, str) or name not in FORMATS:
        raise _Corrupt(f"format is {_show(name)}, not a known pixel format")
    visual = _int(doc["visual"], "visual", 0, 255)
    return DeviceState(record, memory, var, FORMATS[name], visual, _cmap_of(doc["cmap"]))


def _cmap_of(cmap: Any) -> np.ndarray:
    try:
        # numpy checks the shape and the element types in C: this runs on every pan
        table = np.array(cmap) if isinstance(cmap, list) else None
    except (ValueError, TypeError, OverflowError, RecursionError):
        table = None
    if (
        table is None
        or table.shape != (256, 4)
        or table.dtype.kind not in "iu"
        or table.min() < 0
        or table.max() > 0xFFFF
    ):
        raise _Corrupt("cmap is not 256 entries of 4 integers 0..65535")
    return table.astype(np.uint16)


def _device_of(d: dict[str, Any]) -> VirtualOptions:
    if set(d) != set(_RECORD_FIELDS):
        raise _Corrupt(f"device has the fields {sorted(d)}, expected {sorted(_RECORD_FIELDS)}")
    line = d["line_length"]
    for flag in ("can_pan", "can_vsync", "can_blank"):
        if not isinstance(d[flag], bool):
            raise _Corrupt(f"device {flag} is {_show(d[flag])}, expected true or false")
    if d["modes"] not in MODE_POLICIES:
        raise _Corrupt(f"device modes is {_show(d['modes'])}, expected one of {', '.join(MODE_POLICIES)}")
    modes = d["mode_list"]
    if not (
        isinstance(modes, list) and 0 < len(modes) <= 4096 and all(isinstance(m, str) and len(m) < 64 for m in modes)
    ):
        raise _Corrupt("device mode_list is not a list of mode strings")
    if not isinstance(d["id"], str) or len(d["id"]) > 64:
        raise _Corrupt(f"device id is {_show(d['id'])}, expected a short string")
    return VirtualOptions(
        memory=_int(d["memory"], "device memory", 1, MAX_MEMORY),
        stride_align=_int(d["stride_align"], "device stride_align", 1, MAX_SIDE),
        line_length=None if line is None else _int(line, "device line_length", 1, MAX_MEMORY),
        can_pan=d["can_pan"],
        modes=d["modes"],
        can_vsync=d["can_vsync"],
        can_blank=d["can_blank"],
        id=d["id"],
        mode_list=modes,
    )


def _var_of(v: Any) -> VarScreenInfo:
    if not isinstance(v, dict):
        raise _Corrupt(f"var is {_show(v)}, expected an object")
    missing = [k for k in VAR_FIELDS if k not in v]
    unknown = [k for k in v if k not in VAR_FIELDS]
    if missing or unknown:
        raise _Corrupt(f"var lacks {missing}" if missing else f"var has unknown fields {unknown[:5]}")
    fields: dict[str, Any] = {}
    for key in VAR_FIELDS:
        value = v[key]
        if key in BITFIELD_NAMES:
            if not isinstance(value, dict) or set(value) != {"offset", "length", "msb_right"}:
                raise _Corrupt(f"var {key} is {_show(value)}, expected an offset/length/msb_right object")
            parts = (_int(value[k], f"var {key} {k}", 0, 32) for k in ("offset", "length", "msb_right"))
            fields[key] = Bitfield(*parts)
        else:
            fields[key] = _int(value, f"var {key}", 0, _U32)
    return VarScreenInfo(**fields)


def _int(value: Any, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise _Corrupt(f"{what} is {_show(value)}, expected an integer {low}..{high}")
    return value


def _show(value: Any) -> str:
    return reprlib.repr(value)


def _refuse_special(st: os.stat_result, path: str) -> None:
    """Refuse anything but a regular file at ``path``, saying what it is."""
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        raise FramebufferError(errno.ELOOP, "is a symbolic link; file= does not follow links", path)
    if stat.S_ISDIR(mode):
        raise FramebufferError(errno.EISDIR, "is a directory, not a framebuffer file", path)
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise FramebufferError(errno.EINVAL, f"is {kind}, not a framebuffer file (file= takes a regular file)", path)


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _unlink_if_same(path: str, fd: int) -> None:
    """Remove ``path`` if it is still the file open as ``fd`` (one this process created)."""
    with contextlib.suppress(OSError):
        here, ours = os.lstat(path), os.fstat(fd)
        if (here.st_dev, here.st_ino) == (ours.st_dev, ours.st_ino):
            os.unlink(path)
