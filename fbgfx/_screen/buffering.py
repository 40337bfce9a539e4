"""Buffering strategies: which page of video memory a frame goes to, and how it is shown.

A :class:`~fbgfx.Screen` composes each frame in RAM (or, in ``"single"`` buffering
where it can, on the visible page itself). When a frame is finished it calls
:meth:`Buffering.show` with the area that changed since the previous frame and a
``write`` function that puts any part of the frame into a page of video memory. The
strategy picks the page, asks ``write`` for what that page lacks, and makes it
visible. One class per buffering mode, chosen once by :func:`choose`:

- :class:`SingleBuffer` (``"single"``): one page, the visible one; drawing may go
  straight into it.
- :class:`CopyBuffer` (``"copy"``): one page, the visible one; each frame's changes
  are copied into it (after the vertical blank, where the driver can wait for one).
- :class:`FlipBuffer` (``"flip"``): two pages in the virtual screen; a frame goes
  into the hidden page, which is then panned to.
- On a ``drm:`` display: :class:`DrmFlipBuffer` (``"flip"``, a KMS page flip with
  its completion event), :class:`DrmCopyBuffer` (``"copy"``, then ``DIRTYFB`` with
  the changed rectangles) and :class:`DrmSingleBuffer` (``"single"``).

On fbdev, ``"auto"`` does not pan where the pan is known not to reach the monitor
(:data:`PAN_NOT_SHOWN`: DRM's fbdev emulation on bochs scans out from the start of
its buffer whatever the pan offset says, so every other frame would be stale); it
copies there, and ``"flip"`` is refused with that reason.

A new strategy (a DRM page flip, say) subclasses :class:`Buffering`, implements
:meth:`~Buffering.show` (and :meth:`~Buffering.close` if it changed the device), and
is added to :func:`choose`. Rules every strategy keeps:

- ``write(page, region)`` is told, per page, every pixel that page lacks: a page keeps
  its own pending :class:`~fbgfx._screen.region.Region` (what changed since it was last
  written) so only that is copied;
- video memory is only written, never read (reading it is very slow on real
  hardware), except once at :meth:`~Buffering.close`;
- pages are views shaped as :meth:`fbgfx.Framebuffer.view` returns them (the panel's
  size, the device's layout); regions are in the Screen's frame coordinates, and
  ``write`` maps them (rotation, packed pixels).
"""

from __future__ import annotations

import errno
import warnings
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from ..errors import FramebufferError
from .region import Region

if TYPE_CHECKING:
    from ..device import Framebuffer

__all__ = [
    "PAN_NOT_SHOWN",
    "Buffering",
    "CopyBuffer",
    "DrmCopyBuffer",
    "DrmFlipBuffer",
    "DrmSingleBuffer",
    "FlipBuffer",
    "SingleBuffer",
    "Writer",
    "choose",
]

#: fbdev ``fix.id`` values of drivers that accept ``FBIOPAN_DISPLAY`` but keep showing
#: the first page (seen under qemu on Linux 6.1: bochs' DRM fbdev emulation with
#: ``drm_kms_helper.drm_fbdev_overalloc=200``). Screen copies instead of panning there.
PAN_NOT_SHOWN = frozenset({"bochs-drmdrmfb"})

#: ``write(page, region)``: write ``region`` of the frame into ``page``.
Writer = Callable[[np.ndarray, Region], None]
#: ``to_panel(x0, y0, x1, y1)``: where a rectangle of the frame is on the panel.
ToPanel = Callable[[int, int, int, int], "tuple[int, int, int, int]"]


def _same_place(x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int]:
    return x0, y0, x1, y1


class _Page:
    """A page of video memory frames are written to, and what it lacks."""

    __slots__ = ("y", "pending")

    def __init__(self, y: int, width: int, height: int) -> None:
        self.y = y
        self.pending = Region(width, height)  # where it differs from the newest frame
        self.pending.add_all()  # its content is unknown at first


def _mark(pending: Region, changed: Region | None) -> None:
    """Add what a frame changed (None: everything) to what a page lacks."""
    if changed is None:
        pending.add_all()
    else:
        pending.merge(changed)


