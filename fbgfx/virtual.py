"""A virtual framebuffer: the kernel's fbdev behaviour in-process, for headless use and tests.

:class:`VirtualDevice` answers the same operations as ``/dev/fbN`` and follows the
kernel's rules: ``line_length`` rounded like vfb (or to a chosen alignment), a fixed
amount of video memory that makes a too-large mode fail with ENOMEM, pan limits and
steps, a colour map for palette formats, and per-instance capabilities so a test can
play a DRM-emulated fb that refuses mode changes or a legacy driver that allows them.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import time
from typing import Any, Optional

import numpy as np

from .device import Framebuffer
from .errors import FramebufferError
from .pixelformat import FORMATS, PixelFormat
from .screeninfo import (
    BITFIELD_NAMES,
    FB_ACTIVATE_TEST,
    FB_VISUAL_PSEUDOCOLOR,
    FB_VISUAL_TRUECOLOR,
    FB_VISUAL_MONO10,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
)

__all__ = ["VirtualDevice", "VirtualFramebuffer", "parse_spec"]

#: The layout a virtual device takes when a mode change asks for a new depth.
DEFAULT_FORMAT_FOR_BPP = {32: "XRGB8888", 24: "RGB888", 16: "RGB565", 8: "C8", 4: "R4", 2: "R2", 1: "R1"}

#: How a virtual device answers a mode change: apply it (legacy fbdev such as vfb),
#: refuse it with EINVAL (DRM fbdev emulation), or accept it into var without
#: showing it (what bochs DRM does for smaller modes).
MODE_POLICIES = ("allow", "refuse", "ignore")

# The kernel's 16 console colours, where vfb starts its colour map.
_CONSOLE_COLORS = [
    (0, 0, 0), (0, 0, 170), (0, 170, 0), (0, 170, 170), (170, 0, 0), (170, 0, 170), (170, 85, 0), (170, 170, 170),
    (85, 85, 85), (85, 85, 255), (85, 255, 85), (85, 255, 255), (255, 85, 85), (255, 85, 255), (255, 255, 85),
    (255, 255, 255),
]


class VirtualDevice:
    """An in-memory framebuffer driver.

    Args:
        width, height: Visible size.
        format: A :class:`PixelFormat` or its name.
        virtual_width, virtual_height: Virtual size (default: the visible size).
        memory: Bytes of video memory (default: room for two visible pages).
        stride_align: ``line_length`` is rounded up to this many bytes (4, as vfb).
        line_length: A fixed stride instead, e.g. to imitate a padded DRM buffer.
        can_pan: Whether panning works (``ypanstep`` 1, else 0).
        modes: ``"allow"``, ``"refuse"`` or ``"ignore"`` mode changes (see MODE_POLICIES).
        can_vsync: Whether ``FBIO_WAITFORVSYNC`` works (sleeps to the next 60 Hz tick).
        can_blank: Whether ``FBIOBLANK`` works.
        file: Back video memory with this file, so another process can view or grab it.
        id: The driver name in ``fix.id``.
        mode_list: The modes :meth:`Framebuffer.modes` lists, as mode strings (a list,
            or one string separated by commas); default: the starting mode.
    """

    def __init__(
        self,
        width: int,
        height: int,
        format: Any = "XRGB8888",
        *,
        virtual_width: Optional[int] = None,
        virtual_height: Optional[int] = None,
        memory: Optional[int] = None,
        stride_align: int = 4,
        line_length: Optional[int] = None,
        can_pan: bool = True,
        modes: str = "allow",
        can_vsync: bool = False,
        can_blank: bool = False,
        file: Optional[str] = None,
        id: str = "fbgfx virtual",
        mode_list: Any = None,
    ) -> None:
        fmt = format if isinstance(format, PixelFormat) else PixelFormat.from_name(str(format))
        for name, value in (("width", width), ("height", height), ("stride_align", stride_align)):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if modes not in MODE_POLICIES:
            raise ValueError(f"modes must be one of {MODE_POLICIES}, not {modes!r}")
        self.path = file or "virtual"
        self.stride_align = stride_align
        self.fixed_line_length = line_length
        self.can_pan = can_pan
        self.modes = modes
        self.can_vsync = can_vsync
        self.can_blank = can_blank
        self.blanked = 0
        self.id = id
        if isinstance(mode_list, str):
            mode_list = [m for m in mode_list.split(",") if m]
        self.mode_list = list(mode_list) if mode_list else [f"{width}x{height}-{fmt.bpp}"]
        var = _var_for(width, height, virtual_width or width, virtual_height or height, fmt)
        self.format = fmt
        line = self._line_length(var)
        self.memory_size = memory if memory is not None else line * var.yres_virtual * 2
        if line * var.yres_virtual > self.memory_size:
            raise FramebufferError(errno.ENOMEM, f"{line * var.yres_virtual} bytes needed, {self.memory_size} available", self.path)
        self._var, self._fix = var, self._fix_for(var)
        self._file = file
        self.shared = file is not None
        self._buffer = self._allocate(file)
        self.cmap = np.zeros((256, 4), np.uint16)
        self.cmap[: len(_CONSOLE_COLORS), :3] = np.array(_CONSOLE_COLORS, np.uint16) * 257
        self.pan_count = 0
        self._identity = [width, height, fmt.name, self.memory_size]
        if file is not None:
            self._adopt_state()

    # -- the operations Framebuffer drives ---------------------------------------------------

    def get_var(self) -> VarScreenInfo:
        return self._var

    def get_fix(self) -> FixScreenInfo:
        return self._fix

    def put_var(self, var: VarScreenInfo) -> VarScreenInfo:
        cur = self._var
        checked, fmt = self._check_var(var)
        test = (var.activate & 0xF) == FB_ACTIVATE_TEST
        changes_mode = _geometry(checked) != _geometry(cur)
        if changes_mode and self.modes == "refuse":
            raise self._error(errno.EINVAL, "setting the mode (FBIOPUT_VSCREENINFO)")
        if changes_mode and self.modes == "ignore":
            # Accepted into var, but the buffer and what is shown stay as they were.
            checked = checked.replace(xres_virtual=cur.xres_virtual, yres_virtual=cur.yres_virtual,
                                      bits_per_pixel=cur.bits_per_pixel, red=cur.red, green=cur.green,
                                      blue=cur.blue, transp=cur.transp)
            if not test:
                self._var = checked
                self._save_state()
            return checked
        if not test:
            self._var, self.format = checked.replace(activate=0), fmt
            self._fix = self._fix_for(self._var)
            self._save_state()
        return checked

    def pan(self, var: VarScreenInfo) -> None:
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
        self._save_state()

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        if start < 0 or length < 0 or start + length > self._cmap_size():
            raise self._error(errno.EINVAL, "reading the colour map (FBIOGETCMAP)")
        return self.cmap[start : start + length].copy()

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        entries = np.asarray(entries, np.uint16)
        if start < 0 or start + len(entries) > self._cmap_size():
            raise self._error(errno.EINVAL, "writing the colour map (FBIOPUTCMAP)")
        self.cmap[start : start + len(entries)] = entries
        self._save_state()

    def blank(self, level: int) -> bool:
        if not self.can_blank:
            raise self._error(errno.EINVAL, "blanking (FBIOBLANK)")
        self.blanked = level
        return True

    def wait_for_vsync(self) -> None:
        if not self.can_vsync:
            raise self._error(errno.ENOTTY, "waiting for vsync (FBIO_WAITFORVSYNC)")
        period = 1 / 60
        time.sleep(period - time.monotonic() % period)

    def map(self, length: int) -> Any:
        if length > self.memory_size:
            raise self._error(errno.EINVAL, f"mapping {length} bytes of video memory")
        return self._buffer

    def close(self) -> None:
        """Video memory stays with the device, as a kernel driver's does across opens."""

    # -- state shared through the file ----------------------------------------------------------

    @property
    def state_path(self) -> Optional[str]:
        """Where a file-backed device keeps its mode, pan offset and colour map (beside
        the memory file), so every process opening the same device sees the same state,
        as with a kernel driver. None without a file."""
        return None if self._file is None else self._file + ".state.json"

    def _adopt_state(self) -> None:
        """Take over the state of the same device opened before (same size, format and memory)."""
        try:
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
            if state["device"] != self._identity:
                raise ValueError("another device")
            fields = {k: Bitfield(**v) if k in BITFIELD_NAMES else v for k, v in state["var"].items()}
            var = VarScreenInfo(**fields)
            name = state["format"]
            fmt = FORMATS[name] if name in FORMATS else PixelFormat.from_var(var, state["visual"])
            cmap = np.array(state["cmap"], np.uint16).reshape(self.cmap.shape)
        except (OSError, ValueError, KeyError, TypeError):
            self._save_state()  # a new device: its state starts here
            return
        self._var, self.format = var, fmt
        self._fix = self._fix_for(var)
        self.cmap[:] = cmap

    def _save_state(self) -> None:
        if self._file is None:
            return
        state = {"device": self._identity, "var": self._var.asdict(), "format": self.format.name,
                 "visual": self._fix.visual, "cmap": self.cmap.tolist()}
        tmp = f"{self.state_path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f)
        os.replace(tmp, self.state_path)

    # -- kernel rules ---------------------------------------------------------------------------

    def _check_var(self, var: VarScreenInfo):
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

    def _allocate(self, file: Optional[str]) -> Any:
        if file is None:
            return bytearray(self.memory_size)
        fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.ftruncate(fd, self.memory_size)
            return mmap.mmap(fd, self.memory_size, mmap.MAP_SHARED)
        finally:
            os.close(fd)

    def _error(self, err: int, doing: str) -> FramebufferError:
        return FramebufferError.from_errno(err, doing, self.path)


