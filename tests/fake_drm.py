"""A fake DRM card (:class:`fbgfx.drm.CardLike`, as :class:`fbgfx.drm.Card`), for hardware-free tests.

It models one connector, one encoder, one CRTC and one primary plane. Dumb buffers are
bytearrays; ``map_pages`` returns one bytearray holding the buffers end to end, as
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
    """One display on one CRTC; the console's framebuffer on screen at first."""

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
    ) -> None:
        self.path = "/dev/dri/card0"
        self.driver_name = driver
        self.fd = 3
        self.modes = tuple(modes)
        self.connected = connected
        self.master_error = master_error
        self.formats = tuple(formats)
        self.vram = vram
        self.dirty_supported = dirty
        self.calls: list[str] = []
        self.master = False
        self.dumbs: dict[int, tuple[int, int, int, int]] = {}  # handle -> (w, h, pitch, size)
        self.fbs: dict[int, tuple[int, int, str, int, int]] = {CONSOLE_FB: (1280, 800, "XR24", 0, 5120)}
        self.mappings: dict[int, tuple[bytearray, int]] = {}  # map offset -> (memory, start)
        self.events: list[tuple[int, int, int, int]] = []
        self.dirty_rects: list[list[tuple[int, int, int, int]]] = []
        self.state = CrtcState(CRTC, CONSOLE_FB, 0, 0, self.modes[0]) if crtc_on else CrtcState(CRTC, 0, 0, 0, None)
        self.setcrtc: list[tuple[int, int, int, int, tuple[int, ...], DrmMode | None]] = []
        self.flips: list[int] = []
        self._next = 100
        self._seq = 0

    def _id(self) -> int:
        self._next += 1
        return self._next

    def _fail(self, err: int, doing: str) -> None:
        raise FramebufferError.from_errno(err, doing, self.path)

    # identity
    def driver(self) -> str:
        self.calls.append("driver")
        return self.driver_name

    def get_cap(self, cap: int) -> int:
        return 1

    def set_client_cap(self, cap: int, value: int) -> bool:
        return True

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
        return [CRTC], [CONNECTOR], [ENCODER]

    def connector(self, connector_id: int, probe: bool = True) -> Connector:
        return Connector(
            CONNECTOR,
            f"{CONNECTOR_TYPES[15]}-1",
            self.connected,
            self.modes if self.connected else (),
            ENCODER if self.state.fb_id else 0,
            (ENCODER,),
            300,
            200,
        )

    def encoder(self, encoder_id: int) -> Encoder:
        return Encoder(ENCODER, CRTC if self.state.fb_id else 0, 1)

    def crtc(self, crtc_id: int) -> CrtcState:
        return self.state

    def set_crtc(
        self, crtc_id: int, fb_id: int, x: int, y: int, connectors: Sequence[int], mode: DrmMode | None
    ) -> None:
        self.calls.append("set_crtc")
        if not self.master:
            self._fail(errno.EACCES, "setting the CRTC")
        if fb_id and fb_id not in self.fbs:
            self._fail(errno.ENOENT, "setting the CRTC")
        self.setcrtc.append((crtc_id, fb_id, x, y, tuple(connectors), mode))
        self.state = CrtcState(crtc_id, fb_id, x, y, mode if fb_id else None)

    def planes(self) -> list[Plane]:
        return [Plane(PLANE, CRTC, self.state.fb_id, 1, self.formats)]

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

    def rm_fb(self, fb_id: int) -> None:
        self.calls.append("rm_fb")
        del self.fbs[fb_id]

    def get_fb(self, fb_id: int) -> FbInfo:
        w, h, code, handle, pitch = self.fbs[fb_id]
        return FbInfo(fb_id, w, h, code, handle, pitch, 0)

    def page_flip(self, crtc_id: int, fb_id: int, user_data: int) -> None:
        self.calls.append("page_flip")
        if any(e[0] == 2 for e in self.events):
            self._fail(errno.EBUSY, "flipping pages")  # a flip is still in flight
        self.flips.append(fb_id)
        self._seq += 1
        self.events.append((2, user_data, self._seq, crtc_id))
        self.state = CrtcState(crtc_id, fb_id, 0, 0, self.state.mode)

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
        self.mappings = {k: v for k, v in self.mappings.items() if id(v[0]) != addr}

    def read_buffer(self, handle: int, length: int) -> bytes:
        memory, start = self.mappings[self.map_offset(handle)]
        return bytes(memory[start : start + length])

    def close(self) -> None:
        self.calls.append("close")
        self.fd = -1

    # for tests
    def scanout(self) -> np.ndarray:
        """The bytes of the framebuffer on the CRTC, (height, width * Bpp)."""
        fb = self.state.fb_id
        w, h, code, handle, pitch = self.fbs[fb]
        memory, start = self.mappings[self.map_offset(handle)]
        bpp = 2 if code == "RG16" else 4
        rows = np.frombuffer(memory, np.uint8, count=pitch * h, offset=start).reshape(h, pitch)
        return rows[:, : w * bpp]

    def fourcc_on_screen(self) -> str:
        return self.fbs[self.state.fb_id][2]


__all__ = ["MODES", "FakeCard", "fourcc_name", "make_mode"]
