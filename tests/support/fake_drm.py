"""A fake DRM card (:class:`fbgfx.drm.CardLike`, as :class:`fbgfx.drm.Card`), for hardware-free tests.

It models connectors with an encoder, a CRTC and a primary plane each (one by
default). Dumb buffers are bytearrays; ``map_pages`` returns one bytearray holding the buffers end to end, as
the real mapping does, and :meth:`FakeCard.scanout` reads what the CRTC shows from it.
Every call is logged by name in ``calls``.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any

import numpy as np

from fbgfx.drm import (
    CONNECTOR_TYPES,
    Connector,
    CrtcState,
    DrmMode,
    Encoder,
    FbInfo,
    Plane,
    fourcc_name,
)
from fbgfx.errors import FramebufferError

CRTC, CONNECTOR, ENCODER, PLANE, CONSOLE_FB = 40, 30, 20, 50, 7


def make_mode(w: int, h: int, hz: int = 60, preferred: bool = False) -> DrmMode:
    """A mode with plausible timings."""
    return DrmMode(
        clock=w * h * hz // 1000 * 13 // 10,
        hdisplay=w,
        hsync_start=w + 16,
        hsync_end=w + 80,
        htotal=w + 160,
        hskew=0,
        vdisplay=h,
        vsync_start=h + 3,
        vsync_end=h + 9,
        vtotal=h + 30,
        vscan=0,
        vrefresh=hz,
        flags=0,
        type=(1 << 3) if preferred else 0,
        name=f"{w}x{h}",
    )


MODES = (
    make_mode(1280, 800, preferred=True),
    make_mode(1920, 1080),
    make_mode(1024, 768),
    make_mode(1024, 768, 75),
    make_mode(800, 600),
    make_mode(640, 480),
)


class FakeCard:
    """Displays on one card, one CRTC each; the console's framebuffer on the first at first.

    ``heads`` connectors (``Virtual-1``, ``Virtual-2``...; ids 30, 31...) each have an
    encoder (20, 21...) that can drive only its own CRTC (40, 41...) with its primary
    plane (50, 51...), as virtio-gpu's outputs do. ``head_modes`` gives each its modes
    (default: ``modes`` for all). :meth:`unplug` and :meth:`plug` change what a
    connector reports; with ``strict_unplug`` the kernel refuses flips and CRTC
    changes on a connector with nothing connected.
    """

    def __init__(
        self,
        modes: Sequence[DrmMode] = MODES,
        *,
        connected: bool = True,
        master_error: int | None = None,
        formats: Sequence[str] = ("XR24", "AR24", "RG16"),
        vram: int | None = None,
        dirty: bool = True,
        crtc_on: bool = True,
        driver: str = "fake-drm",
        heads: int = 1,
        head_modes: Sequence[Sequence[DrmMode]] | None = None,
        head_connected: Sequence[bool] | None = None,
        path: str = "/dev/dri/card0",
        strict_unplug: bool = False,
    ) -> None:
        self.path = path
        self.driver_name = driver
        self.fd = 3
        self.heads = heads
        self.head_modes = [tuple(m) for m in head_modes] if head_modes else [tuple(modes)] * heads
        self.head_connected = list(head_connected) if head_connected else [connected] * heads
        self.master_error = master_error
        self.formats = tuple(formats)
        self.vram = vram
        self.dirty_supported = dirty
        self.strict_unplug = strict_unplug
        self.calls: list[str] = []
        self.master = False
        self.dumbs: dict[int, tuple[int, int, int, int]] = {}  # handle -> (w, h, pitch, size)
        self.fbs: dict[int, tuple[int, int, str, int, int]] = {CONSOLE_FB: (1280, 800, "XR24", 0, 5120)}
        self.mappings: dict[int, tuple[bytearray, int]] = {}  # map offset -> (memory, start)
        self.planar: dict[int, tuple[tuple[int, int], ...]] = {}  # fb -> (pitch, offset) of each plane
        self.events: list[tuple[int, int, int, int]] = []
        self.dirty_rects: list[list[tuple[int, int, int, int]]] = []
        self.states = {CRTC + i: CrtcState(CRTC + i, 0, 0, 0, None) for i in range(heads)}
        if crtc_on:
            self.states[CRTC] = CrtcState(CRTC, CONSOLE_FB, 0, 0, self.head_modes[0][0])
        self.setcrtc: list[tuple[int, int, int, int, tuple[int, ...], DrmMode | None]] = []
        self.flips: list[int] = []
        self.flips_by_crtc: dict[int, list[int]] = {CRTC + i: [] for i in range(heads)}
        self.probes = 0
        self._next = 100
        self._seq = 0

    # compatibility with the one-display fake the older tests use
    @property
    def state(self) -> CrtcState:
        return self.states[CRTC]

    @property
    def modes(self) -> tuple[DrmMode, ...]:
        return self.head_modes[0]

    @property
    def connected(self) -> bool:
        return self.head_connected[0]

    def _id(self) -> int:
        self._next += 1
        return self._next

    def _fail(self, err: int, doing: str) -> None:
        raise FramebufferError.from_errno(err, doing, self.path)

    def _head_of_crtc(self, crtc_id: int) -> int:
        return crtc_id - CRTC

    # for tests: monitors that come and go
    def unplug(self, head: int = 0) -> None:
        """Nothing connected on connector ``head`` (what the kernel reports from now)."""
        self.head_connected[head] = False

    def plug(self, head: int = 0, modes: Sequence[DrmMode] | None = None) -> None:
        """A monitor on connector ``head`` again, with ``modes`` (default: as before)."""
        self.head_connected[head] = True
        if modes is not None:
            self.head_modes[head] = tuple(modes)

    # identity
    def driver(self) -> str:
        self.calls.append("driver")
        return self.driver_name

    def get_cap(self, cap: int) -> int:
        return 1

    def set_client_cap(self, cap: int, value: int) -> bool:
        return True

    def ioctl(self, request: int, arg: Any, doing: str) -> None:
        """What a card without the request answers (object properties: no atomic here)."""
        raise FramebufferError.from_errno(errno.ENOTTY, doing, self.path)

    def set_master(self) -> None:
        self.calls.append("set_master")
        if self.master_error:
            self._fail(self.master_error, "becoming DRM master")
        self.master = True

    def drop_master(self) -> None:
        self.calls.append("drop_master")
        self.master = False

    # mode objects
    def resources(self) -> tuple[list[int], list[int], list[int]]:
        n = range(self.heads)
        return [CRTC + i for i in n], [CONNECTOR + i for i in n], [ENCODER + i for i in n]

    def connector(self, connector_id: int, probe: bool = True) -> Connector:
        if self.fd < 0:
            self._fail(errno.EBADF, "reading a connector")
        i = connector_id - CONNECTOR
        self.probes += probe
        on = self.head_connected[i]
        lit = bool(self.states[CRTC + i].fb_id)
        return Connector(
            connector_id,
            f"{CONNECTOR_TYPES[15]}-{i + 1}",
            on,
            self.head_modes[i] if on else (),
            ENCODER + i if lit else 0,
            (ENCODER + i,),
            300 if on else 0,
            200 if on else 0,
        )

    def encoder(self, encoder_id: int) -> Encoder:
        i = encoder_id - ENCODER
        return Encoder(encoder_id, CRTC + i if self.states[CRTC + i].fb_id else 0, 1 << i)

    def crtc(self, crtc_id: int) -> CrtcState:
        return self.states[crtc_id]

    def set_crtc(
        self, crtc_id: int, fb_id: int, x: int, y: int, connectors: Sequence[int], mode: DrmMode | None
    ) -> None:
        self.calls.append("set_crtc")
        if self.fd < 0:
            self._fail(errno.EBADF, "setting the CRTC")
        if not self.master:
            self._fail(errno.EACCES, "setting the CRTC")
        if fb_id and fb_id not in self.fbs:
            self._fail(errno.ENOENT, "setting the CRTC")
        if fb_id and self.strict_unplug and not self.head_connected[self._head_of_crtc(crtc_id)]:
            self._fail(errno.EINVAL, "setting the CRTC")
        self.setcrtc.append((crtc_id, fb_id, x, y, tuple(connectors), mode))
        self.states[crtc_id] = CrtcState(crtc_id, fb_id, x, y, mode if fb_id else None)

    def planes(self) -> list[Plane]:
        return [
            Plane(PLANE + i, CRTC + i, self.states[CRTC + i].fb_id, 1 << i, self.formats) for i in range(self.heads)
        ]

    # buffers
    def create_dumb(self, width: int, height: int, bpp: int) -> tuple[int, int, int]:
        self.calls.append("create_dumb")
        pitch = -(-width * bpp // 8 // 64) * 64
        size = -(-pitch * height // 4096) * 4096
        if self.vram is not None and sum(d[3] for d in self.dumbs.values()) + size > self.vram:
            self._fail(errno.ENOMEM, "creating a buffer")
        handle = self._id()
        self.dumbs[handle] = (width, height, pitch, size)
        return handle, pitch, size

    def map_offset(self, handle: int) -> int:
        return handle << 20

    def destroy_dumb(self, handle: int) -> None:
        self.calls.append("destroy_dumb")
        del self.dumbs[handle]

    def gem_close(self, handle: int) -> None:
        pass

    def add_fb2(self, width: int, height: int, code: str, handle: int, pitch: int, offset: int = 0) -> int:
        self.calls.append("add_fb2")
        if code not in self.formats:
            self._fail(errno.EINVAL, "adding a framebuffer")
        fb = self._id()
        self.fbs[fb] = (width, height, code, handle, pitch)
        return fb

    def add_fb2_planar(self, width: int, height: int, code: str, handle: int, planes: Sequence[tuple[int, int]]) -> int:
        self.calls.append("add_fb2_planar")
        if code not in self.formats:
            self._fail(errno.EINVAL, "adding a framebuffer")
        size = self.dumbs[handle][3]
        if any(offset + pitch > size for pitch, offset in planes):
            self._fail(errno.EINVAL, "adding a framebuffer")  # a plane past the buffer's end
        fb = self._id()
        self.fbs[fb] = (width, height, code, handle, planes[0][0])
        self.planar[fb] = tuple(planes)
        return fb

    def rm_fb(self, fb_id: int) -> None:
        self.calls.append("rm_fb")
        del self.fbs[fb_id]
        self.planar.pop(fb_id, None)

    def get_fb(self, fb_id: int) -> FbInfo:
        w, h, code, handle, pitch = self.fbs[fb_id]
        return FbInfo(fb_id, w, h, code, handle, pitch, 0)

    def page_flip(self, crtc_id: int, fb_id: int, user_data: int) -> None:
        self.calls.append("page_flip")
        if self.fd < 0:
            self._fail(errno.EBADF, "flipping pages")
        if fb_id not in self.fbs:
            self._fail(errno.ENOENT, "flipping pages")
        if self.strict_unplug and not self.head_connected[self._head_of_crtc(crtc_id)]:
            self._fail(errno.EINVAL, "flipping pages")
        if any(e[0] == 2 and e[3] == crtc_id for e in self.events):
            self._fail(errno.EBUSY, "flipping pages")  # a flip is still in flight
        self.flips.append(fb_id)
        self.flips_by_crtc[crtc_id].append(fb_id)
        self._seq += 1
        self.events.append((2, user_data, self._seq, crtc_id))
        self.states[crtc_id] = CrtcState(crtc_id, fb_id, 0, 0, self.states[crtc_id].mode)

    def dirty_fb(self, fb_id: int, rects: Sequence[tuple[int, int, int, int]]) -> None:
        self.calls.append("dirty_fb")
        if not self.dirty_supported:
            self._fail(errno.ENOSYS, "sending changed rectangles")
        self.dirty_rects.append(list(rects))

    def wait_vblank(self, crtc_index: int) -> None:
        self._fail(errno.EOPNOTSUPP, "waiting for vblank")

    def read_events(self, timeout: float) -> list[tuple[int, int, int, int]]:
        events, self.events = self.events, []
        return events

    def map_pages(self, offsets: Sequence[int], size: int) -> tuple[Any, int]:
        memory = bytearray(size * len(offsets))
        for i, off in enumerate(offsets):
            self.mappings[off] = (memory, i * size)
        return memory, id(memory)

    def detach(self, addr: int, length: int) -> None:
        # in place, from a copy: other threads' displays map theirs meanwhile (as the kernel allows)
        for k, v in self.mappings.copy().items():
            if id(v[0]) == addr:
                self.mappings.pop(k, None)

    def read_buffer(self, handle: int, length: int) -> bytes:
        memory, start = self.mappings[self.map_offset(handle)]
        return bytes(memory[start : start + length])

    def close(self) -> None:
        self.calls.append("close")
        self.fd = -1

    # for tests
    def scanout(self, crtc: int = CRTC) -> np.ndarray:
        """The bytes of the framebuffer on a CRTC, (height, width * Bpp)."""
        fb = self.states[crtc].fb_id
        w, h, code, handle, pitch = self.fbs[fb]
        memory, start = self.mappings[self.map_offset(handle)]
        bpp = 2 if code == "RG16" else 4
        rows = np.frombuffer(memory, np.uint8, count=pitch * h, offset=start).reshape(h, pitch)
        return rows[:, : w * bpp]

    def fourcc_on_screen(self, crtc: int = CRTC) -> str:
        return self.fbs[self.states[crtc].fb_id][2]


__all__ = ["CONNECTOR", "CRTC", "MODES", "FakeCard", "fourcc_name", "make_mode"]
