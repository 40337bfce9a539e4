"""What a CRTC shows with its planes: every active plane's framebuffer read through
``GETFB2`` and composed as the display engine composes them.

:func:`compose_planes` is what :func:`fbgfx.drm.read_scanout` (``fbgfx grab``, the
streaming server) adds to the primary plane's picture: the overlay and cursor planes
on the same CRTC, in the display's stacking order (``zpos`` where the driver has it,
else primary, overlays by id, cursor), each at its ``CRTC_X``/``CRTC_Y`` from its
``SRC`` rectangle. Opaque formats replace what is below; ``AR24``/``AB24`` are
blended with premultiplied "over" (what a plane without a ``pixel blend mode``
property, or with "Pre-multiplied", does). Reading the planes' positions needs the
atomic client capability on the reading descriptor (it makes nobody master).
"""

from __future__ import annotations

import numpy as np

from .._ffi import lib
from .._screen.compose import blend_premultiplied
from ..pixelformat import PixelFormat
from .atomic import PLANE_TYPES, Atomic
from .card import ALPHA_ALIASES, BY_FOURCC, FOURCC_FORMATS, Card

__all__ = ["compose_planes", "read_fb"]

_ORDER = {"primary": 0, "overlay": 1, "cursor": 2}


def read_fb(card: Card, fb_id: int) -> tuple[str, np.ndarray] | None:
    """A framebuffer's fourcc and its whole picture as (height, width) native pixels
    (uint32 or uint16), or None when it is not a format read here or the kernel gave
    no handle."""
    info = card.get_fb(fb_id)
    if not info.handle:
        return None
    try:
        code = info.fourcc
        name = BY_FOURCC.get(ALPHA_ALIASES.get(code, code))
        if name is None or FOURCC_FORMATS[name][1] not in (16, 32):
            return None
        bpp = FOURCC_FORMATS[name][1]
        data = card.read_buffer(info.handle, info.offset + info.pitch * info.height)
    finally:
        card.gem_close(info.handle)
    rows = np.frombuffer(data, np.uint8, count=info.pitch * info.height, offset=info.offset)
    rows = rows.reshape(info.height, info.pitch)[:, : info.width * bpp // 8]
    return code, np.ascontiguousarray(rows).view("<u4" if bpp == 32 else "<u2")


def compose_planes(card: Card, crtc_id: int, name: str, base: np.ndarray, primary_fb: int) -> np.ndarray:
    """``base`` (the primary plane's picture in format ``name``, the CRTC's size) with
    the CRTC's other active planes composed over it; ``base`` itself when there are
    none (or their positions cannot be read)."""
    if not card.set_client_cap(lib.DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) or not card.set_client_cap(
        lib.DRM_CLIENT_CAP_ATOMIC, 1
    ):
        return base
    atomic = Atomic(card)
    layers = []
    for plane in card.planes():
        try:
            vals = atomic.values(plane.id, lib.DRM_MODE_OBJECT_PLANE)
        except OSError:
            continue
        fb_id = vals.get("FB_ID", 0)
        if vals.get("CRTC_ID") != crtc_id or not fb_id or fb_id == primary_fb:
            continue
        kind = PLANE_TYPES.get(vals.get("type", 0), "overlay")
        order = vals.get("zpos", _ORDER[kind] * 1000)
        layers.append((order, plane.id, fb_id, vals))
    if not layers:
        return base
    fmt = PixelFormat.from_name(name)
    rgb = fmt.unpack(base)
    height, width = base.shape[:2]
    for _order, _plane, fb_id, vals in sorted(layers):
        read = read_fb(card, fb_id)
        if read is None:
            continue
        code, pixels = read
        sx, sy = vals.get("SRC_X", 0) >> 16, vals.get("SRC_Y", 0) >> 16
        sw, sh = vals.get("SRC_W", 0) >> 16, vals.get("SRC_H", 0) >> 16
        cx, cy = _signed(vals.get("CRTC_X", 0)), _signed(vals.get("CRTC_Y", 0))
        w, h = min(sw, vals.get("CRTC_W", sw)), min(sh, vals.get("CRTC_H", sh))  # no scaling read here
        x0, y0, x1, y1 = max(cx, 0), max(cy, 0), min(cx + w, width), min(cy + h, height)
        if x0 >= x1 or y0 >= y1:
            continue
        src = pixels[sy + y0 - cy : sy + y1 - cy, sx + x0 - cx : sx + x1 - cx]
        dst = rgb[y0:y1, x0:x1]
        if code in ALPHA_ALIASES and src.dtype == np.dtype("<u4"):
            blend_premultiplied(dst, src.astype(np.uint32))
        else:
            plane_fmt = PixelFormat.from_name(BY_FOURCC[ALPHA_ALIASES.get(code, code)])
            dst[...] = plane_fmt.unpack(src)
    out = np.empty_like(base)
    out[...] = fmt.pack(rgb)
    return out


def _signed(value: int) -> int:
    """A 32-bit CRTC_X/CRTC_Y value as the signed number it is."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value
