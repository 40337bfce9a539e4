"""fbgfx.open(): the one place that knows every backend and picks one for a device name.

It sits above :mod:`fbgfx.device` and the backends (``/dev/fbN``, the virtual device,
DRM/KMS), so that none of them imports another to open it: :func:`resolve` (which
looks for a DRM card when there is no ``/dev/fb0``) and :class:`VirtualFramebuffer`
(a :class:`Framebuffer` over the virtual backend) live here too.
"""

from __future__ import annotations

import errno
import os
from typing import Any, Union

from ._fbdev import KernelDevice
from .device import Framebuffer
from .drm import DrmDevice, find_display, is_drm_spec
from .errors import FramebufferError
from .virtual import VirtualDevice, VirtualOptions, parse_spec

__all__ = ["PathLike", "VirtualFramebuffer", "open", "resolve"]

PathLike = Union[str, int, "os.PathLike[str]"]


def open(path: PathLike | None = None, *, readonly: bool = False) -> Framebuffer:  # mirrors builtins.open
    """Open a framebuffer.

    Args:
        path: ``/dev/fbN``, ``N``, a path-like object, ``virtual:WIDTHxHEIGHT[:FORMAT]``
            for a virtual framebuffer (see :func:`fbgfx.virtual.parse_spec`), or
            ``drm:[CARD][:connector=NAME][:mode=WxH[@HZ]][:format=NAME]`` for a display
            driven through DRM/KMS (see :mod:`fbgfx.drm`). Defaults to
            ``$FRAMEBUFFER``, else ``/dev/fb0``, else the first DRM card with a
            connected display (``drm:``) at its preferred mode.
        readonly: Only look (``fbgfx info``, ``fbgfx grab``): create and change nothing.
            A ``file=`` virtual device must exist already and is opened read-only;
            :attr:`Framebuffer.memory` and :attr:`Framebuffer.pixels` are read-only
            arrays, and pan, mode, palette and blank changes raise ``EPERM``. A
            ``drm:`` display cannot be looked at this way (opening it takes it over):
            :func:`fbgfx.drm.read_scanout` reads what it shows.

    Returns:
        An open :class:`Framebuffer`; use it as a context manager.

    Raises:
        FramebufferError: The device is missing, not permitted or not a framebuffer.
        UnsupportedFormatError: The current pixel layout cannot be drawn in.

    Example:
        >>> with fbgfx.open("virtual:320x240:RGB565") as fb:
        ...     print(fb.width, fb.height, fb.format)
        320 240 RGB565
    """
    path = resolve(path)
    if "\x00" in path or (is_drm_spec(path) and not path.isprintable()):
        # said with escapes: a raw NUL or control character would reach the user's terminal
        raise ValueError(f"device {path!r}: a device name cannot hold NUL or control characters")
    if path.startswith("virtual:") or path == "virtual":
        return VirtualFramebuffer.from_spec(path, readonly=readonly)
    if is_drm_spec(path):
        if readonly:
            raise FramebufferError(
                errno.EINVAL,
                "a drm: display cannot be opened read-only (opening it takes the display over); "
                "fbgfx.drm.read_scanout() reads what it shows",
                path,
            )
        return Framebuffer(DrmDevice.open(path), path)
    return Framebuffer(KernelDevice(path), path, readonly=readonly)


def resolve(path: PathLike | None = None) -> str:
    """The device :func:`open` opens for ``path``: ``N`` and ``"N"`` become
    ``/dev/fbN``; None becomes ``$FRAMEBUFFER``, else ``/dev/fb0``, else
    ``drm:/dev/dri/cardN`` for the first DRM card with a connected display (kernels
    without ``CONFIG_FB_DEVICE`` have no ``/dev/fb*``), else ``/dev/fb0``."""
    if path is None:
        path = os.environ.get("FRAMEBUFFER") or "/dev/fb0"
        if path == "/dev/fb0" and not os.path.exists(path):
            card = find_display()
            if card is not None:
                path = f"drm:{card}"
    if isinstance(path, int):
        path = f"/dev/fb{path}"
    path = os.fspath(path)
    if path.isdigit():
        path = f"/dev/fb{path}"
    return path


class VirtualFramebuffer(Framebuffer):
    """A :class:`Framebuffer` over a :class:`~fbgfx.virtual.VirtualDevice`: same
    interface, no kernel.

    Args:
        width, height, format: The visible size and pixel format.
        readonly: Create and change nothing (see :class:`~fbgfx.virtual.VirtualDevice`).
        options: How the device behaves (:class:`~fbgfx.virtual.VirtualOptions`).
        **fields: :class:`~fbgfx.virtual.VirtualOptions` fields, instead of or over ``options``.

    Example:
        >>> fb = fbgfx.VirtualFramebuffer(800, 480, "RGB565")
        >>> fb.pixels.shape
        (480, 800)
    """

    def __init__(
        self,
        width: int = 800,
        height: int = 480,
        format: Any = "XRGB8888",
        *,
        readonly: bool = False,
        options: VirtualOptions | None = None,
        **fields: Any,
    ) -> None:
        device = VirtualDevice(width, height, format, options, readonly=readonly, **fields)
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
        """Open ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]`` (see
        :func:`fbgfx.virtual.parse_spec`).

        With ``readonly`` nothing is created or changed (see :class:`~fbgfx.virtual.VirtualDevice`).
        """
        width, height, fmt, options = parse_spec(spec)
        return cls(width, height, fmt, readonly=readonly, options=options)
