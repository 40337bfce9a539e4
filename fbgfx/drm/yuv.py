"""YUV pictures for video planes: NV12 and YUV420 (fourcc ``YU12``) framebuffers in one
dumb buffer each, and which of them a video plane uses.

A plane that lists NV12 or YU12 scans out video in the decoder's own 4:2:0 YUV: the
frame's planes are written into the buffer's planes (libswscale, at the shown size,
:class:`fbgfx.video._scale.YuvWriter`) without the RGB step a display format needs, and the
display engine converts to RGB as it scans out. :func:`choose_yuv` picks the format
from what the plane lists and what the decoder gives; :class:`YuvBuffer` is one such
picture, its planes laid out one after the other in one dumb buffer (the Y plane, then
NV12's interleaved CbCr or YU12's Cb and Cr) behind a framebuffer made with one handle
and an offset and pitch per plane (``ADDFB2``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .card import CardLike

__all__ = ["YUV420_DECODED", "YUV_FORMATS", "YuvBuffer", "choose_yuv"]

#: The YUV plane formats fbgfx writes: fourcc -> FFmpeg's pixel format of the same layout.
YUV_FORMATS = {"NV12": "nv12", "YU12": "yuv420p"}
#: Decoder formats that are 4:2:0 YUV of 8 bits, and the plane format of their layout
#: (full-range ``yuvj420p`` included: its levels are brought to the video range on the way).
YUV420_DECODED = {"yuv420p": "YU12", "yuvj420p": "YU12", "nv12": "NV12", "nv21": "NV12"}
# Y at 16, Cb and Cr at 128: black in the video range.
_BLACK_Y, _BLACK_C = 16, 128


def choose_yuv(plane_formats: Iterable[str], decoder_format: str) -> tuple[str | None, str]:
    """The YUV format a video plane shows a decoder's frames in, or None (RGB) and why.

    The plane's YUV format of the decoder's own layout comes first (the frame's planes
    are copied at the shown size); else another 4:2:0 format the plane lists
    (libswscale moves the chroma samples; still no RGB step).

    Args:
        plane_formats: The fourcc codes the plane lists (``PlaneInfo.formats``).
        decoder_format: FFmpeg's name of the decoded frames' format (``"yuv420p"``).
    """
    listed = set(plane_formats)
    offered = [code for code in YUV_FORMATS if code in listed]
    if not offered:
        return None, "the plane lists no NV12 or YUV420 (YU12)"
    own = YUV420_DECODED.get(decoder_format)
    if own is None:
        return None, f"the decoder gives {decoder_format}, not 8-bit 4:2:0 YUV"
    return (own if own in offered else offered[0]), ""


class YuvBuffer:
    """One NV12 or YU12 picture: a dumb buffer holding its planes, a framebuffer of it,
    and its mapping.

    Args:
        card: The card.
        width, height: The picture's size (even: 4:2:0 halves both for the chroma).
        code: ``"NV12"`` or ``"YU12"``.

    Attributes:
        fb_id: The framebuffer, for a plane's ``FB_ID``.
        pitch: Bytes a row of the Y plane (NV12's CbCr rows too; YU12's Cb and Cr rows
            are half of it).

    Raises:
        ValueError: An odd size or a format that is not NV12 or YU12.
        FramebufferError: The driver refused the buffer or the framebuffer.
    """

    def __init__(self, card: CardLike, width: int, height: int, code: str) -> None:
        if code not in YUV_FORMATS:
            raise ValueError(f"a YUV picture is NV12 or YU12, not {code!r}")
        if width <= 0 or height <= 0 or width % 2 or height % 2:
            raise ValueError(f"a 4:2:0 picture needs an even size, not {width}x{height}")
        self.card, self.width, self.height, self.code = card, width, height, code
        self.fb_id = self.handle = self.addr = 0
        self.memory: Any = None
        # The Y rows, then half as many rows of chroma at the same pitch (NV12's CbCr
        # pairs; YU12's Cb rows then Cr rows, each half the pitch): 1.5 bytes a pixel.
        self.handle, self.pitch, self.size = card.create_dumb(width, height * 3 // 2, 8)
        try:
            chroma = self.pitch * height
            if code == "NV12":
                self.layout = [(self.pitch, 0, height), (self.pitch, chroma, height // 2)]
            else:
                half = self.pitch // 2
                self.layout = [
                    (self.pitch, 0, height),
                    (half, chroma, height // 2),
                    (half, chroma + half * height // 2, height // 2),
                ]
            planes = [(pitch, offset) for pitch, offset, _ in self.layout]
            self.fb_id = card.add_fb2_planar(width, height, code, self.handle, planes)
            self.memory, self.addr = card.map_pages([card.map_offset(self.handle)], self.size)
        except BaseException:
            self.free()
            raise

    def planes(self) -> list[np.ndarray]:
        """The picture's planes as uint8 (rows, bytes) views: Y and CbCr (NV12), or Y,
        Cb and Cr (YU12)."""
        raw = np.frombuffer(self.memory, np.uint8, count=self.size)
        views = []
        for i, (pitch, offset, rows) in enumerate(self.layout):
            width = self.width if i == 0 or self.code == "NV12" else self.width // 2
            views.append(raw[offset : offset + pitch * rows].reshape(rows, pitch)[:, :width])
        return views

    def black(self) -> None:
        """Make the picture black (Y 16, Cb and Cr 128: the video range)."""
        for i, plane in enumerate(self.planes()):
            plane[...] = _BLACK_Y if i == 0 else _BLACK_C

    def free(self) -> None:
        """Unmap, remove the framebuffer and free the buffer; safe twice."""
        card = self.card
        if self.addr:
            card.detach(self.addr, self.size)
            self.addr, self.memory = 0, None
        if self.fb_id:
            card.rm_fb(self.fb_id)
            self.fb_id = 0
        if self.handle:
            card.destroy_dumb(self.handle)
            self.handle = 0
