"""Surface's text methods: ``ImageDraw``'s text API drawn into native pixels.

:class:`TextDrawing` is a base of :class:`fbgfx.Surface`: laying out runs of glyphs is
:mod:`fbgfx.text`'s work, blending each run's coverage mask the Surface's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from .. import text as _text
from ..color import ColorLike
from ..text import Font, Text, TextOptions
from .target import Mixin

__all__ = ["TextDrawing"]

Fill = Optional[ColorLike]
_WHITE = "white"


class TextDrawing(Mixin):
    """``text``, ``multiline_text``, ``textbbox``, ``multiline_textbbox`` and ``textlength``."""

    def text(
        self,
        xy: Sequence[float],
        text: Text,
        fill: Fill = None,
        font: Font | None = None,
        anchor: str | None = None,
        spacing: float = 4,
        align: str = "left",
        direction: str | None = None,
        features: Sequence[str] | None = None,
        language: str | None = None,
        stroke_width: float = 0,
        stroke_fill: Fill = None,
        embedded_color: bool = False,
        *,
        font_size: float | None = None,
    ) -> None:
        """Draw text (``ImageDraw.text``), antialiased and blended in the native format.

        Args:
            xy: Anchor position.
            text: A string; newlines make multiline text.
            fill: Colour (white by default).
            font: A font from :func:`fbgfx.font` or Pillow; Pillow's default when None.
            anchor, spacing, align, direction, features, language, stroke_width, stroke_fill: As in Pillow.
            font_size: Size of the default font when ``font`` is None.
            embedded_color: Accepted for compatibility; colour (emoji) glyphs are
                drawn in ``fill`` like any other glyph.

        Raises:
            ValueError: A non-finite position, a bad anchor or alignment.
        """
        del embedded_color  # Pillow's; colour glyphs are drawn in fill like any other
        fnt = _text.font_or_default(font, font_size)
        ink = self._ink(_WHITE if fill is None else fill)
        x, y = float(xy[0]), float(xy[1])
        options = TextOptions(anchor, spacing, align, direction, features, language, stroke_width)
        if stroke_width:
            stroke_ink = ink if stroke_fill is None else self._ink(stroke_fill)
            for run in _text.layout(fnt, (x, y), text, options):
                self._paint_mask(run.mask, run.x, run.y, stroke_ink, self._boxes)
            if stroke_ink == ink:
                return
            options = options._replace(stroke_width=0)
        for run in _text.layout(fnt, (x, y), text, options):
            # cached runs are known to have ink; only a clipped part may be empty
            self._paint_mask(run.mask, run.x, run.y, ink, self._boxes)

    # Pillow's multiline_text takes what text takes and draws the same (text lays out
    # newlines itself): one function under both names keeps the signatures equal and
    # costs no forwarding call.
    multiline_text = text

    def textbbox(
        self,
        xy: Sequence[float],
        text: Text,
        font: Font | None = None,
        anchor: str | None = None,
        spacing: float = 4,
        align: str = "left",
        direction: str | None = None,
        features: Sequence[str] | None = None,
        language: str | None = None,
        stroke_width: float = 0,
        embedded_color: bool = False,
        *,
        font_size: float | None = None,
    ) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of ``text`` drawn at ``xy`` (``ImageDraw.textbbox``)."""
        del embedded_color  # Pillow's; it changes no size
        fnt = _text.font_or_default(font, font_size)
        options = TextOptions(anchor, spacing, align, direction, features, language, stroke_width)
        return _text.bbox(fnt, xy, text, options)

    # Likewise Pillow's multiline_textbbox: textbbox measures several lines itself.
    multiline_textbbox = textbbox

    def textlength(
        self,
        text: Text,
        font: Font | None = None,
        direction: str | None = None,
        features: Sequence[str] | None = None,
        language: str | None = None,
        embedded_color: bool = False,
        *,
        font_size: float | None = None,
    ) -> float:
        """Advance width of one line of text in pixels (``ImageDraw.textlength``)."""
        del embedded_color  # Pillow's; it changes no width
        fnt = _text.font_or_default(font, font_size)
        return _text.length(fnt, text, direction, features, language)