class VirtualFramebuffer(Framebuffer):
    """A :class:`Framebuffer` over a :class:`VirtualDevice`: same interface, no kernel.

    Example:
        >>> fb = VirtualFramebuffer(800, 480, "RGB565")
        >>> fb.pixels.shape
        (480, 800)
    """

    def __init__(self, width: int = 800, height: int = 480, format: Any = "XRGB8888", **options: Any) -> None:
        device = VirtualDevice(width, height, format, **options)
        super().__init__(device, f"virtual:{width}x{height}:{device.format.name}")

    @property
    def device(self) -> VirtualDevice:
        """The simulated driver, for inspecting what fbgfx asked of it."""
        return self._device

    @classmethod
    def from_spec(cls, spec: str) -> "VirtualFramebuffer":
        """Open ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]`` (see :func:`parse_spec`)."""
        width, height, fmt, options = parse_spec(spec)
        return cls(width, height, fmt, **options)


_OPTION_TYPES = {
    "virtual_width": int, "virtual_height": int, "memory": int, "stride_align": int, "line_length": int,
    "can_pan": bool, "can_vsync": bool, "can_blank": bool, "modes": str, "file": str, "id": str, "mode_list": str,
}
_OPTION_ALIASES = {"vw": "virtual_width", "vh": "virtual_height", "stride": "line_length", "align": "stride_align",
                   "pan": "can_pan", "vsync": "can_vsync", "blank": "can_blank",
                   "modelist": "mode_list"}


