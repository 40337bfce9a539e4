"""Display planes for layers: which planes a ``drm:`` display's CRTC can use, and a
layer's picture on one of them.

:class:`PlanePool` lists the planes of a display (``fb.planes``) and hands a free
overlay plane to a layer (:meth:`PlanePool.take`) after asking the driver in a
``TEST_ONLY`` commit whether it takes the layer's format and position. A
:class:`HardwarePlane` then owns two dumb buffers: an update copies the changed
rectangles into the buffer not on screen and commits that plane alone, non-blocking,
with a page-flip event, so the Screen's plane and the other layers keep their
framebuffers.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._ffi import lib
from ..errors import FramebufferError
from .atomic import Atomic, PlaneInfo, plane_rect
from .buffers import Buffers
from .card import Card, DrmMode
from .yuv import YuvBuffer

if TYPE_CHECKING:
    from .device import DrmDevice

__all__ = ["HardwarePlane", "PlanePool", "YuvVideo"]

#: How long a plane update waits for the commits in flight on its CRTC (seconds).
COMMIT_TIMEOUT = 5.0
#: The plane formats layers use: fourcc -> bits per pixel.
PLANE_BPP = {"AR24": 32, "XR24": 32, "AB24": 32, "XB24": 32, "RG16": 16, "BG16": 16}
Rect = tuple[int, int, int, int]


def _layer_mode(width: int, height: int) -> DrmMode:
    """A DrmMode that only carries a size (what Buffers.make reads)."""
    return DrmMode(0, width, 0, 0, 0, 0, height, 0, 0, 0, 0, 0, 0, 0, "layer")


class PlanePool:
    """The planes of one ``drm:`` display's (first) CRTC, for layers.

    Attributes:
        atomic: The card's atomic modesetting, None on legacy KMS (no plane is handed
            out then; :meth:`take` says so).
    """

    def __init__(self, device: DrmDevice) -> None:
        self.device = device
        self.atomic = device.atomic
        head = device.heads[0]
        self.crtc_id, self.crtc_index = head.crtc_id, head.crtc_index
        self.shared = device.shared_card
        self.card = device.card

    def infos(self) -> tuple[PlaneInfo, ...]:
        """The planes the display's CRTC can use, with their type, formats and state."""
        reader = self.atomic
        if reader is None:
            if not isinstance(self.card, Card):
                return ()
            reader = Atomic(self.card)  # reading properties needs no atomic client cap
        try:
            possible = reader.possible(self.crtc_index)
            return tuple(p for p in reader.planes() if p.id in possible)
        except OSError:
            return ()

    def take(self, panel: Rect, code: str, above: int) -> tuple[HardwarePlane | None, str]:
        """A plane showing a ``code`` (fourcc) picture at ``panel`` on the CRTC, above
        the planes of ids up to ``above`` (layers stack in creation order; without
        ``zpos`` a driver stacks overlays by id); or None and why not."""
        atomic = self.atomic
        if atomic is None:
            return None, "the display is driven by legacy KMS (no atomic modesetting): composed by fbgfx"
        infos = self.infos()
        taken = set(self.shared.layer_planes)
        free = [p for p in infos if p.type == "overlay" and p.id not in taken and not p.in_use]
        if not free:
            return None, "no free overlay plane: composed by fbgfx"
        fitting = [p for p in free if code in p.formats]
        if not fitting:
            return None, f"no free overlay plane scans out {code}: composed by fbgfx"
        ordered = [p for p in fitting if p.id > above]
        if not ordered:
            return None, "no free overlay plane above the layers on planes: composed by fbgfx"
        reasons = []
        for info in ordered:
            if (
                info.blend not in ("", "Pre-multiplied")
                and atomic.enum_value(info.id, lib.DRM_MODE_OBJECT_PLANE, "pixel blend mode", "Pre-multiplied") is None
            ):
                reasons.append(f"plane {info.id} has no premultiplied blending")
                continue
            try:
                plane = HardwarePlane(self, info, panel, code)
            except OSError as e:
                return None, f"no buffers for a plane ({e}): composed by fbgfx"
            why = plane.refusal()
            if not why:
                return plane, ""
            plane.free()
            reasons.append(why)
            if "ENOSPC" in why:
                break
        return None, f"{reasons[0] if reasons else 'refused'}: composed by fbgfx"


