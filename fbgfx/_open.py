"""fbgfx.open(): the one place that knows every backend and picks one for a device name.

It sits above :mod:`fbgfx.device` and the backends (``/dev/fbN``, the virtual device,
DRM/KMS), so that none of them imports another to open it.
"""

from __future__ import annotations

import errno

from ._kernel import KernelDevice
from .device import Framebuffer, PathLike, resolve
from .drm import DrmDevice, is_drm_spec
from .errors import FramebufferError
from .virtual import VirtualFramebuffer

__all__ = ["open"]


def open(path: PathLike | None = None, *, readonly: bool = False) -> Framebuffer:  # noqa: A001 - mirrors builtins.open
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
    """
    path = resolve(path)
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
