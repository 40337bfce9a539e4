"""Text masks composed from cached glyphs, the same masks Pillow renders.

A dashboard draws readings that change every frame ("  12.345 V"): a cache of whole
strings never hits, and rendering each string through FreeType costs more than the
rest of the drawing. Pillow's renderer (``_imagingft.c``, ``font_render``) renders
every glyph at the pen position rounded to a whole pixel, so a glyph's bitmap does
not depend on where it lands: this module renders each character once (through
Pillow, so hinting and rasterisation are Pillow's) and composes a line's mask from
those bitmaps with Pillow's arithmetic: pen positions in 26.6 fixed point from the
fractional start, ``PIXEL()`` rounding, and the "over" rule where glyphs overlap
(``native/glyph.c``).

Shaping is the part that is not per glyph: kerning, ligatures and mark positioning
change glyphs with their neighbours. Every pair of neighbouring characters is
therefore checked once per font: Pillow renders the pair, and the pair is used only
if the composed mask is the same, offsets included. Lines with any other feature
(stroke, direction, OpenType features, language, another anchor, a negative
fractional position) take Pillow's renderer, as do variable fonts (their glyphs change
with the axes) and fonts that are not FreeType fonts.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import PIL
from PIL import Image, ImageFont

from .._ffi import ffi, lib

__all__ = ["compose"]

#: (bitmap or None, its cdata pointer, x and y of its top-left pixel from the pen origin
#: on the baseline, advance in 26.6 fixed point)
Glyph = tuple[Optional[np.ndarray], Any, int, int, int]
#: (mask, x, y): a line's coverage and where its top-left pixel goes
Placed = tuple[np.ndarray, int, int]

_MAX_CHARS = 4096  # per font: beyond this a font's caches start again
# Pillow before 11 places a line's glyphs by other rules (measured: 10.4 and 9.4, the
# latter Raspberry Pi OS's, differ by whole glyph columns); its renderer draws every line.
_PILLOW_PLACES_GLYPHS = tuple(int(p) for p in PIL.__version__.split(".")[:2]) >= (11, 0)
_fonts: dict[Any, _FontGlyphs | None] = {}


def _pixel(v: int) -> int:
    """Pillow's PIXEL(): 26.6 fixed point to the nearest whole pixel, halves up."""
    return ((v + 32) & -64) >> 6


def _c_round(v: float) -> int:
    """C's round(): halves away from zero (Python's round() goes to even)."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def _mask_of(core: Any) -> np.ndarray:
    # Image._new wraps Pillow's C image (what ImageFont's getmask returns) without a
    # copy; Pillow has no public way to turn a core image into an Image.
    return np.ascontiguousarray(np.asarray(Image.Image()._new(core)), np.uint8)  # noqa: SLF001


class _FontGlyphs:
    """The glyphs of one font, and which neighbouring pairs compose as Pillow shapes them."""

    def __init__(self, font: ImageFont.FreeTypeFont) -> None:
        self.font = font
        self.ascent = int(font.getmetrics()[0])
        self.glyphs: dict[str, Glyph] = {}
        self.pairs: dict[str, bool] = {}

    def glyph(self, c: str) -> Glyph:
        g = self.glyphs.get(c)
        if g is not None:
            return g
        if len(self.glyphs) > _MAX_CHARS:
            self.glyphs.clear()
            self.pairs.clear()
        core, (ox, oy) = self.font.getmask2(c, "L", anchor="ls")
        img: np.ndarray | None = _mask_of(core)
        advance = self.font.getlength(c, "L") * 64
        if advance != int(advance):
            raise _Unusable  # not a whole 26.6 value: no guessing
        if img is None or not img.any():
            img = None
        g = (img, None if img is None else ffi.from_buffer("uint8_t[]", img), int(ox), int(oy), int(advance))
        self.glyphs[c] = g
        return g

    def pair_ok(self, pair: str) -> bool:
        """True when Pillow lays out and renders ``pair`` exactly as two composed glyphs:
        the same advance (no kerning) and the same pixels from two start fractions (an
        offset smaller than a pixel shows at one of them)."""
        ok = self.pairs.get(pair)
        if ok is None:
            a, b = self.glyph(pair[0]), self.glyph(pair[1])
            ok = self.font.getlength(pair, "L") * 64 == a[4] + b[4]
            for start in ((0.0, 0.0), (0.5, 0.5)):
                if not ok:
                    break
                core, (ox, oy) = self.font.getmask2(pair, "L", anchor="ls", start=start)
                ours = self.line(pair, 0, 0, _c_round(start[0] * 64), _c_round(start[1] * 64), check=False)
                ok = _same(_mask_of(core), int(ox), int(oy), ours)
            self.pairs[pair] = ok
        return ok

    def line(self, text: str, x: int, y: int, rfx: int, rfy: int, check: bool = True) -> Placed | None:
        """The mask of ``text`` with its pen origin at whole pixel (x, y) on the baseline
        and the start fraction (rfx, rfy) in 1/64 pixel; None if a pair is unusable."""
        pieces = []
        pen = rfx
        prev = ""
        x0 = y0 = 1 << 30
        x1 = y1 = -(1 << 30)
        glyphs = self.glyphs
        for c in text:
            g = glyphs.get(c) or self.glyph(c)
            if check and prev and not self.pairs.get(prev + c, False) and not self.pair_ok(prev + c):
                return None
            img = g[0]
            if img is not None:
                gx = _pixel(pen) + g[2]
                gy = g[3]
                h, w = img.shape
                pieces.append((g[1], w, h, gx, gy))
                x0, y0 = min(x0, gx), min(y0, gy)
                x1, y1 = max(x1, gx + w), max(y1, gy + h)
            pen += g[4]
            prev = c
        if not pieces:
            return np.zeros((0, 0), np.uint8), x, y
        w, h = x1 - x0, y1 - y0
        mask = np.zeros((h, w), np.uint8)
        dst = ffi.from_buffer("uint8_t[]", mask)
        compose_one = lib.glyph_compose
        for src, sw, sh, gx, gy in pieces:
            compose_one(dst, w, w, h, src, sw, sw, sh, gx - x0, gy - y0)
        return mask, x + x0, y - _pixel(-rfy) + y0


class _Unusable(Exception):
    """The font's glyphs cannot be composed exactly; its lines go to Pillow."""


