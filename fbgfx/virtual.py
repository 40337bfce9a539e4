"""A virtual framebuffer: the kernel's fbdev behaviour in-process, for headless use and tests.

:class:`VirtualDevice` answers the same operations as ``/dev/fbN`` and follows the
kernel's rules: ``line_length`` rounded like vfb (or to a chosen alignment), a fixed
amount of video memory that makes a too-large mode fail with ENOMEM, pan limits and
steps, a colour map for palette formats, and per-instance capabilities so a test can
play a DRM-emulated fb that refuses mode changes or a legacy driver that allows them.

A *framebuffer file* (``file=PATH``) holds the video memory, so that other processes
can open the same device; the mode, pan offset, colour map and capabilities live in
``PATH.state.json`` beside it. That state file is what makes ``PATH`` a framebuffer
file: fbgfx creates ``PATH`` only when nothing exists there (never following a
symlink), and refuses any existing ``PATH`` without a valid state file — it never
truncates, grows or overwrites a file it did not create. Every opener of an existing
framebuffer file takes the device as it is (size, format, mode and capabilities from
the state file), as every opener of ``/dev/fb0`` does: the spec's size, format and
options only describe a device still to be created. The file never changes size
after creation, so no process ever loses the memory it mapped. Changes are made
under an ``flock`` of the memory file and published by writing a new state file
beside it (a unique ``tempfile.mkstemp`` name, then ``os.replace``).
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
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, Callable

import numpy as np

from .backend import FbdevBackend
from .device import Framebuffer
from .errors import FramebufferError, UnsupportedFormatError
from .pixelformat import FORMATS, PixelFormat
from .screeninfo import (
    BITFIELD_NAMES,
    FB_ACTIVATE_TEST,
    FB_VISUAL_MONO10,
    FB_VISUAL_PSEUDOCOLOR,
    FB_VISUAL_TRUECOLOR,
    VAR_FIELDS,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
)

__all__ = ["MAX_MEMORY", "MAX_SIDE", "VirtualDevice", "VirtualFramebuffer", "parse_spec"]

#: The layout a virtual device takes when a mode change asks for a new depth.
DEFAULT_FORMAT_FOR_BPP = {32: "XRGB8888", 24: "RGB888", 16: "RGB565", 8: "C8", 4: "R4", 2: "R2", 1: "R1"}

#: How a virtual device answers a mode change: apply it (legacy fbdev such as vfb),
#: refuse it with EINVAL (DRM fbdev emulation), or accept it into var without
#: showing it (what bochs DRM does for smaller modes).
MODE_POLICIES = ("allow", "refuse", "ignore")

#: The largest width or height, visible or virtual, of a virtual framebuffer.
MAX_SIDE = 1 << 16
#: The most video memory a virtual framebuffer may have (bytes).
MAX_MEMORY = 1 << 31

#: Appended to a framebuffer file's path to name its state file.
STATE_SUFFIX = ".state.json"
_STATE_VERSION = 1
_MAX_STATE_BYTES = 1 << 20
_U32 = (1 << 32) - 1

# The kernel's 16 console colours, where vfb starts its colour map.
_CONSOLE_COLORS = [
    (0, 0, 0),
    (0, 0, 170),
    (0, 170, 0),
    (0, 170, 170),
    (170, 0, 0),
    (170, 0, 170),
    (170, 85, 0),
    (170, 170, 170),
    (85, 85, 85),
    (85, 85, 255),
    (85, 255, 85),
    (85, 255, 255),
    (255, 85, 85),
    (255, 85, 255),
    (255, 255, 85),
    (255, 255, 255),
]


class VirtualDevice(FbdevBackend):
    """An in-memory framebuffer driver.

    Args:
        width, height: Visible size (1 to :data:`MAX_SIDE`).
        format: A :class:`PixelFormat` or its name.
        virtual_width, virtual_height: Virtual size (default: the visible size).
        memory: Bytes of video memory (default: room for two visible pages, at most
            :data:`MAX_MEMORY`).
        stride_align: ``line_length`` is rounded up to this many bytes (4, as vfb).
        line_length: A fixed stride instead, e.g. to imitate a padded DRM buffer; at
            least one row of the virtual width.
        can_pan: Whether panning works (``ypanstep`` 1, else 0).
        modes: ``"allow"``, ``"refuse"`` or ``"ignore"`` mode changes (see MODE_POLICIES).
        can_vsync: Whether ``FBIO_WAITFORVSYNC`` works (sleeps to the next 60 Hz tick).
        can_blank: Whether ``FBIOBLANK`` works.
        file: Keep video memory in this framebuffer file, so other processes can open
            the same device (see the module docstring): created when nothing exists
            there, taken as it is (with its own size, format and options) when it is a
            framebuffer file, refused otherwise.
        id: The driver name in ``fix.id``.
        mode_list: The modes :meth:`Framebuffer.modes` lists, as mode strings (a list,
            or one string separated by commas); default: the starting mode.
        readonly: Change nothing: never create ``file``, map memory read-only and
            refuse mode, pan and colour map changes with ``EPERM``.

    Raises:
        ValueError: An option out of range (the message names it).
        FramebufferError: ``file`` cannot be created or is not a framebuffer file, its
            state file is corrupt (the message says how to reset it), or ``memory`` is
            too small for the mode (``ENOMEM``).
    """

    def __init__(
        self,
        width: int,
        height: int,
        format: Any = "XRGB8888",
        *,
        virtual_width: int | None = None,
        virtual_height: int | None = None,
        memory: int | None = None,
        stride_align: int = 4,
        line_length: int | None = None,
        can_pan: bool = True,
        modes: str = "allow",
        can_vsync: bool = False,
        can_blank: bool = False,
        file: Any = None,
        id: str = "fbgfx virtual",
        mode_list: Any = None,
        readonly: bool = False,
    ) -> None:
        fmt = format if isinstance(format, PixelFormat) else PixelFormat.from_name(str(format))
        options = dict(
            virtual_width=virtual_width,
            virtual_height=virtual_height,
            memory=memory,
            stride_align=stride_align,
            line_length=line_length,
            modes=modes,
            file=file,
            id=id,
            mode_list=mode_list,
        )
        _check_options(width, height, fmt, options, lambda key: key)
        self._file: str | None = None if file is None else os.fspath(file)
        self.path = self._file or "virtual"
        self.readonly = bool(readonly)
        self.shared = self._file is not None
        self.stride_align = int(stride_align)
        self.fixed_line_length = None if line_length is None else int(line_length)
        self.can_pan = bool(can_pan)
        self.modes = modes
        self.can_vsync = bool(can_vsync)
        self.can_blank = bool(can_blank)
        self.blanked = 0
        self.id = str(id)
        if isinstance(mode_list, str):
            mode_list = [m for m in mode_list.split(",") if m]
        self.mode_list: list[str] | None = list(mode_list) if mode_list else [f"{width}x{height}-{fmt.bpp}"]
        var = _var_for(width, height, virtual_width or width, virtual_height or height, fmt)
        self.format = fmt
        line = self._line_length(var)
        needed = line * var.yres_virtual
        if needed > MAX_MEMORY:
            raise ValueError(
                f"a {var.xres_virtual}x{var.yres_virtual} {fmt.name} framebuffer needs {needed} bytes of "
                f"video memory; a virtual one has at most {MAX_MEMORY}"
            )
        self.memory_size = int(memory) if memory is not None else (2 * needed if 2 * needed <= MAX_MEMORY else needed)
        if needed > self.memory_size:
            raise FramebufferError(errno.ENOMEM, f"{needed} bytes needed, {self.memory_size} available", self.path)
        self._var, self._fix = var, self._fix_for(var)
        self.cmap = np.zeros((256, 4), np.uint16)
        self.cmap[: len(_CONSOLE_COLORS), :3] = np.array(_CONSOLE_COLORS, np.uint16) * 257
        self.pan_count = 0
        self._lock = threading.RLock()
        self._fd = -1
        self._pid = os.getpid()
        self._state_mode = 0o666 & ~_umask()  # as open(..., "w") would create them
        self._closed = False
        if self._file is None:
            prot = mmap.PROT_READ if self.readonly else mmap.PROT_READ | mmap.PROT_WRITE
            # anonymous memory is zero pages until written: a large device costs nothing up front
            self._mem = mmap.mmap(-1, self.memory_size, prot=prot)
        elif self.readonly or not self._create(self._file):
            self._adopt(self._file)

    # -- the operations Framebuffer drives ---------------------------------------------------

    def get_var(self) -> VarScreenInfo:
        with self._lock:
            self._sync()
            return self._var

    def get_fix(self) -> FixScreenInfo:
        with self._lock:
            self._sync()
            return self._fix

    def put_var(self, var: VarScreenInfo) -> VarScreenInfo:
        if (var.activate & 0xF) == FB_ACTIVATE_TEST:
            with self._lock:  # a test changes nothing, so a read-only opener may ask too
                self._sync()
                return self._apply_var(var, test=True)
        with self._changing("setting the mode (FBIOPUT_VSCREENINFO)"):
            return self._apply_var(var, test=False)

    def pan(self, var: VarScreenInfo) -> None:
        with self._changing("panning (FBIOPAN_DISPLAY)"):
            cur = self._var
            fix = self._fix
            if not self.can_pan and (var.xoffset, var.yoffset) != (cur.xoffset, cur.yoffset):
                raise self._error(errno.EINVAL, "panning (FBIOPAN_DISPLAY)")
            if (
                var.xoffset + cur.xres > cur.xres_virtual
                or var.yoffset + cur.yres > cur.yres_virtual
                or (fix.xpanstep and var.xoffset % fix.xpanstep)
                or (fix.ypanstep and var.yoffset % fix.ypanstep)
            ):
                raise self._error(errno.EINVAL, "panning (FBIOPAN_DISPLAY)")
            self._var = cur.replace(xoffset=var.xoffset, yoffset=var.yoffset)
            self.pan_count += 1

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        with self._lock:
            self._sync()
            if start < 0 or length < 0 or start + length > self._cmap_size():
                raise self._error(errno.EINVAL, "reading the colour map (FBIOGETCMAP)")
            entries: np.ndarray = self.cmap[start : start + length].copy()
            return entries

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        entries = np.asarray(entries, np.uint16)
        with self._changing("writing the colour map (FBIOPUTCMAP)"):
            if start < 0 or start + len(entries) > self._cmap_size():
                raise self._error(errno.EINVAL, "writing the colour map (FBIOPUTCMAP)")
            self.cmap[start : start + len(entries)] = entries

    def blank(self, level: int) -> bool:
        if not self.can_blank:
            raise self._error(errno.EINVAL, "blanking (FBIOBLANK)")
        if self.readonly:
            raise self._error(errno.EPERM, "blanking (FBIOBLANK): the device is open read-only")
        self.blanked = level
        return True

    def wait_for_vsync(self) -> None:
        if not self.can_vsync:
            raise self._error(errno.ENOTTY, "waiting for vsync (FBIO_WAITFORVSYNC)")
        period = 1 / 60
        time.sleep(period - time.monotonic() % period)

    def map(self, length: int) -> Any:
        if self._closed:
            raise self._error(errno.EBADF, "mapping video memory: the device is closed")
        if length > self.memory_size:
            raise self._error(errno.EINVAL, f"mapping {length} bytes of video memory")
        # A view, so that the Framebuffer releasing it leaves the device's memory mapped.
        return memoryview(self._mem)

    def close(self) -> None:
        """Release a framebuffer file; in-memory video memory stays with the device, as a
        kernel driver's does across opens. Safe to call twice."""
        if self._file is None or self._closed:
            return
        self._closed = True
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        try:
            self._mem.close()
        except BufferError:
            pass  # views handed out still use it; it is unmapped when they go

    # -- the framebuffer file -------------------------------------------------------------------

    @property
    def state_path(self) -> str | None:
        """Where a file-backed device keeps its mode, pan offset, colour map and
        capabilities (``FILE.state.json``), so that every process opening the same
        device sees the same state, as with a kernel driver. None without a file."""
        return None if self._file is None else self._file + STATE_SUFFIX

    def _create(self, path: str) -> bool:
        """Create the framebuffer file at ``path``; False when something exists there.

        The memory file is made complete under a unique temporary name, locked, and
        then hard-linked into place, which fails if anything (even a dangling symlink)
        is at ``path``; the lock keeps other openers out until the state file is written.
        """
        directory = os.path.dirname(os.path.abspath(path))
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".new")
        except OSError as e:
            raise FramebufferError(
                e.errno or errno.EIO, f"cannot create the framebuffer file: {e.strerror}", path
            ) from None
        linked = False
        try:
            os.fchmod(fd, self._state_mode)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, self.memory_size)  # a new file nobody has mapped yet
            try:
                os.link(tmp, path)
            except FileExistsError:
                os.close(fd)
                return False
            linked = True
            self._fd = fd
            self._mem = mmap.mmap(fd, self.memory_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            self._write_state()
            fcntl.flock(fd, fcntl.LOCK_UN)
            return True
        except BaseException as e:
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

    def _adopt(self, path: str) -> None:
        """Open the existing framebuffer file at ``path`` and take the device as it is."""
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
            self._state_mode = stat.S_IMODE(now.st_mode) & 0o666
            fcntl.flock(fd, fcntl.LOCK_SH)  # wait for a creator to finish writing the state
            try:
                state = self._read_state(opening=True)
                self._apply_device(state)
                self._apply_state(state)
                size = os.fstat(fd).st_size
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            if size != self.memory_size:
                raise self._corrupt(f"it describes {self.memory_size} bytes of video memory but {path} holds {size}")
            prot = mmap.PROT_READ if self.readonly else mmap.PROT_READ | mmap.PROT_WRITE
            self._mem = mmap.mmap(fd, self.memory_size, mmap.MAP_SHARED, prot)
        except BaseException:
            self._fd = -1
            os.close(fd)
            raise

    @contextlib.contextmanager
    def _changing(self, doing: str) -> Iterator[None]:
        """Hold the device for a change: in-process and, for a framebuffer file, against
        other processes; the body works on fresh state, which is published afterwards."""
        if self.readonly:
            raise self._error(errno.EPERM, f"{doing}: the device is open read-only")
        with self._lock:
            if self._file is None:
                yield
                return
            fd = self._lock_fd()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._sync()
                yield
                self._write_state()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_fd(self) -> int:
        """This process's own descriptor of the memory file: a forked child shares its
        parent's open file, and with it the parent's lock."""
        if self._closed or self._file is None:
            raise self._error(errno.EBADF, "the device is closed")
        if self._pid != os.getpid():
            fd = os.open(self._file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            if (os.fstat(fd).st_ino, os.fstat(fd).st_dev) != (os.fstat(self._fd).st_ino, os.fstat(self._fd).st_dev):
                os.close(fd)
                raise self._error(errno.ESTALE, "the framebuffer file was replaced; open it again")
            os.close(self._fd)
            self._fd, self._pid = fd, os.getpid()
        return self._fd

    def _sync(self) -> None:
        """Re-read the state another process may have changed (a framebuffer file only)."""
        if self._file is None or self._closed:
            return
        state = self._read_state(opening=False)
        if self._device_dict() != state["device"] and state["device"] is not None:
            raise self._error(
                errno.ESTALE,
                f"the device was replaced by another one ({state['device']['memory']} "
                "bytes of video memory); open it again",
            )
        self._apply_state(state)

    def _read_state(self, opening: bool) -> dict[str, Any]:
        path = self.state_path
        assert path is not None and self._file is not None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
        except FileNotFoundError:
            if opening:
                raise FramebufferError(
                    errno.EINVAL,
                    f"not a framebuffer file (there is no {os.path.basename(path)} beside it); fbgfx uses only "
                    "files it created itself: give file= a path where nothing exists yet",
                    self._file,
                ) from None
            raise self._error(errno.ESTALE, f"{path} was removed; open the device again") from None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise self._corrupt("it is a symbolic link") from None
            raise FramebufferError(e.errno or errno.EIO, f"cannot read {path}: {e.strerror}", self._file) from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise self._corrupt("it is not a regular file")
            data = f.read(_MAX_STATE_BYTES + 1)
        if len(data) > _MAX_STATE_BYTES:
            raise self._corrupt(f"it is larger than {_MAX_STATE_BYTES} bytes")
        try:
            return _parse_state(data)
        except _Corrupt as e:
            raise self._corrupt(str(e)) from None

    def _apply_device(self, state: dict[str, Any]) -> None:
        """Take the existing device's capabilities and size (from its state file)."""
        device = state["device"]
        if device is None:  # written by fbgfx 0.1: only the memory size was kept
            self.memory_size = state["memory"]
            return
        self.memory_size = device["memory"]
        self.stride_align = device["stride_align"]
        self.fixed_line_length = device["line_length"]
        self.can_pan, self.can_vsync, self.can_blank = device["can_pan"], device["can_vsync"], device["can_blank"]
        self.modes, self.id, self.mode_list = device["modes"], device["id"], list(device["mode_list"])

    def _apply_state(self, state: dict[str, Any]) -> None:
        var, fmt = state["var"], state["format"]
        problem = self._problem(var, fmt, state["visual"])
        if problem:
            raise self._corrupt(problem)
        self._var, self.format = var, fmt
        self._fix = self._fix_for(var)
        self.cmap[:] = state["cmap"]

    def _problem(self, var: VarScreenInfo, fmt: PixelFormat, visual: int) -> str | None:
        """What makes a var from a state file unusable on this device, or None."""
        try:
            described = PixelFormat.from_var(var, visual)
        except UnsupportedFormatError as e:
            return f"var does not describe a pixel format ({e})"
        if described != fmt or visual != _visual_of(fmt):
            return f"format {fmt.name} does not match the var ({var.bits_per_pixel} bpp, visual {visual})"
        if not (0 < var.xres <= var.xres_virtual <= MAX_SIDE and 0 < var.yres <= var.yres_virtual <= MAX_SIDE):
            return (
                f"the sizes {var.xres}x{var.yres} (virtual {var.xres_virtual}x{var.yres_virtual}) are not "
                f"1..{MAX_SIDE} with the virtual size at least the visible one"
            )
        if var.xoffset + var.xres > var.xres_virtual or var.yoffset + var.yres > var.yres_virtual:
            return f"the pan offset {var.xoffset},{var.yoffset} is outside the virtual screen"
        line = self._line_length(var)
        if line < fmt.row_bytes(var.xres_virtual) or line * var.yres_virtual > self.memory_size:
            return f"{var.yres_virtual} lines of {line} bytes do not fit in {self.memory_size} bytes of video memory"
        return None

    def _device_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory_size,
            "stride_align": self.stride_align,
            "line_length": self.fixed_line_length,
            "can_pan": self.can_pan,
            "modes": self.modes,
            "can_vsync": self.can_vsync,
            "can_blank": self.can_blank,
            "id": self.id,
            "mode_list": list(self.mode_list or []),
        }

    def _write_state(self) -> None:
        """Publish the state: a unique temporary file beside it, then an atomic rename
        (which replaces a symlink planted there instead of writing through it)."""
        path = self.state_path
        assert path is not None
        var = {name: getattr(self._var, name) for name in VAR_FIELDS}
        for name in BITFIELD_NAMES:
            bf = var[name]
            var[name] = {"offset": bf.offset, "length": bf.length, "msb_right": bf.msb_right}
        state = {
            "version": _STATE_VERSION,
            "device": self._device_dict(),
            "var": var,
            "format": self.format.name,
            "visual": self._fix.visual,
            "cmap": self.cmap.tolist(),
        }
        data = json.dumps(state, separators=(",", ":")).encode()
        directory, name = os.path.split(path)
        try:
            fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".tmp")
        except OSError as e:
            raise FramebufferError(e.errno or errno.EIO, f"cannot write {path}: {e.strerror}", self._file) from None
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), self._state_mode)
                f.write(data)
            os.replace(tmp, path)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(e, OSError):
                raise FramebufferError(e.errno or errno.EIO, f"cannot write {path}: {e.strerror}", self._file) from None
            raise

    def _corrupt(self, what: str) -> FramebufferError:
        return FramebufferError(
            errno.EINVAL,
            f"the device state in {self.state_path} is unusable: {what}; to reset the device, "
            f"delete {self._file} and {self.state_path}",
            self._file,
        )

    # -- kernel rules ---------------------------------------------------------------------------

    def _apply_var(self, var: VarScreenInfo, test: bool) -> VarScreenInfo:
        cur = self._var
        checked, fmt = self._check_var(var)
        changes_mode = _geometry(checked) != _geometry(cur)
        if changes_mode and self.modes == "refuse":
            raise self._error(errno.EINVAL, "setting the mode (FBIOPUT_VSCREENINFO)")
        if changes_mode and self.modes == "ignore":
            # Accepted into var, but the buffer and what is shown stay as they were.
            checked = checked.replace(
                xres_virtual=cur.xres_virtual,
                yres_virtual=cur.yres_virtual,
                bits_per_pixel=cur.bits_per_pixel,
                red=cur.red,
                green=cur.green,
                blue=cur.blue,
                transp=cur.transp,
            )
            if not test:
                self._var = checked
            return checked
        if not test:
            self._var, self.format = checked.replace(activate=0), fmt
            self._fix = self._fix_for(self._var)
        return checked

    def _check_var(self, var: VarScreenInfo) -> tuple[VarScreenInfo, PixelFormat]:
        """What a driver's ``fb_check_var`` does: round up, fill in, or refuse."""
        bpp = next((b for b in (1, 2, 4, 8, 16, 24, 32) if var.bits_per_pixel <= b), None)
        if bpp is None or var.xres == 0 or var.yres == 0:
            raise self._error(errno.EINVAL, "setting the mode (FBIOPUT_VSCREENINFO)")
        if bpp == self._var.bits_per_pixel:
            fmt = self.format
        else:
            fmt = FORMATS[DEFAULT_FORMAT_FOR_BPP[bpp]]
        vx = max(var.xres_virtual, var.xres + var.xoffset)
        vy = max(var.yres_virtual, var.yres + var.yoffset)
        if max(vx, vy) > MAX_SIDE:
            raise self._error(errno.EINVAL, "setting the mode (FBIOPUT_VSCREENINFO)")
        checked = _var_for(var.xres, var.yres, vx, vy, fmt, base=var)
        if self._line_length(checked) * vy > self.memory_size:
            raise self._error(errno.ENOMEM, "setting the mode (FBIOPUT_VSCREENINFO)")
        return checked, fmt

    def _line_length(self, var: VarScreenInfo) -> int:
        if self.fixed_line_length:
            return self.fixed_line_length
        row = (var.xres_virtual * var.bits_per_pixel + 7) // 8
        return -(-row // self.stride_align) * self.stride_align

    def _fix_for(self, var: VarScreenInfo) -> FixScreenInfo:
        return FixScreenInfo(
            id=self.id[:15],
            smem_len=self.memory_size,
            visual=_visual_of(self.format),
            xpanstep=1 if self.can_pan else 0,
            ypanstep=1 if self.can_pan else 0,
            line_length=self._line_length(var),
        )

    def _cmap_size(self) -> int:
        return 256

    def _error(self, err: int, doing: str) -> FramebufferError:
        return FramebufferError.from_errno(err, doing, self.path)


class VirtualFramebuffer(Framebuffer):
    """A :class:`Framebuffer` over a :class:`VirtualDevice`: same interface, no kernel.

    Example:
        >>> fb = VirtualFramebuffer(800, 480, "RGB565")
        >>> fb.pixels.shape
        (480, 800)
    """

    def __init__(
        self, width: int = 800, height: int = 480, format: Any = "XRGB8888", *, readonly: bool = False, **options: Any
    ) -> None:
        device = VirtualDevice(width, height, format, readonly=readonly, **options)
        var = device.get_var()
        super().__init__(device, f"virtual:{var.xres}x{var.yres}:{device.format.name}", readonly=readonly)

    @property
    def device(self) -> VirtualDevice:
        """The simulated driver, for inspecting what fbgfx asked of it."""
        device = self._device
        assert isinstance(device, VirtualDevice)
        return device

    @classmethod
    def from_spec(cls, spec: str, *, readonly: bool = False) -> VirtualFramebuffer:
        """Open ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]`` (see :func:`parse_spec`).

        With ``readonly`` nothing is created or changed (see :class:`VirtualDevice`).
        """
        width, height, fmt, options = parse_spec(spec)
        return cls(width, height, fmt, readonly=readonly, **options)


_OPTION_TYPES: dict[str, type] = {
    "virtual_width": int,
    "virtual_height": int,
    "memory": int,
    "stride_align": int,
    "line_length": int,
    "can_pan": bool,
    "can_vsync": bool,
    "can_blank": bool,
    "modes": str,
    "file": str,
    "id": str,
    "mode_list": str,
}
_OPTION_ALIASES = {
    "vw": "virtual_width",
    "vh": "virtual_height",
    "stride": "line_length",
    "align": "stride_align",
    "pan": "can_pan",
    "vsync": "can_vsync",
    "blank": "can_blank",
    "modelist": "mode_list",
}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_spec(spec: str) -> tuple[int, int, str, dict[str, Any]]:
    """Parse ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]``.

    Keys are :class:`VirtualDevice` options (``pan=0``, ``modes=refuse``,
    ``vh=960``, ``stride=1664``, ``memory=4194304``, ``file=/tmp/fb.raw`` ...), each
    given at most once; yes/no options take 1/0, true/false, yes/no or on/off.

    Returns:
        (width, height, format name, options dict).

    Raises:
        ValueError: The spec cannot be parsed, or a value is out of range; the
            message names the key.
    """
    parts = spec.split(":")
    if parts[0] != "virtual":
        raise ValueError(f"not a virtual framebuffer spec: {spec!r}")
    size = parts[1] if len(parts) > 1 and parts[1] else "800x480"
    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise ValueError(f"bad size {size!r} in {spec!r}: expected WIDTHxHEIGHT, e.g. virtual:800x480:RGB565") from None
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ValueError(f"bad size {size!r} in {spec!r}: width and height must be 1..{MAX_SIDE}")
    fmt: str | None = None
    options: dict[str, Any] = {}
    given: dict[str, str] = {}  # option -> the key the spec used for it
    for part in parts[2:]:
        if "=" not in part:
            name = PixelFormat.from_name(part).name
            if fmt is not None:
                raise ValueError(f"two pixel formats ({fmt} and {name}) in {spec!r}: give one")
            fmt = name
            continue
        key, value = part.split("=", 1)
        option = _OPTION_ALIASES.get(key, key)
        kind = _OPTION_TYPES.get(option)
        if kind is None:
            raise ValueError(f"unknown virtual framebuffer option {key!r} in {spec!r}")
        if option in given:
            first = given[option]
            raise ValueError(
                f"option {key!r} given twice in {spec!r}"
                if first == key
                else f"options {first!r} and {key!r} both set {option} in {spec!r}: give one"
            )
        given[option] = key
        if kind is bool:
            if value.lower() not in _TRUE + _FALSE:
                raise ValueError(f"bad value {value!r} for {key!r} in {spec!r}: use 1 or 0")
            options[option] = value.lower() in _TRUE
        elif kind is int:
            try:
                options[option] = int(value)
            except ValueError:
                raise ValueError(f"bad value {value!r} for {key!r} in {spec!r}: expected an integer") from None
        else:
            options[option] = value
    fmt = fmt or "XRGB8888"
    try:
        _check_options(width, height, FORMATS[fmt], options, lambda option: given.get(option, option))
    except ValueError as e:
        raise ValueError(f"{e} in {spec!r}") from None
    return width, height, fmt, options


def _check_options(
    width: Any, height: Any, fmt: PixelFormat, options: Mapping[str, Any], label: Callable[[str], str]
) -> None:
    """Refuse option values no driver would have, naming the option as the caller gave it."""

    def positive(name: str, value: Any, limit: int) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 < value <= limit:
            raise ValueError(f"{label(name)} must be an integer from 1 to {limit}, not {value!r}")
        return int(value)

    width = positive("width", width, MAX_SIDE)
    height = positive("height", height, MAX_SIDE)
    vw, vh = options.get("virtual_width"), options.get("virtual_height")
    if vw is not None and positive("virtual_width", vw, MAX_SIDE) < width:
        raise ValueError(f"{label('virtual_width')}={vw} is below the visible width {width}")
    if vh is not None and positive("virtual_height", vh, MAX_SIDE) < height:
        raise ValueError(f"{label('virtual_height')}={vh} is below the visible height {height}")
    if options.get("stride_align") is not None:
        positive("stride_align", options["stride_align"], MAX_SIDE)
    line = options.get("line_length")
    if line is not None:
        row = fmt.row_bytes(int(vw or width))
        if positive("line_length", line, MAX_MEMORY) < row:
            raise ValueError(
                f"{label('line_length')}={line} is smaller than one row of {vw or width} {fmt.name} "
                f"pixels ({row} bytes)"
            )
    if options.get("memory") is not None:
        positive("memory", options["memory"], MAX_MEMORY)
    if options.get("modes", "allow") not in MODE_POLICIES:
        raise ValueError(f"{label('modes')} must be one of {', '.join(MODE_POLICIES)}, not {options['modes']!r}")
    file = options.get("file")
    if file is not None and (not isinstance(file, (str, os.PathLike)) or not os.fspath(file)):
        raise ValueError(f"{label('file')} must be a path, not {file!r}")


class _Corrupt(Exception):
    """A state file that does not describe a device; the message says what is wrong."""


def _parse_state(data: bytes) -> dict[str, Any]:
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
    state: dict[str, Any] = {"device": None, "memory": None}
    device = doc["device"]
    if "version" not in doc and isinstance(device, list) and len(device) == 4:
        state["memory"] = _int(device[3], "device memory", 1, MAX_MEMORY)  # fbgfx 0.1's [w, h, format, memory]
    elif doc.get("version") == _STATE_VERSION and isinstance(device, dict):
        state["device"] = _device_of(device)
    else:
        raise _Corrupt(f"it is not a state fbgfx knows (version {_show(doc.get('version'))})")
    state["var"] = _var_of(doc["var"])
    name = doc["format"]
    if not isinstance(name, str) or name not in FORMATS:
        raise _Corrupt(f"format is {_show(name)}, not a known pixel format")
    state["format"] = FORMATS[name]
    state["visual"] = _int(doc["visual"], "visual", 0, 255)
    state["cmap"] = _cmap_of(doc["cmap"])
    return state


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


def _device_of(d: dict[str, Any]) -> dict[str, Any]:
    keys = ("memory", "stride_align", "line_length", "can_pan", "modes", "can_vsync", "can_blank", "id", "mode_list")
    if set(d) != set(keys):
        raise _Corrupt(f"device has the fields {sorted(d)}, expected {sorted(keys)}")
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
    return {
        "memory": _int(d["memory"], "device memory", 1, MAX_MEMORY),
        "stride_align": _int(d["stride_align"], "device stride_align", 1, MAX_SIDE),
        "line_length": None if line is None else _int(line, "device line_length", 1, MAX_MEMORY),
        "can_pan": d["can_pan"],
        "modes": d["modes"],
        "can_vsync": d["can_vsync"],
        "can_blank": d["can_blank"],
        "id": d["id"],
        "mode_list": modes,
    }


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


def _var_for(
    xres: int, yres: int, vx: int, vy: int, fmt: PixelFormat, base: VarScreenInfo | None = None
) -> VarScreenInfo:
    base = base or VarScreenInfo()
    direct = not (fmt.indexed or fmt.gray)
    if direct:
        fields = dict(red=fmt.red, green=fmt.green, blue=fmt.blue, transp=fmt.transp)
    else:
        channel = Bitfield(0, fmt.bpp)
        fields = dict(red=channel, green=channel, blue=channel, transp=Bitfield())
    return base.replace(
        xres=xres,
        yres=yres,
        xres_virtual=vx,
        yres_virtual=vy,
        xoffset=min(base.xoffset, vx - xres),
        yoffset=min(base.yoffset, vy - yres),
        bits_per_pixel=fmt.bpp,
        grayscale=int(fmt.gray),
        activate=0,
        **fields,
    )


def _visual_of(fmt: PixelFormat) -> int:
    if fmt.indexed:
        return FB_VISUAL_PSEUDOCOLOR
    if fmt.gray and fmt.bpp == 1:
        return FB_VISUAL_MONO10
    return FB_VISUAL_TRUECOLOR


def _geometry(var: VarScreenInfo) -> tuple[Any, ...]:
    return (
        var.xres,
        var.yres,
        var.xres_virtual,
        var.yres_virtual,
        var.bits_per_pixel,
        var.red,
        var.green,
        var.blue,
        var.transp,
    )