class HardwarePlane:
    """A layer's picture on an overlay plane: two buffers, flipped by atomic commits
    of this plane alone."""

    def __init__(self, pool: PlanePool, info: PlaneInfo, panel: Rect, code: str) -> None:
        atomic = pool.atomic
        assert atomic is not None
        self.pool, self.atomic, self.id, self.code = pool, atomic, info.id, code
        self.formats = info.formats
        self.panel = panel
        self.shown = False
        self.yuv: YuvVideo | None = None  # video frames in YUV on this plane, while a play has them
        w, h = panel[2] - panel[0], panel[3] - panel[1]
        self.width, self.height = w, h
        self.bufs = Buffers.make(pool.card, _layer_mode(w, h), "", pool.device.path, fourcc=(code, PLANE_BPP[code]))
        self._pending: set[int] = set()
        self._last: list[Rect] = []  # what the last update wrote (the other buffer lacks it)
        atomic.values(self.id, lib.DRM_MODE_OBJECT_PLANE)
        self._extra: dict[str, int] = {}
        premult = atomic.enum_value(self.id, lib.DRM_MODE_OBJECT_PLANE, "pixel blend mode", "Pre-multiplied")
        if premult is not None:
            self._extra["pixel blend mode"] = premult

    def _props(self) -> dict[str, int]:
        x0, y0, x1, y1 = self.panel
        w, h = x1 - x0, y1 - y0
        return {
            "FB_ID": self.bufs.fb_ids[self.bufs.front],
            "CRTC_ID": self.pool.crtc_id,
            **plane_rect(x0, y0, w, h, w, h),
            **self._extra,
        }

    def refusal(self) -> str:
        """Why the driver would not show this plane where it is ("" when it would)."""
        return self.atomic.refusal([(self.id, self._props())], doing=f"showing plane {self.id}")

    def page(self, index: int) -> np.ndarray:
        """Buffer ``index`` as (height, width) pixels."""
        rows = self.bufs.page(index)
        dtype = np.uint32 if self.bufs.bpp == 32 else np.uint16
        return rows.view(dtype)

    def show(self, pixels: np.ndarray) -> None:
        """Show the plane with ``pixels`` (the layer's whole picture), blocking."""
        self.page(self.bufs.front)[...] = pixels
        self._commit(self._props(), blocking=True)
        self.shown = True
        self.pool.shared.layer_planes[self.id] = self.pool.crtc_id
        self._last = []

    def hide(self) -> None:
        """Turn the plane off, blocking."""
        if not self.shown:
            return
        self._commit({"FB_ID": 0, "CRTC_ID": 0}, blocking=True)
        self.shown = False
        self.pool.shared.layer_planes.pop(self.id, None)

    def move(self, panel: Rect) -> None:
        """Show the plane at ``panel`` (same size)."""
        self.panel = panel
        if self.shown:
            x0, y0, x1, y1 = panel
            self._commit(plane_rect(x0, y0, x1 - x0, y1 - y0, x1 - x0, y1 - y0), blocking=False)

    def update(self, pixels: np.ndarray, rects: Sequence[Rect]) -> None:
        """Copy ``rects`` of ``pixels`` (the layer's picture) into the buffer not on
        screen, with what it lacks from the last update, and flip this plane to it."""
        self.wait()
        bufs = self.bufs
        if bufs.pages < 2:
            target = self.page(bufs.front)
            for x0, y0, x1, y1 in rects:
                target[y0:y1, x0:x1] = pixels[y0:y1, x0:x1]
            return
        back = 1 - bufs.front
        target = self.page(back)
        for x0, y0, x1, y1 in [*self._last, *rects]:
            target[y0:y1, x0:x1] = pixels[y0:y1, x0:x1]
        self._last = list(rects)
        bufs.front = back
        if self.shown:
            self._commit({"FB_ID": bufs.fb_ids[back]}, blocking=False)

    def _commit(self, props: dict[str, int], *, blocking: bool) -> None:
        shared = self.pool.shared
        for attempt in range(3):
            shared.wait_idle(self.pool.crtc_id, COMMIT_TIMEOUT)
            token = shared.token()
            try:
                with shared.lock:
                    self.atomic.commit(
                        [(self.id, props)], event=None if blocking else token, doing=f"updating plane {self.id}"
                    )
                    if not blocking:
                        shared.note_commit(self.pool.crtc_id, token)
                        self._pending = {token}
                return
            except FramebufferError as e:
                if e.errno != errno.EBUSY or attempt == 2:
                    raise

    def wait(self) -> bool:
        """Wait until the last update is on screen; False when none was in flight."""
        pending, self._pending = self._pending, set()
        if not pending:
            return False
        left = self.pool.shared.wait_flips(pending, COMMIT_TIMEOUT)
        if left:
            self.pool.shared.cancel(left)
        return True

    def free(self) -> None:
        """Turn the plane off (if on) and free its buffers."""
        try:
            self.wait()
            self.hide()
        finally:
            yuv, self.yuv = self.yuv, None
            if yuv is not None:
                yuv.free()
            self.bufs.free(self.pool.card, self.pool.device.path)


