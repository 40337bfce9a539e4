"""A virtual framebuffer: the kernel's fbdev behaviour in-process, for headless use and tests.

:class:`VirtualDevice` answers the same operations as ``/dev/fbN`` and follows the
kernel's rules: ``line_length`` rounded like vfb (or to a chosen alignment), a fixed
amount of video memory that makes a too-large mode fail with ENOMEM, pan limits and
steps, a colour map for palette formats, and per-instance capabilities so a test can
play a DRM-emulated fb that refuses mode changes or a legacy driver that allows them.

Its options are a :class:`VirtualOptions` (a ``virtual:`` spec names them, see
:func:`parse_spec`). With ``file=PATH`` the video memory is a *framebuffer file*
(:mod:`fbgfx.virtual._file`) that other processes can open as the same device.
:class:`fbgfx.VirtualFramebuffer` is a :class:`fbgfx.Framebuffer` over one.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._ffi import detach
from ..backend import FbdevBackend
from ..errors import FramebufferError, UnsupportedFormatError
from ..pixelformat import FORMATS, PixelFormat
from ..screeninfo import (
    BITFIELD_NAMES,
    FB_ACTIVATE_TEST,
    FB_VISUAL_MONO10,
    FB_VISUAL_PSEUDOCOLOR,
    FB_VISUAL_TRUECOLOR,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
    geometry,
)
from ._file import STATE_SUFFIX, DeviceState, FramebufferFile
from ._spec import MAX_MEMORY, MAX_SIDE, MODE_POLICIES, VirtualOptions, parse_spec

__all__ = [
    "MAX_MEMORY",
    "MAX_SIDE",
    "MODE_POLICIES",
    "STATE_SUFFIX",
    "VirtualDevice",
    "VirtualOptions",
    "parse_spec",
]

#: What a mode change under ``modes="ignore"`` leaves as it was: the buffer's size and layout.
_BUFFER_FIELDS = ("xres_virtual", "yres_virtual", "bits_per_pixel", *BITFIELD_NAMES)

#: The layout a virtual device takes when a mode change asks for a new depth.
DEFAULT_FORMAT_FOR_BPP = {32: "XRGB8888", 24: "RGB888", 16: "RGB565", 8: "C8", 4: "R4", 2: "R2", 1: "R1"}

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
        options: How the device behaves (:class:`VirtualOptions`: virtual size, video
            memory, stride, capabilities, a framebuffer ``file``...).
        readonly: Change nothing: never create ``file``, map memory read-only and
            refuse mode, pan and colour map changes with ``EPERM``.
        **fields: :class:`VirtualOptions` fields, instead of or over ``options``
            (``VirtualDevice(800, 480, can_pan=False)``).

    Attributes:
        options: The device's options, worked out (``memory`` and ``mode_list``
            filled in, no sizes or file): what its state file keeps, and what an
            opener of an existing framebuffer file takes from it.

    Raises:
        ValueError: An option out of range (the message names it).
        TypeError: A keyword that is not a :class:`VirtualOptions` field.
        FramebufferError: ``file`` cannot be created or is not a framebuffer file, its
            state file is corrupt (the message says how to reset it), or ``memory`` is
            too small for the mode (``ENOMEM``).
    """

    def __init__(
        self,
        width: int,
        height: int,
        format: Any = "XRGB8888",
        options: VirtualOptions | None = None,
        *,
        readonly: bool = False,
        **fields: Any,
    ) -> None:
        fmt = format if isinstance(format, PixelFormat) else PixelFormat.from_name(str(format))
        options = (options or VirtualOptions()).replace(**fields)
        options.check(width, height, fmt)
        file = options.file
        self._file = None if file is None else FramebufferFile(os.fspath(file), bool(readonly))
        self.path = "virtual" if self._file is None else self._file.path
        self.readonly = bool(readonly)
        self.shared = self._file is not None
        self.blanked = 0
        self.options = options.kept(width, height, fmt)
        var = _var_for(width, height, options.virtual_width or width, options.virtual_height or height, fmt)
        self.format = fmt
        line = self._line_length(var)
        needed = line * var.yres_virtual
        if needed > MAX_MEMORY:
            raise ValueError(
                f"a {var.xres_virtual}x{var.yres_virtual} {fmt.name} framebuffer needs {needed} bytes of "
                f"video memory; a virtual one has at most {MAX_MEMORY}"
            )
        memory = (
            int(options.memory) if options.memory is not None else (2 * needed if 2 * needed <= MAX_MEMORY else needed)
        )
        self.options = self.options.replace(memory=memory)
        if needed > self.memory_size:
            raise FramebufferError(errno.ENOMEM, f"{needed} bytes needed, {self.memory_size} available", self.path)
        self._var, self._fix = var, self._fix_for(var)
        self.cmap = np.zeros((256, 4), np.uint16)
        self.cmap[: len(_CONSOLE_COLORS), :3] = np.array(_CONSOLE_COLORS, np.uint16) * 257
        self.pan_count = 0
        self._lock = threading.RLock()
        self._closed = False
        self._mem: mmap.mmap
        if self._file is None:
            prot = mmap.PROT_READ if self.readonly else mmap.PROT_READ | mmap.PROT_WRITE
            # anonymous memory is zero pages until written: a large device costs nothing up front
            self._mem = mmap.mmap(-1, self.memory_size, prot=prot)
        else:
            created = None if self.readonly else self._file.create(self.memory_size, self._state())
            self._mem = created if created is not None else self._file.adopt(self._take)

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
        if self._file is None and not self.readonly:  # (what _changing does then, per frame)
            with self._lock:
                self._pan(var)
            return
        with self._changing("panning (FBIOPAN_DISPLAY)"):
            self._pan(var)

    def _pan(self, var: VarScreenInfo) -> None:
        cur = self._var
        fix = self._fix
        if not self.options.can_pan and (var.xoffset, var.yoffset) != (cur.xoffset, cur.yoffset):
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
        if not self.options.can_blank:
            raise self._error(errno.EINVAL, "blanking (FBIOBLANK)")
        if self.readonly:
            raise self._error(errno.EPERM, "blanking (FBIOBLANK): the device is open read-only")
        self.blanked = level
        return True

    def wait_for_vsync(self) -> None:
        if not self.options.can_vsync:
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

    def check(self) -> None:
        """A framebuffer file another program truncated is gone, as an unplugged device
        is: :class:`FramebufferError` (``ENODEV``) before a frame touches missing pages."""
        if self._file is not None and not self._closed:
            self._file.check_size(self.memory_size)

    def unmap(self, memory: Any) -> None:
        """Let go of a :meth:`map` view, on close: views of it still held stop reaching
        the device (in-memory video memory moves to fresh pages first, so that the
        device keeps its picture)."""
        memory.release()
        with self._lock:
            old = self._mem
            if self._file is not None:
                detach(old)  # the device closes next: nothing reaches the file any more
                return
            if self.readonly:  # never written: zero pages
                self._mem = mmap.mmap(-1, self.memory_size, prot=mmap.PROT_READ)
            elif _exported(old):
                self._mem = mmap.mmap(-1, self.memory_size)
                self._mem[:] = old
            else:
                return
            detach(old)

    def close(self) -> None:
        """Release a framebuffer file; in-memory video memory stays with the device, as a
        kernel driver's does across opens. Safe to call twice."""
        if self._file is None or self._closed:
            return
        self._closed = True
        self._file.close()
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
        return None if self._file is None else self._file.state_path

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
            with self._file.locked():
                self._sync()
                yield
                self._file.write_state(self._state())

    def _sync(self) -> None:
        """Re-read the state another process may have changed (a framebuffer file only)."""
        if self._file is None or self._closed:
            return
        state = self._file.read_state(opening=False)
        if state.device is not None and self.options != state.device:
            raise self._error(
                errno.ESTALE,
                f"the device was replaced by another one ({state.device.memory} bytes of video memory); open it again",
            )
        self._apply_state(state)

    def _take(self, state: DeviceState) -> int:
        """Take an existing device as its state file describes it; its memory size."""
        self._apply_options(state)
        self._apply_state(state)
        return self.memory_size

    def _apply_options(self, state: DeviceState) -> None:
        """Take the existing device's capabilities and size (from its state file)."""
        if state.device is None:  # written by fbgfx 0.1: only the memory size was kept
            self.options = self.options.replace(memory=state.memory)
        else:
            self.options = state.device

    def _apply_state(self, state: DeviceState) -> None:
        var, fmt = state.var, state.format
        problem = self._problem(var, fmt, state.visual)
        if problem:
            assert self._file is not None
            raise self._file.corrupt(problem)
        self._var, self.format = var, fmt
        self._fix = self._fix_for(var)
        self.cmap[:] = state.cmap

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

    @property
    def memory_size(self) -> int:
        """Bytes of video memory."""
        memory = self.options.memory
        assert memory is not None  # worked out when the device is made
        return memory

    @property
    def mode_list(self) -> list[str]:
        """The modes :meth:`fbgfx.Framebuffer.modes` lists, as mode strings."""
        return list(self.options.mode_list or [])

    def _state(self) -> DeviceState:
        return DeviceState(self.options, None, self._var, self.format, self._fix.visual, self.cmap)

    # -- kernel rules ---------------------------------------------------------------------------

    def _apply_var(self, var: VarScreenInfo, test: bool) -> VarScreenInfo:
        cur = self._var
        checked, fmt = self._check_var(var)
        changes_mode = geometry(checked) != geometry(cur)
        if changes_mode and self.options.modes == "refuse":
            raise self._error(errno.EINVAL, "setting the mode (FBIOPUT_VSCREENINFO)")
        if changes_mode and self.options.modes == "ignore":
            # Accepted into var, but the buffer and what is shown stay as they were.
            checked = checked.replace(**{name: getattr(cur, name) for name in _BUFFER_FIELDS})
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
        if self.options.line_length:
            return self.options.line_length
        row = (var.xres_virtual * var.bits_per_pixel + 7) // 8
        return -(-row // self.options.stride_align) * self.options.stride_align

    def _fix_for(self, var: VarScreenInfo) -> FixScreenInfo:
        return FixScreenInfo(
            id=self.options.id[:15],
            smem_len=self.memory_size,
            visual=_visual_of(self.format),
            xpanstep=1 if self.options.can_pan else 0,
            ypanstep=1 if self.options.can_pan else 0,
            line_length=self._line_length(var),
        )

    def _cmap_size(self) -> int:
        return 256

    def _error(self, err: int, doing: str) -> FramebufferError:
        return FramebufferError.from_errno(err, doing, self.path)


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


def _exported(memory: mmap.mmap) -> bool:
    """Whether views of a writable ``memory`` are still held (an mmap refuses to be
    resized then; resizing to its own size changes nothing otherwise)."""
    try:
        memory.resize(len(memory))
    except BufferError:
        return True
    return False


def _visual_of(fmt: PixelFormat) -> int:
    if fmt.indexed:
        return FB_VISUAL_PSEUDOCOLOR
    if fmt.gray and fmt.bpp == 1:
        return FB_VISUAL_MONO10
    return FB_VISUAL_TRUECOLOR
