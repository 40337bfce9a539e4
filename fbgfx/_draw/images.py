"""Surface's image methods: blitting PIL images, arrays and other surfaces.

:class:`ImageDrawing` is a base of :class:`fbgfx.Surface`: it finds the pixels of any
accepted source, crops, rotates and scales them, and converts them into the Surface's
format where they land.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from .. import convert
from .geometry import Coords, int_box
from .target import Mixin

__all__ = ["ImageDrawing"]


class ImageDrawing(Mixin):
    """``blit``."""

    def blit(
        self,
        source: Any,
        xy: Sequence[float] = (0, 0),
        *,
        source_rect: Coords | None = None,
        size: Sequence[float] | None = None,
        resample: int = Image.Resampling.BILINEAR,
        rotate: int = 0,
        alpha: bool = True,
    ) -> None:
        """Copy an image onto the surface.

        Args:
            source: A PIL image (any mode), a NumPy array ((h, w, 3) RGB or (h, w, 4)
                RGBA uint8, (h, w) gray uint8, or native pixels of this surface's
                format), or another Surface.
            xy: Where the top-left corner goes (may be off-surface; it is clipped).
            source_rect: (x0, y0, x1, y1), exclusive end: the part of the source to use.
            size: (width, height) to scale to, after rotation. When the scaled image
                would be far larger than the surface (over 4 times its pixels),
                only the part that lands on the surface is scaled, so any size
                costs memory and time for the visible part only; its pixels may then
                differ from scaling the whole image by a few levels.
            resample: Pillow resampling filter used when scaling.
            rotate: 0, 90, 180 or 270 degrees counter-clockwise (as ``Image.rotate``).
            alpha: Blend sources that have alpha (RGBA); False copies their colour.

        Raises:
            ValueError: An empty image (no pixels), a position or size that is not
                finite, a bad rotation.
            TypeError: A source of another type.
        """
        if rotate not in (0, 90, 180, 270):
            raise ValueError(f"rotate must be 0, 90, 180 or 270, got {rotate!r}")
        dx, dy = (float(v) for v in xy)
        if not (math.isfinite(dx) and math.isfinite(dy)):
            raise ValueError("blit: position must be finite")
        dx, dy = int(dx), int(dy)
        src, native = self._blit_source(source)
        if src.shape[0] == 0 or src.shape[1] == 0:
            raise ValueError(f"blit: the image is empty ({src.shape[1]}x{src.shape[0]} pixels)")
        if source_rect is not None:
            x0, y0, x1, y1 = int_box(source_rect, "source_rect")
            h, w = src.shape[:2]
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
            if x0 >= x1 or y0 >= y1:
                return
            src = src[y0:y1, x0:x1]
        if rotate or size is not None:
            if native:
                src = convert.from_native(src, self.format, palette=self.palette, alpha=self.format.has_alpha)
                native = False
            if rotate:
                src = np.rot90(src, rotate // 90)
            if size is not None:
                try:
                    sw, sh = (int(v) for v in size)
                except (OverflowError, ValueError):
                    raise ValueError(f"blit: size must be two finite numbers, got {size!r}") from None
                if sw <= 0 or sh <= 0:
                    return
                if (sw, sh) != (src.shape[1], src.shape[0]):
                    scaled, dx, dy = self._scaled(src, sw, sh, dx, dy, resample)
                    if scaled is None:
                        return
                    src = scaled
        h, w = src.shape[:2]
        cx0, cy0, cx1, cy1 = self._cbox
        x0, y0, x1, y1 = max(dx, cx0), max(dy, cy0), min(dx + w, cx1), min(dy + h, cy1)
        if x0 >= x1 or y0 >= y1:
            return
        part = src[y0 - dy : y1 - dy, x0 - dx : x1 - dx]
        out = self.array[y0:y1, x0:x1]
        if not self._quiet:
            self._before_write()
        if native:
            out[...] = part
        else:
            convert.to_native(part, self.format, out, palette=self.palette, blend=alpha)
        self._notify(x0, y0, x1, y1)

    def _scaled(
        self, rgb: np.ndarray, sw: int, sh: int, dx: int, dy: int, resample: int
    ) -> tuple[np.ndarray | None, int, int]:
        """``rgb`` scaled to sw x sh and placed at (dx, dy): (pixels, x, y), or None
        when nothing lands inside the clip rectangle.

        A scaled image much larger than the surface is scaled only where it lands
        (Pillow's ``resize(box=...)``), so a huge ``size`` costs what the visible part costs.
        """
        im = Image.fromarray(np.ascontiguousarray(rgb))
        cx0, cy0, cx1, cy1 = self._cbox
        if sw * sh <= max(4 * self.width * self.height, 1 << 16):
            return np.asarray(im.resize((sw, sh), resample)), dx, dy
        x0, y0, x1, y1 = max(dx, cx0), max(dy, cy0), min(dx + sw, cx1), min(dy + sh, cy1)
        if x0 >= x1 or y0 >= y1:
            return None, dx, dy
        h, w = rgb.shape[:2]
        box = ((x0 - dx) * w / sw, (y0 - dy) * h / sh, (x1 - dx) * w / sw, (y1 - dy) * h / sh)
        return np.asarray(im.resize((x1 - x0, y1 - y0), resample, box=box)), x0, y0

    def _blit_source(self, source: Any) -> tuple[np.ndarray, bool]:
        """(pixels, True when they are native pixels of this surface's format, False for
        RGB(A) uint8) for any accepted source."""
        if isinstance(source, ImageDrawing):
            if source.format == self.format and (
                not self.format.indexed or np.array_equal(source.palette, self.palette)
            ):
                return source.array, True
            rgb = convert.from_native(
                source.array, source.format, palette=source.palette, alpha=source.format.has_alpha
            )
            return rgb, False
        if isinstance(source, np.ndarray):
            fmt = self.format
            is_rgb = source.dtype == np.uint8 and source.ndim == 3 and source.shape[2] in (3, 4)
            if not is_rgb and source.dtype == fmt.dtype and source.ndim >= 2 and \
                    source.shape == fmt.array_shape(source.shape[0], source.shape[1]):  # fmt: skip
                return source, True
        return convert.as_rgb(source), False