class YuvVideo:
    """A layer plane's video pictures in NV12 or YU12 (:class:`fbgfx.video._yuv.YuvTarget`):
    two YUV buffers of the plane's size flipped in turn, instead of its RGB buffers, while
    a play has them.

    Attributes:
        formats: The formats the plane lists.
    """

    def __init__(self, plane: HardwarePlane) -> None:
        self.plane = plane
        self.formats = plane.formats
        self.bufs: list[YuvBuffer] = []
        self.front = 0

    def begin(self, code: str, bt709: bool) -> str:
        """Show black ``code`` pictures on the plane, after a ``TEST_ONLY`` commit; "" or why not."""
        plane = self.plane
        if plane.width % 2 or plane.height % 2:
            return f"the layer is {plane.width}x{plane.height}: 4:2:0 YUV needs even sizes"
        try:
            self.bufs = [YuvBuffer(plane.pool.card, plane.width, plane.height, code) for _ in range(2)]
        except (OSError, ValueError) as e:
            self.free()
            return f"no {code} buffers ({e})"
        for buf in self.bufs:
            buf.black()
        colors = self._colors(bt709)
        props = {**plane._props(), **colors, "FB_ID": self.bufs[0].fb_id}  # noqa: SLF001 (same module: the plane's own)
        why = plane.atomic.refusal([(plane.id, props)], doing=f"showing {code} on plane {plane.id}")
        if why:
            self.free()
            return f"{code}: {why}"
        plane.wait()
        if plane.shown:
            plane._commit({**colors, "FB_ID": self.bufs[0].fb_id}, blocking=True)  # noqa: SLF001 (same module)
        self.front = 0
        plane.yuv = self
        return ""

    def _colors(self, bt709: bool) -> dict[str, int]:
        """The plane's YUV matrix and range properties for the video, where it has them."""
        atomic, plane_id, kind = self.plane.atomic, self.plane.id, lib.DRM_MODE_OBJECT_PLANE
        wanted = {
            "COLOR_ENCODING": "ITU-R BT.709 YCbCr" if bt709 else "ITU-R BT.601 YCbCr",
            "COLOR_RANGE": "YCbCr limited range",
        }
        out = {}
        for name, choice in wanted.items():
            value = atomic.enum_value(plane_id, kind, name, choice)
            if value is not None:
                out[name] = value
        return out

    def back(self) -> tuple[int, list[np.ndarray]]:
        """(index, planes) of the picture not on screen, once the last flip is done."""
        self.plane.wait()
        index = 1 - self.front
        return index, self.bufs[index].planes()

    def flip(self) -> None:
        """Show the picture :meth:`back` gave (this plane alone, non-blocking)."""
        self.front = 1 - self.front
        if self.plane.shown:
            self.plane._commit({"FB_ID": self.bufs[self.front].fb_id}, blocking=False)  # noqa: SLF001 (same module)

    def end(self) -> None:
        """Show the layer's RGB picture on the plane again and free the YUV pictures."""
        plane = self.plane
        plane.wait()
        if plane.shown and self.bufs:
            plane._commit({"FB_ID": plane.bufs.fb_ids[plane.bufs.front]}, blocking=True)  # noqa: SLF001 (same module)
        self.free()

    def free(self) -> None:
        """Free the YUV pictures (none may be on screen)."""
        bufs, self.bufs = self.bufs, []
        for buf in bufs:
            buf.free()
        if self.plane.yuv is self:
            self.plane.yuv = None