def parse_spec(spec: str):
    """Parse ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]``.

    Keys are :class:`VirtualDevice` options (``pan=0``, ``modes=refuse``,
    ``vh=960``, ``stride=1664``, ``memory=4194304``, ``file=/tmp/fb.raw`` ...).

    Returns:
        (width, height, format name, options dict).

    Raises:
        ValueError: The spec cannot be parsed.
    """
    parts = spec.split(":")
    if parts[0] != "virtual":
        raise ValueError(f"not a virtual framebuffer spec: {spec!r}")
    size = parts[1] if len(parts) > 1 and parts[1] else "800x480"
    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise ValueError(f"bad size {size!r} in {spec!r}: expected WIDTHxHEIGHT, e.g. virtual:800x480:RGB565") from None
    fmt, options = "XRGB8888", {}
    for part in parts[2:]:
        if "=" not in part:
            fmt = PixelFormat.from_name(part).name
            continue
        key, value = part.split("=", 1)
        key = _OPTION_ALIASES.get(key, key)
        kind = _OPTION_TYPES.get(key)
        if kind is None:
            raise ValueError(f"unknown virtual framebuffer option {key!r} in {spec!r}")
        try:
            options[key] = value.lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)
        except ValueError:
            raise ValueError(f"bad value {value!r} for {key!r} in {spec!r}") from None
    return width, height, fmt, options


def _var_for(xres: int, yres: int, vx: int, vy: int, fmt: PixelFormat, base: Optional[VarScreenInfo] = None) -> VarScreenInfo:
    base = base or VarScreenInfo()
    direct = not (fmt.indexed or fmt.gray)
    if direct:
        fields = dict(red=fmt.red, green=fmt.green, blue=fmt.blue, transp=fmt.transp)
    else:
        channel = Bitfield(0, fmt.bpp)
        fields = dict(red=channel, green=channel, blue=channel, transp=Bitfield())
    return base.replace(
        xres=xres, yres=yres, xres_virtual=vx, yres_virtual=vy,
        xoffset=min(base.xoffset, vx - xres), yoffset=min(base.yoffset, vy - yres),
        bits_per_pixel=fmt.bpp, grayscale=int(fmt.gray), activate=0, **fields,
    )


def _visual_of(fmt: PixelFormat) -> int:
    if fmt.indexed:
        return FB_VISUAL_PSEUDOCOLOR
    if fmt.gray and fmt.bpp == 1:
        return FB_VISUAL_MONO10
    return FB_VISUAL_TRUECOLOR


def _geometry(var: VarScreenInfo):
    return (var.xres, var.yres, var.xres_virtual, var.yres_virtual, var.bits_per_pixel,
            var.red, var.green, var.blue, var.transp)