class Buffering(ABC):
    """How frames reach video memory and become visible (one subclass per mode).

    Args:
        fb: The framebuffer.
        width: Width of the frames (the Screen's logical size; the dirty regions).
        height: Height of the frames.
        vsync: Wait for the vertical blank before showing a frame, where the driver can.

    Attributes:
        to_panel: Where a rectangle of the frame lands on the panel, as
            ``to_panel(x0, y0, x1, y1)`` (the frame may be turned: ``Screen(rotate=)``);
            for strategies that tell the device which rectangles changed.
    """

    #: The mode's name, as :attr:`fbgfx.Screen.buffering` reports it.
    name: ClassVar[str]
    #: True when drawing may go straight into :meth:`visible` (no RAM back buffer).
    draws_in_place: ClassVar[bool] = False

    def __init__(self, fb: Framebuffer, width: int, height: int, vsync: bool) -> None:
        self.fb = fb
        self.width, self.height = width, height
        self._vsync = bool(vsync)
        # fbdev's mode and pan offset, put back on close (a drm: display has neither).
        self._original = fb.var if fb.drm is None else None
        self._views: dict[tuple[int, int, int, int], np.ndarray] = {}
        self.to_panel: ToPanel = _same_place

    @abstractmethod
    def show(self, changed: Region | None, write: Writer) -> None:
        """Put the next frame on screen.

        Args:
            changed: Where the frame differs from the frame shown before; None for
                everywhere. Not kept or changed.
            write: Called as ``write(page, region)`` (once, or not at all if nothing
                is missing) to write ``region`` of the frame into ``page``, a view of
                video memory shaped as :meth:`fbgfx.Framebuffer.view` returns it.
        """

    def visible(self) -> np.ndarray:
        """The page on screen now, shaped as :attr:`fbgfx.Framebuffer.pixels`."""
        var = self.fb.var
        return self._view(var.xoffset, var.yoffset)

    def flush(self) -> None:
        """Make drawing done straight into :meth:`visible` show (``"single"``): a
        no-op where the device shows its memory as it is written (fbdev)."""
        return None

    def wait_for_vsync(self) -> None:
        """Wait for the vertical blank if asked to and the driver can (once it cannot,
        never ask again)."""
        if self._vsync:
            self._vsync = self.fb.wait_for_vsync() or False

    def close(self) -> None:
        """Put back what the strategy changed on the device (the pan offset here),
        leaving the last frame on screen where that is possible."""
        self._views = {}
        orig = self._original
        if orig is None:
            return
        var = self.fb.var
        # Another opener of a shared device may have panned since: its page stays shown.
        if (var.xoffset, var.yoffset) != (orig.xoffset, orig.yoffset) and not self.fb.changed_elsewhere("pan"):
            self._try("the pan offset", self.fb.pan, orig.xoffset, orig.yoffset)

    def _view(self, x: int, y: int) -> np.ndarray:
        """A page of video memory at (x, y); kept while the mapping lasts."""
        fb = self.fb
        key = (x, y, fb.stride, id(fb.memory))  # a cached view keeps its memory alive
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= 4:
                self._views.clear()
            view = self._views[key] = fb.view(x, y, fb.width, fb.height)
        return view

    def _try(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except (OSError, ValueError) as e:
            warnings.warn(f"fbgfx: could not restore {what} on {self.fb.path}: {e}", RuntimeWarning, stacklevel=4)


class CopyBuffer(Buffering):
    """``"copy"``: each frame's changes are copied into the visible page."""

    name = "copy"

    def __init__(self, fb: Framebuffer, width: int, height: int, vsync: bool) -> None:
        super().__init__(fb, width, height, vsync)
        self._page = _Page(fb.var.yoffset, width, height)

    def show(self, changed: Region | None, write: Writer) -> None:
        pending = self._page.pending
        _mark(pending, changed)
        self.wait_for_vsync()  # the page is on screen: write during the blank
        write(self.visible(), pending)
        pending.clear()


class SingleBuffer(CopyBuffer):
    """``"single"``: drawing goes straight to the visible page where the frame's layout
    is the device's; otherwise (fewer than 8 bits a pixel, a turned picture) as
    ``"copy"``."""

    name = "single"
    draws_in_place = True


class _CannotFlip(Exception):
    """Why page flipping is not possible on this device."""


class FlipBuffer(Buffering):
    """``"flip"``: two pages in the virtual screen; each frame is written into the
    hidden one, which is then panned to (``FBIOPAN_DISPLAY``) after the vertical blank.

    The virtual height is grown to hold two pages when the driver allows, and put back
    on :meth:`close`.

    Raises:
        _CannotFlip: The device cannot pan, or has no room for two pages.
    """

    name = "flip"

    def __init__(self, fb: Framebuffer, width: int, height: int, vsync: bool) -> None:
        super().__init__(fb, width, height, vsync)
        self._grew = False
        var, fix = fb.var, fb.fix
        if fix.id in PAN_NOT_SHOWN:
            raise _CannotFlip(
                f"the {fix.id} driver accepts a pan but the monitor keeps showing the first page; "
                "open the card as drm: for real page flips"
            )
        if fb.format.is_packed and (var.xoffset * fb.format.bpp) % 8:
            raise _CannotFlip("the pan offset does not start on a byte")
        step = fix.ypanstep
        if not step:
            raise _CannotFlip("the driver cannot pan (ypanstep 0)")
        second = -(-var.yres // step) * step
        need = second + var.yres
        if var.yres_virtual < need:
            try:
                fb.set_mode(virtual_height=need)  # tested with FB_ACTIVATE_TEST first
            except (OSError, ValueError) as e:
                raise _CannotFlip(
                    f"no room for a second page and the driver refused {var.yres_virtual} -> {need} virtual lines ({e})"
                ) from None
            self._grew = True
            var, fix = fb.var, fb.fix
            if var.yres_virtual < need or not fix.ypanstep:
                self._put_back_size()
                raise _CannotFlip("the driver did not make room for a second page")
        self._x = var.xoffset
        self._pages: list[_Page] = [_Page(0, width, height), _Page(second, width, height)]
        self._front: int | None = next((i for i, p in enumerate(self._pages) if p.y == var.yoffset), None)

    def show(self, changed: Region | None, write: Writer) -> None:
        pages = self._pages
        for p in pages:
            if changed is None:
                p.pending.add_all()
            else:
                p.pending.merge(changed)
        back = 1 if self._front == 0 else 0
        page = pages[back]
        write(self._view(self._x, page.y), page.pending)
        page.pending.clear()
        if self._vsync:
            self.wait_for_vsync()
        self.fb.pan(self._x, page.y)
        self._front = back

    def close(self) -> None:
        fb = self.fb
        if fb.changed_elsewhere("pan") or fb.changed_elsewhere("mode"):
            # Another opener of this shared device has panned or set a mode since: it
            # may be flipping pages in the grown virtual size. Leave the device to it.
            self._views, self._grew = {}, False
            return
        orig, var = self._original, fb.var
        assert orig is not None  # fbdev only
        if (var.xoffset, var.yoffset) != (orig.xoffset, orig.yoffset):
            # The last frame stays on screen: copy the shown page to where the original
            # offset shows it before panning back (one read of video memory, at close).
            self._try("the last frame", self._copy_front_to, orig.xoffset, orig.yoffset)
        self._put_back_size()
        super().close()

    def _put_back_size(self) -> None:
        orig = self._original
        if self._grew and orig is not None:
            self._try(
                "the virtual size", self.fb.set_mode, virtual_width=orig.xres_virtual, virtual_height=orig.yres_virtual
            )
            self._grew = False

    def _copy_front_to(self, x: int, y: int) -> None:
        fb = self.fb
        fb.view(x, y, fb.width, fb.height)[...] = fb.pixels


class _DrmBuffering(Buffering):
    """What the strategies for a ``drm:`` display share: the page on screen is
    ``fb.pixels``, and a page's changes reach the monitor with ``fb.flush``."""

    def visible(self) -> np.ndarray:
        return self.fb.pixels

    def _flush(self, region: Region | None) -> None:
        if region is None:
            self.fb.flush()
            return
        self.fb.flush([self.to_panel(x0, y0, x1, y1) for y0, y1, x0, x1 in region.runs()])


class DrmCopyBuffer(_DrmBuffering):
    """``"copy"`` on ``drm:``: changes are copied into the buffer on screen and the
    driver is told which rectangles changed (``DIRTYFB``), which drivers showing a
    copy (virtio-gpu, cirrus, SPI panels) need to show them."""

    name = "copy"

    def __init__(self, fb: Framebuffer, width: int, height: int, vsync: bool) -> None:
        super().__init__(fb, width, height, vsync)
        self._pending = Region(width, height)
        self._pending.add_all()

    def show(self, changed: Region | None, write: Writer) -> None:
        pending = self._pending
        _mark(pending, changed)
        self.fb.wait_flip()  # a flip queued before (by fb.pan) shows the other page
        self.wait_for_vsync()
        write(self.visible(), pending)
        self._flush(pending)
        pending.clear()


class DrmSingleBuffer(DrmCopyBuffer):
    """``"single"`` on ``drm:``: drawing goes into the buffer on screen; ``flip()``
    tells the driver (``DIRTYFB``)."""

    name = "single"
    draws_in_place = True

    def flush(self) -> None:
        self._flush(None)


class DrmFlipBuffer(_DrmBuffering):
    """``"flip"`` on ``drm:``: a frame is written into the buffer not on screen, which
    is then shown by a KMS page flip (``PAGE_FLIP`` with a completion event, in step
    with the display's refresh: no tearing). ``show`` returns once the flip is
    queued; the next ``show`` waits for its event before writing into the buffer
    that was on screen until then."""

    name = "flip"

    def __init__(self, fb: Framebuffer, width: int, height: int, vsync: bool) -> None:
        super().__init__(fb, width, height, vsync)
        info = fb.drm
        assert info is not None
        if info.pages < 2:
            raise _CannotFlip("the driver had no room for a second buffer at this mode")
        self._rows = info.page_rows
        self._front = info.page
        self._pages = [_Page(0, width, height), _Page(self._rows, width, height)]

    def show(self, changed: Region | None, write: Writer) -> None:
        for page in self._pages:
            _mark(page.pending, changed)
        back = 1 - self._front
        page = self._pages[back]
        self.fb.wait_flip()  # the back buffer was on screen until the last flip's event
        write(self._view(0, page.y), page.pending)
        page.pending.clear()
        self.fb.pan(0, page.y)  # queues the page flip
        self._front = back

    def close(self) -> None:
        self._views = {}
        try:
            self.fb.wait_flip()  # the last frame is on screen when the Screen closes
        except OSError as e:
            warnings.warn(
                f"fbgfx: the last page flip on {self.fb.path} did not finish: {e}", RuntimeWarning, stacklevel=3
            )


def choose(
    fb: Framebuffer, buffering: str, width: int, height: int, vsync: bool, to_panel: ToPanel | None = None
) -> Buffering:
    """The strategy for ``buffering`` (``"auto"``, ``"flip"``, ``"copy"`` or ``"single"``),
    for frames of ``width`` x ``height`` placed on the panel by ``to_panel`` (default:
    as they are).

    ``"auto"`` is ``"flip"`` where the device pans and has (or can get) room for two
    pages, else ``"copy"``. On fbdev drivers of :data:`PAN_NOT_SHOWN` it is
    ``"copy"``. On a ``drm:`` display it is a KMS page flip where the driver had room
    for two buffers, else ``"copy"`` with ``DIRTYFB``.

    Raises:
        FramebufferError: ``"flip"`` on a device that cannot flip pages.
    """
    strategy = _choose(fb, buffering, width, height, vsync)
    if to_panel is not None:
        strategy.to_panel = to_panel
    return strategy


def _choose(fb: Framebuffer, buffering: str, width: int, height: int, vsync: bool) -> Buffering:
    flip: type[Buffering] = FlipBuffer
    single: type[Buffering] = SingleBuffer
    copy: type[Buffering] = CopyBuffer
    if fb.drm is not None:  # a drm: display has strategies of its own, chosen alike
        flip, single, copy = DrmFlipBuffer, DrmSingleBuffer, DrmCopyBuffer
    if buffering in ("auto", "flip"):
        try:
            return flip(fb, width, height, vsync)
        except _CannotFlip as why:
            if buffering == "flip":
                raise FramebufferError(
                    errno.EINVAL, f"cannot page-flip: {why}; use buffering='copy' or 'auto'", fb.path
                ) from None
    if buffering == "single":
        return single(fb, width, height, vsync)
    return copy(fb, width, height, vsync)
