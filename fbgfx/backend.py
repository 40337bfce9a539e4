"""The display backend protocol: what a :class:`fbgfx.Framebuffer` drives.

A backend is one module implementing :class:`Backend`: the kernel's ``/dev/fbN``
(:class:`fbgfx._fbdev.KernelDevice`), the in-process model of one
(:class:`fbgfx.virtual.VirtualDevice`) and DRM/KMS dumb buffers. The operations are
those of fbdev, because that is the model every backend can answer: a backend
without a notion (a colour map, panning) raises ``OSError`` with ``ENOTTY`` or
``EINVAL``, as a kernel driver does, and :class:`Framebuffer` reports the capability
as missing. ``Framebuffer`` never asks which backend it has.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ._ffi import detach
from .display_events import DisplayEvents
from .errors import FramebufferError
from .modes import Mode
from .screeninfo import FixScreenInfo, VarScreenInfo

__all__ = ["Backend", "FbdevBackend", "fbdev_only"]


class Backend(Protocol):
    """One open display device.

    Attributes:
        path: The device as the user named it, for messages.
        mode_list: Mode strings the device lists itself (``"800x600-16"``) or
            :class:`fbgfx.modes.Mode` objects (a DRM connector's modes, with refresh
            rates), or None to look them up in sysfs and ``/etc/fb.modes``.
        shared: True when other processes may open and change the same device (every
            kernel device, a file-backed virtual one): state must be re-read, not
            cached, and restore must touch only what this process changed.
        fbdev: True when var, fix and the colour map are the device's own (``/dev/fbN``
            and its virtual model); False where the backend derives them from another
            model (DRM/KMS), so :class:`Framebuffer` does not hand them out as fbdev's.
        display_events: Where a display whose monitor can come and go (DRM/KMS) posts
            its changes; None where it cannot.
    """

    path: str
    shared: bool
    fbdev: bool
    display_events: DisplayEvents | None

    @property
    def mode_list(self) -> Sequence[str | Mode] | None:
        """See the class's attributes (read-only here, so that each backend may hold
        a list of its own element type)."""
        ...

    def get_var(self) -> VarScreenInfo:
        """The current mode (``FBIOGET_VSCREENINFO``).

        Raises:
            FramebufferError: The driver refused the request; the display is closed
                (``EBADF``, DRM/KMS); a framebuffer file was replaced by another
                device (``ESTALE``).
        """
        ...

    def put_var(self, var: VarScreenInfo) -> VarScreenInfo:
        """Ask for a mode (``FBIOPUT_VSCREENINFO``; ``activate`` may say test only);
        returns what the device wrote back.

        Raises:
            ModeError: The driver refused the mode (DRM/KMS: not a mode of the
                connectors, or no pixel format it scans out at that depth).
            FramebufferError: The driver refused it (``/dev/fbN``, the virtual
                device: ``EINVAL``); the device is open read-only (``EPERM``) or closed
                (``EBADF``).
        """
        ...

    def get_fix(self) -> FixScreenInfo:
        """The fixed information for the current mode (``FBIOGET_FSCREENINFO``).

        Raises:
            FramebufferError: As :meth:`get_var`.
        """
        ...

    def pan(self, var: VarScreenInfo) -> None:
        """Show the page at ``var.xoffset``/``var.yoffset`` (``FBIOPAN_DISPLAY``).

        Raises:
            FramebufferError: An offset that is not a page's, or a device that cannot
                pan (``EINVAL``); open read-only (``EPERM``) or closed (``EBADF``); a
                page flip refused by the kernel, or the last one's event not come
                (``ETIMEDOUT``, DRM/KMS).
        """
        ...

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        """Colour map entries as (length, 4) uint16: red, green, blue, transp.

        Raises:
            FramebufferError: Entries outside the colour map (``EINVAL``); no colour
                map at all (``ENOTTY``: DRM/KMS; a driver without one may answer
                ``EINVAL``).
        """
        ...

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        """Write (n, 4) uint16 colour map entries from ``start``.

        Raises:
            FramebufferError: As :meth:`get_cmap`; the device is open read-only
                (``EPERM``).
        """
        ...

    def blank(self, level: int) -> bool:
        """Blank at ``FB_BLANK_*`` level; False when the driver left it undone.

        Raises:
            FramebufferError: The driver cannot blank (``EINVAL``), the device is open
                read-only (``EPERM``) or closed (``EBADF``), or the kernel refused to
                turn a CRTC off (DRM/KMS).
        """
        ...

    def wait_for_vsync(self) -> None:
        """Wait for the next vertical blank.

        Raises:
            FramebufferError: The driver cannot wait for one (``ENOTTY``), or the
                wait failed (DRM/KMS: a page flip whose event did not come,
                ``ETIMEDOUT``).
        """
        ...

    def map(self, length: int) -> Any:
        """Map ``length`` bytes of video memory: an object with the buffer protocol
        (and ``close()`` when it must be released).

        Raises:
            FramebufferError: More than the device's memory (``EINVAL``), a device
                that is closed (``EBADF``), or the kernel's refusal to map it.
        """
        ...

    def check(self) -> None:
        """Raise :class:`fbgfx.errors.FramebufferError` when the device is gone (a
        framebuffer file another program truncated); called where a frame starts.

        Raises:
            FramebufferError: The device is gone (``ENODEV``).
        """
        ...

    def unmap(self, memory: Any) -> None:
        """Let go of what :meth:`map` returned, on close: views of it still held
        become private memory that no longer reaches the device."""
        ...

    def wait_flip(self) -> bool:
        """Wait until a queued page flip is on screen; False when none was in flight
        (always, on a backend whose pan takes effect by itself).

        Raises:
            FramebufferError: The flip's event did not come in time while every
                monitor is still connected (``ETIMEDOUT``, DRM/KMS).
        """
        ...

    def dirty(self, rects: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        """Tell a display that scans out a copy which rectangles (left, top, right,
        bottom; right and bottom exclusive; None: all) changed. Nothing to do where the
        display scans the mapped memory itself.

        Raises:
            FramebufferError: The display is closed (``EBADF``), or the kernel refused
                the rectangles for another reason than not needing them (DRM/KMS).
        """
        ...

    def drm_info(self) -> Any | None:
        """A DRM/KMS backend's card, connector, CRTC, plane and mode
        (:class:`fbgfx.drm.DrmInfo`); None on other backends.

        Raises:
            FramebufferError: The display is closed (``EBADF``, DRM/KMS).
        """
        ...

    def plane_pool(self) -> Any | None:
        """The display planes layers may use (:class:`fbgfx.drm.planes.PlanePool`) on a
        DRM/KMS display; None on other backends."""
        ...

    def follow(self) -> bool:
        """Take on a size the display changed to by itself (a monitor plugged back in
        at another size); True when it changed. :meth:`Framebuffer.refresh` calls it."""
        ...

    def close(self) -> None:
        """Release the device; safe to call twice."""
        ...


class FbdevBackend:
    """What an fbdev-model backend (``/dev/fbN``, the virtual device) answers for the
    operations only a DRM/KMS backend has: no flips in flight, nothing to tell about
    changed rectangles (the display scans the mapped memory), no DRM state, no
    monitor that comes and goes."""

    fbdev = True
    display_events: DisplayEvents | None = None

    def follow(self) -> bool:
        return False

    def check(self) -> None:
        return None

    def unmap(self, memory: Any) -> None:
        """Unmap ``memory`` (an ``mmap``); where views of it are still held, put private
        memory in their place instead, so that writing to them reaches nothing."""
        try:
            memory.close()
        except BufferError:
            detach(memory)  # the mmap unmaps the private memory when the views go

    def wait_flip(self) -> bool:
        return False

    def dirty(self, rects: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        del rects  # the display scans the mapped memory: nothing to tell

    def drm_info(self) -> Any | None:
        return None

    def plane_pool(self) -> Any | None:
        return None


def fbdev_only(what: str, path: str, instead: str = "") -> FramebufferError:
    """The error for asking a backend that is not fbdev's (DRM/KMS) for ``what`` only
    fbdev has (``ENOTTY``, as a driver without the ioctl answers); ``instead`` says
    what to use."""
    hint = f"; use {instead}" if instead else ""
    return FramebufferError(errno.ENOTTY, f"{what} is fbdev-only: a drm: display has none{hint}", path)
