"""The fbdev backend: /dev/fbN through ioctl and mmap.

C is reached through :mod:`fbgfx._ffi`; no cdata leaves this module. Every method
raises :class:`~fbgfx.errors.FramebufferError` with the
kernel's errno and the device path.
"""

from __future__ import annotations

import errno
import glob
import mmap
import os
import stat
from typing import Any

import numpy as np

from ._ffi import check, ffi, lib
from .backend import FbdevBackend
from .errors import FramebufferError
from .screeninfo import BITFIELD_NAMES, FIX_FIELDS, VAR_FIELDS, Bitfield, FixScreenInfo, VarScreenInfo

FB_MAJOR = 29


class KernelDevice(FbdevBackend):
    """An open ``/dev/fbN``: the device operations a :class:`Framebuffer` drives."""

    #: Modes come from sysfs and ``/etc/fb.modes`` (see :func:`fbgfx.modes.list_modes`).
    mode_list: list[str] | None = None
    #: Other processes can open and change the same device.
    shared = True
    #: The structs of the last vars panned to (vars are immutable: the struct of one stays right).
    _pan_structs: list[tuple[VarScreenInfo, Any]] = []

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            raise _open_error(e, path) from None
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISCHR(st.st_mode) or os.major(st.st_rdev) != FB_MAJOR:
                raise FramebufferError(
                    errno.ENOTTY, "not a framebuffer device (expected a /dev/fbN character device)", path
                )
        except BaseException:
            os.close(self.fd)
            raise

    # -- screen info ------------------------------------------------------------------

    def get_var(self) -> VarScreenInfo:
        var = ffi.new("struct fb_var_screeninfo *")
        self._check(lib.fbgfx_get_var(self.fd, var), "reading the mode (FBIOGET_VSCREENINFO)")
        return _var_from_c(var)

    def put_var(self, var: VarScreenInfo) -> VarScreenInfo:
        """Ask for ``var``; returns what the kernel wrote back (it may round values)."""
        c = self._var_to_c(var)
        self._check(lib.fbgfx_put_var(self.fd, c), "setting the mode (FBIOPUT_VSCREENINFO)")
        return _var_from_c(c)

    def get_fix(self) -> FixScreenInfo:
        fix = ffi.new("struct fb_fix_screeninfo *")
        self._check(lib.fbgfx_get_fix(self.fd, fix), "reading fixed info (FBIOGET_FSCREENINFO)")
        values = {name: getattr(fix, name) for name in FIX_FIELDS if name != "id"}
        return FixScreenInfo(id=ffi.string(fix.id).decode("latin-1"), **values)

    # -- operations ---------------------------------------------------------------------

    def pan(self, var: VarScreenInfo) -> None:
        # Framebuffer.pan passes the same var objects again (one per page): each is
        # converted to a struct once, and a fresh copy of it goes to the kernel
        # (FBIOPAN_DISPLAY writes its var back)
        c = next((c for known, c in self._pan_structs if known is var), None)
        if c is None:
            c = self._var_to_c(var)
            self._pan_structs = [*self._pan_structs[-3:], (var, c)]
        self._check(lib.fbgfx_pan(self.fd, ffi.new("struct fb_var_screeninfo *", c[0])), "panning (FBIOPAN_DISPLAY)")

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        """Colour map entries as (length, 4) uint16: red, green, blue, transp."""
        table = np.zeros((4, length), np.uint16)
        cmap = ffi.new("struct fb_cmap *")
        cmap.start, cmap.len = start, length
        ptrs = [ffi.cast("uint16_t *", ffi.from_buffer(row)) for row in table]
        cmap.red, cmap.green, cmap.blue, cmap.transp = ptrs
        self._check(lib.fbgfx_get_cmap(self.fd, cmap), "reading the colour map (FBIOGETCMAP)")
        entries: np.ndarray = table.T.copy()
        return entries

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        """Write (n, 4) uint16 colour map entries from ``start``."""
        table = np.ascontiguousarray(np.asarray(entries, np.uint16).T)
        cmap = ffi.new("struct fb_cmap *")
        cmap.start, cmap.len = start, table.shape[1]
        ptrs = [ffi.cast("uint16_t *", ffi.from_buffer(row)) for row in table]
        cmap.red, cmap.green, cmap.blue, cmap.transp = ptrs
        self._check(lib.fbgfx_put_cmap(self.fd, cmap), "writing the colour map (FBIOPUTCMAP)")

    def blank(self, level: int) -> bool:
        """Returns False when the driver left the blank undone (it answered > 0)."""
        rc = lib.fbgfx_blank(self.fd, level)
        self._check(rc, "blanking (FBIOBLANK)")
        return bool(rc == 0)

    def wait_for_vsync(self) -> None:
        self._check(lib.fbgfx_wait_for_vsync(self.fd), "waiting for vsync (FBIO_WAITFORVSYNC)")

    def map(self, length: int) -> mmap.mmap:
        """Map ``length`` bytes of video memory; returns an object with the buffer protocol."""
        try:
            return mmap.mmap(self.fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as e:
            raise FramebufferError.from_errno(
                e.errno or errno.EIO, f"mapping {length} bytes of video memory", self.path
            ) from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # -- helpers --------------------------------------------------------------------------

    def _check(self, rc: int, doing: str) -> int:
        return check(rc, doing, self.path)

    def _var_to_c(self, var: VarScreenInfo) -> Any:
        c = ffi.new("struct fb_var_screeninfo *")
        for name in VAR_FIELDS:
            value = getattr(var, name)
            if name in BITFIELD_NAMES:
                bf = getattr(c, name)
                bf.offset, bf.length, bf.msb_right = value.offset, value.length, value.msb_right
            else:
                setattr(c, name, value)
        return c


def _var_from_c(c: Any) -> VarScreenInfo:
    values: dict[str, Any] = {}
    for name in VAR_FIELDS:
        value = getattr(c, name)
        if name in BITFIELD_NAMES:
            value = Bitfield(value.offset, value.length, value.msb_right)
        values[name] = value
    return VarScreenInfo(**values)


def _open_error(e: OSError, path: str) -> FramebufferError:
    if e.errno == errno.ENOENT:
        found = sorted(glob.glob("/dev/fb[0-9]*"))
        have = ", ".join(found) if found else "none (no framebuffer driver loaded; try `virtual:800x480`)"
        return FramebufferError(errno.ENOENT, f"no such framebuffer device; available: {have}", path)
    if e.errno in (errno.EACCES, errno.EPERM):
        return FramebufferError(
            e.errno,
            "permission denied: add your user to the 'video' group (sudo usermod -aG video $USER) and log in again",
            path,
        )
    return FramebufferError(e.errno or errno.EIO, f"cannot open: {e.strerror}", path)
