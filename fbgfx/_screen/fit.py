"""How a picture of another size is placed on a screen: the ``fit`` modes that
:meth:`fbgfx.Screen.present` and video playing take, and the scaling and cropping."""

from __future__ import annotations

import numpy as np
from PIL import Image

__all__ = ["FITS", "place"]

#: How :meth:`Screen.present` places an image of another size.
FITS = ("fit", "fill", "stretch", "center")


def place(rgb: np.ndarray, width: int, height: int, fit: str) -> tuple[np.ndarray, int, int]:
    """Scale and crop a picture for a width x height screen; returns it and where it goes."""
    h, w = rgb.shape[:2]
    if fit == "stretch":
        size, box = (width, height), (0, 0, w, h)
    elif fit == "center":
        size, box = (w, h), None
    else:
        scale = (min if fit == "fit" else max)(width / w, height / h)
        if fit == "fill":
            # Crop the source to what shows before scaling, so nothing is scaled twice.
            cw, ch = min(w, width / scale), min(h, height / scale)
            left, top = (w - cw) / 2, (h - ch) / 2
            size, box = (width, height), (left, top, left + cw, top + ch)
        else:
            size = (max(1, min(width, round(w * scale))), max(1, min(height, round(h * scale))))
            box = (0, 0, w, h)
    if box is not None and (size != (w, h) or box != (0, 0, w, h)):
        rgb = np.asarray(Image.fromarray(np.ascontiguousarray(rgb)).resize(size, Image.Resampling.BILINEAR, box=box))
    h, w = rgb.shape[:2]
    x, y = (width - w) // 2, (height - h) // 2
    if x < 0 or y < 0:  # "center" of a larger picture: crop the middle
        cx, cy = max(0, -x), max(0, -y)
        rgb = rgb[cy : cy + min(h, height), cx : cx + min(w, width)]
        x, y = max(x, 0), max(y, 0)
    return rgb, x, y
