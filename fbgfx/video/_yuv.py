"""Video frames on a display plane in YUV: a layer's plane that lists NV12 or YUV420
(``YU12``) shows decoded 4:2:0 frames as they are, the display engine converting them
to RGB as it scans out, with no RGB step in fbgfx.

:class:`YuvPainter` stands in for the player's RGB painter when the play is in a layer
on a plane (:meth:`fbgfx.Layer.play`): at the first video frame it asks
:func:`fbgfx.drm.yuv.choose_yuv` for a format from what the plane lists and what the
decoder gives, and the plane (a :class:`YuvTarget`) whether it takes that format in a
``TEST_ONLY`` commit; then each frame is written into the plane's YUV buffer not on
screen (:class:`~fbgfx.video._scale.YuvWriter`) and that buffer flipped in. Everything
else (animations, raw RGB frames, a cut or turned picture, odd positions, a plane
without YUV) goes to the RGB painter, and ``reason`` says why. When the play ends the
last frame is put into the layer's RGB picture once, so the layer holds what it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..drm.yuv import YUV420_DECODED, YUV_FORMATS, choose_yuv
from ._scale import YuvWriter

if TYPE_CHECKING:
    from ._frames import Frame, FramePass

__all__ = ["YuvPainter", "YuvTarget"]

Box = tuple[int, int, int, int]
#: The player's layout rule: (width, height, box, fit) -> (scaled size, shown rectangle, crop offset).
Layout = Callable[[int, int, Box, str], tuple[tuple[int, int], Box, tuple[int, int]]]


class YuvTarget(Protocol):
    """A plane that can show YUV pictures (``fbgfx.drm.planes.YuvVideo``)."""

    formats: tuple[str, ...]

    def begin(self, code: str, bt709: bool) -> str:
        """Show black YUV pictures of format ``code`` on the plane; "" or why not."""
        ...

    def back(self) -> tuple[int, list[np.ndarray]]:
        """(index, planes) of the picture not on screen, once nothing reads it."""
        ...

    def flip(self) -> None:
        """Show the picture :meth:`back` gave."""
        ...

    def end(self) -> None:
        """Show the layer's RGB picture on the plane again and free the YUV pictures."""
        ...


class YuvPainter:
    """The player's painter for a layer on a plane: video frames in YUV where the plane
    takes them, everything else through ``rgb`` (the player's RGB painter).

    Args:
        rgb: The RGB painter (``prepare``, ``show``, ``close``).
        target: The plane.
        box: Where the video goes in the layer (x0, y0, x1, y1).
        fit: The play's fit.
        layout: The player's layout rule (:data:`Layout`).
    """

    def __init__(self, rgb: Any, target: YuvTarget, box: Box, fit: str, layout: Layout) -> None:
        self.rgb, self.target, self.box, self.fit, self.layout = rgb, target, box, fit, layout
        self.code: str | None = None  # the plane's YUV format while on
        self.used: str | None = None  # the YUV format frames went to the plane in
        self.reason = ""  # why frames go through RGB ("" while undecided or in YUV)
        self._decided = False
        self._yuv_now = False  # the prepared frame is YUV
        self._on_screen = False  # a YUV picture is what the plane shows
        self._writers: dict[tuple[int, int, int, str], tuple[YuvWriter, tuple[int, int, int, int]]] = {}
        self._last: tuple[Frame, FramePass | None, float] | None = None

    def prepare(self, frame: Frame, pass_: FramePass | None, when: float) -> None:
        """Make ``frame`` the next picture: in the plane's YUV buffer, or through RGB."""
        video = pass_.video if pass_ is not None else None
        if frame.kind == "video" and video is not None and self._takes(frame, video):
            index, planes = self.target.back()
            self._writer(index, planes, video.width, video.height)(frame.data)
            self._yuv_now = True
            self._last = (frame, pass_, when)
            return
        self._yuv_now = False
        self.rgb.prepare(frame, pass_, when)

    def show(self) -> None:
        """Show the prepared picture."""
        if self._yuv_now:
            self.target.flip()
            self._on_screen = True
            return
        self.rgb.show()
        self._leave_yuv()

    def close(self) -> None:
        """The last YUV frame into the layer's RGB picture, the YUV buffers freed."""
        try:
            if self._on_screen and self._last is not None:
                self.rgb.prepare(*self._last)
                self.rgb.show()
            self._leave_yuv()
        finally:
            for writer, _ in self._writers.values():
                writer.close()
            self._writers.clear()
            self.rgb.close()

    def _leave_yuv(self) -> None:
        """The plane back on the layer's RGB picture, the YUV pictures freed (a later
        video of the playlist stays in RGB)."""
        if self.code is not None:
            self.code, self._on_screen = None, False
            self.target.end()

    def _takes(self, frame: Frame, video: Any) -> bool:
        """Whether ``frame`` goes to the plane in YUV (deciding at the first video frame)."""
        if not self._decided:
            self._decided = True
            code, why = choose_yuv(self.target.formats, frame.data.format.name)
            if code is not None:
                why = self._fits(video) or self.target.begin(code, _bt709(frame.data))
            if why:
                self.reason = why
                return False
            self.code = self.used = code
        if self.code is None:
            return False
        if frame.data.format.name not in YUV420_DECODED or self._fits(video):
            return False  # a later file of the playlist that does not fit: RGB for it
        return True

    def _fits(self, video: Any) -> str:
        """Why ``video`` cannot be written into the YUV picture as it is shown ("" when it can)."""
        if video.rotation % 360:
            return "the video is turned (its display matrix): through RGB"
        _, rect, crop = self.layout(video.width, video.height, self.box, self.fit)
        if crop != (0, 0):
            return f"fit={self.fit!r} cuts the picture: through RGB"
        if any(v % 2 for v in rect):
            return "the picture's edges fall on odd pixels (4:2:0 YUV halves them): through RGB"
        return ""

    def _writer(self, index: int, planes: list[np.ndarray], width: int, height: int) -> YuvWriter:
        assert self.code is not None
        key = (index, width, height, self.code)
        made = self._writers.get(key)
        if made is None:
            _, rect, _ = self.layout(width, height, self.box, self.fit)
            x0, y0, x1, y1 = rect
            for i, plane in enumerate(planes):  # the bars around the picture: black
                plane[...] = 16 if i == 0 else 128
            views = [planes[0][y0:y1, x0:x1]]
            if self.code == "NV12":
                views.append(planes[1][y0 // 2 : y1 // 2, x0:x1])
            else:
                views += [p[y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] for p in planes[1:]]
            made = self._writers[key] = (YuvWriter(views, YUV_FORMATS[self.code]), rect)
        return made[0]


def _bt709(frame: Any) -> bool:
    """The frame's YUV matrix is BT.709 (else BT.601, as FFmpeg assumes when unstated)."""
    return getattr(frame, "colorspace", None) == 1