def _same(pillow: np.ndarray, ox: int, oy: int, ours: Placed | None) -> bool:
    """Whether two positioned masks put the same coverage on the same pixels."""
    if ours is None:
        return False
    mask, x, y = ours
    ys, xs = np.nonzero(pillow)
    if len(xs) == 0:
        return not mask.any()
    top, left = int(ys.min()), int(xs.min())
    trimmed = pillow[top : int(ys.max()) + 1, left : int(xs.max()) + 1]
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return False
    t2, l2 = int(ys.min()), int(xs.min())
    mine = mask[t2 : int(ys.max()) + 1, l2 : int(xs.max()) + 1]
    return (ox + left, oy + top) == (x + l2, y + t2) and mine.shape == trimmed.shape and bool((mine == trimmed).all())


def _glyphs_of(font: Any) -> _FontGlyphs | None:
    try:
        return _fonts[font]
    except KeyError:
        pass
    usable: _FontGlyphs | None = None
    if type(font) is ImageFont.FreeTypeFont:
        try:
            font.get_variation_names()
        except (OSError, NotImplementedError):  # not a variable font, or FreeType without variations
            usable = _FontGlyphs(font)
    if len(_fonts) > 64:
        _fonts.clear()
    _fonts[font] = usable
    return usable


def compose(font: Any, text: Any, x: float, y: float, anchor: str | None) -> Placed | None:
    """The mask Pillow's ``getmask2(text, "L", anchor=anchor, start=...)`` gives, placed
    where ``ImageDraw.text`` puts it for a line at (x, y); None when this line needs
    Pillow's renderer (see the module docstring).

    Args:
        font: The font.
        text: One line of text.
        x, y: The line's position (finite).
        anchor: None, ``"la"`` or ``"ls"`` (others take Pillow's renderer).
    """
    if type(text) is not str or not text or (anchor is not None and anchor not in ("la", "ls")):
        return None
    if not _PILLOW_PLACES_GLYPHS:
        return None
    fx, fy = math.modf(x)[0], math.modf(y)[0]
    if fx < 0 or fy < 0:
        return None  # Pillow's mask clips such a start on its left or bottom edge
    g = _glyphs_of(font)
    if g is None:
        return None
    ascent = 0 if anchor == "ls" else g.ascent
    try:
        return g.line(text, int(x), int(y) + ascent, _c_round(fx * 64), _c_round(fy * 64))
    except _Unusable:
        _fonts[font] = None
        return None
