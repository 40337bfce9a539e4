"""Fonts and text layout for :class:`fbgfx.Surface`.

Glyphs are rendered by Pillow (FreeType for TrueType/OpenType fonts, Pillow's own
bitmap fonts otherwise) exactly as ``ImageDraw.text`` renders them, then blended into
the native pixel format as antialiased coverage masks. Rendered runs are kept in a
small cache, because UIs draw the same labels frame after frame.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

import numpy as np
import PIL
from PIL import Image, ImageFont

from ._draw import glyphs

__all__ = ["TextOptions", "default_font", "font"]

#: A Pillow font (FreeType, bitmap or transposed). Any: Pillow before 10 has no types.
Font = Any
#: Text as Pillow takes it.
Text = Union[str, bytes]
#: (left, top, right, bottom)
Box = tuple[float, float, float, float]

_CACHE_SIZE = 512


def font(path: str | os.PathLike[str] | None = None, size: float = 10, *, index: int = 0, encoding: str = "") -> Font:
    """Load a font for :meth:`Surface.text`.

    Args:
        path: A TrueType/OpenType file (``.ttf``, ``.otf``, ``.ttc``...), a Pillow
            bitmap font (``.pil``, with its ``.pbm``/``.png`` beside it), or None for
            the scalable font that Pillow ships (Pillow 10.1 or newer; with older
            Pillow, DejaVu Sans from fonts-dejavu-core).
        size: Size in pixels (ignored for bitmap fonts).
        index: Face index inside a font collection.
        encoding: FreeType encoding, as :func:`PIL.ImageFont.truetype` takes it.

    Returns:
        A Pillow font object (usable with ``PIL.ImageDraw`` too).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        OSError: The file is not a font Pillow can read, or (``path`` None with
            Pillow < 10.1) DejaVu Sans is not installed.
        ValueError: ``size`` is not a positive finite number.
    """
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size <= 0:
        raise ValueError(f"font size must be a positive number, got {size!r}")
    if path is None:
        return _default(float(size))
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"font file not found: {path}")
    if path.lower().endswith(".pil"):
        return ImageFont.load(path)
    try:
        return ImageFont.truetype(path, size, index=index, encoding=encoding)
    except OSError as e:
        raise OSError(f"cannot read font {path}: {e}") from None


_DEFAULTS: dict[float | None, Font] = {}


# Pillow < 10.1 builds in only a fixed-size bitmap font; a sized default then comes
# from DejaVu Sans, which Debian and Raspberry Pi OS install (fonts-dejavu-core).
_FALLBACK_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",)


def _default(size: float | None) -> Font:
    f = _DEFAULTS.get(size)
    if f is None:
        if size is None:
            f = ImageFont.load_default()
        else:
            try:
                f = ImageFont.load_default(size)
            except TypeError:  # Pillow < 10.1: no size argument
                f = _fallback(size)
        _DEFAULTS[size] = f
    return f


def _fallback(size: float) -> ImageFont.FreeTypeFont:
    for path in _FALLBACK_FONTS:
        if os.path.exists(path):
            # Pillow < 10.1 takes whole-pixel sizes only.
            return ImageFont.truetype(path, max(1, round(size)))
    raise OSError(
        f"fbgfx.font(size=...) needs a scalable font: Pillow {PIL.__version__} builds in none "
        f"(Pillow >= 10.1 does) and DejaVu Sans is not installed; install fonts-dejavu-core, "
        f"or pass a font file: fbgfx.font(path, size)"
    )


def default_font() -> Font:
    """The font ``Surface.text`` uses when none is given: Pillow's ``load_default()``."""
    return _default(None)


def font_or_default(fnt: Font | None, size: float | None) -> Font:
    """``fnt``, else the default font: :func:`default_font`, or at ``size`` when given
    (``font_size`` of the Surface text methods, checked as :func:`font` checks it)."""
    if fnt is not None:
        return fnt
    return default_font() if size is None else font(None, size)


class Run(NamedTuple):
    """One rendered line: a coverage mask and where its top-left pixel goes."""

    mask: np.ndarray
    x: int
    y: int


class TextOptions(NamedTuple):
    """How a text is laid out: the keywords Pillow's ``ImageDraw.text`` and ``textbbox``
    share (Pillow's newer ``ImageText.Text`` keeps them with the text in the same way).

    Attributes:
        anchor: Two letters, horizontal then vertical (``"la"``: left, ascender);
            None for Pillow's default.
        spacing: Pixels between the lines of multiline text.
        align: ``"left"``, ``"center"``, ``"right"`` or ``"justify"`` for multiline text.
        direction, features, language: Text shaping, as Pillow takes them (libraqm).
        stroke_width: Width of the outline drawn around each glyph.
    """

    anchor: str | None = None
    spacing: float = 4
    align: str = "left"
    direction: str | None = None
    features: Sequence[str] | None = None
    language: str | None = None
    stroke_width: float = 0


_PLAIN = TextOptions()


class _Line(NamedTuple):
    x: float
    y: float
    anchor: str
    text: Text


_runs: OrderedDict[tuple[Any, ...], tuple[np.ndarray, int, int]] = OrderedDict()


def _to_array(core: Any) -> np.ndarray:
    # Image._new wraps Pillow's C image (from ImageFont's getmask) without a copy; Pillow
    # has no public way to turn a core image into an Image.
    im = Image.Image()._new(core)  # noqa: SLF001
    a = np.asarray(im)
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    elif im.mode not in ("L", "1"):
        a = np.asarray(im.convert("L"))
    return a


def _render(
    fnt: Font,
    text: Text,
    anchor: str | None,
    start: tuple[float, float],
    stroke_width: float,
    direction: str | None,
    features: tuple[str, ...] | None,
    language: str | None,
) -> tuple[np.ndarray, int, int]:
    key = (fnt, text, anchor, start, stroke_width, direction, features, language)
    hit = _runs.get(key)
    if hit is not None:
        _runs.move_to_end(key)
        return hit
    if isinstance(fnt, ImageFont.FreeTypeFont):
        core, offset = fnt.getmask2(
            text,
            "L",
            direction=direction,
            features=list(features) if features else None,
            language=language,
            stroke_width=stroke_width,
            anchor=anchor,
            start=start,
            # Pillow >= 11.2 strokes the outline filled in (as its ImageDraw.text asks);
            # older Pillow ignores the keyword and so does its ImageDraw.text.
            stroke_filled=True,
        )
        dx, dy = offset
    else:
        try:
            core = fnt.getmask(text, "L", anchor=anchor, start=start)
        except TypeError:
            core = fnt.getmask(text)
        dx = dy = 0
    mask = _to_array(core)
    if not mask.any():
        mask = mask[:0, :0]  # nothing to draw (spaces, empty string)
    hit = (mask, int(dx), int(dy))
    hit[0].setflags(write=False)
    _runs[key] = hit
    if len(_runs) > _CACHE_SIZE:
        _runs.popitem(last=False)
    return hit


def _split(fnt: Font, xy: Sequence[float], text: Text, options: TextOptions) -> list[_Line]:
    """Lines and their positions, as Pillow's ImageDraw.multiline_text places them."""
    anchor, spacing, align, direction, features, language, stroke_width = options
    if anchor is None:
        anchor = "lt" if direction == "ttb" else "la"
    elif not isinstance(anchor, str) or len(anchor) != 2:
        raise ValueError("anchor must be a 2 character string")
    lines: list[Text] = list(text.split("\n")) if isinstance(text, str) else list(text.split(b"\n"))
    if len(lines) == 1:
        return [_Line(xy[0], xy[1], anchor, lines[0])]
    if anchor[1] in "tb" and direction != "ttb":
        raise ValueError("anchor not supported for multiline text")
    if align not in ("left", "center", "right", "justify"):
        raise ValueError('align must be "left", "center", "right" or "justify"')
    feats = list(features) if features else None
    line_spacing = _bbox(fnt, "A", None, direction, feats, language, stroke_width)[3] + stroke_width + spacing
    top = xy[1]
    if direction == "ttb":
        out, left = [], xy[0]
        for line in lines:
            out.append(_Line(left, top, anchor, line))
            left += line_spacing
        return out
    widths = [_length(fnt, line, direction, feats, language) for line in lines]
    max_width = max(widths)
    if anchor[1] == "m":
        top -= (len(lines) - 1) * line_spacing / 2.0
    elif anchor[1] == "d":
        top -= (len(lines) - 1) * line_spacing
    out = []
    for i, line in enumerate(lines):
        left = xy[0]
        diff = max_width - widths[i]
        if align == "center":
            left += diff / 2.0
        elif align == "right":
            left += diff
        if align == "justify" and diff != 0 and i != len(lines) - 1:
            words: list[Text] = list(line.split(" ")) if isinstance(line, str) else list(line.split(b" "))
            if len(words) > 1:
                if anchor[0] == "m":
                    left -= max_width / 2.0
                elif anchor[0] == "r":
                    left -= max_width
                ww = [_length(fnt, w, direction, feats, language) for w in words]
                gap = (max_width - sum(ww)) / (len(words) - 1)
                for w, wl in zip(words, ww):
                    out.append(_Line(left, top, "l" + anchor[1], w))
                    left += wl + gap
                top += line_spacing
                continue
        if anchor[0] == "m":
            left -= diff / 2.0
        elif anchor[0] == "r":
            left -= diff
        out.append(_Line(left, top, anchor, line))
        top += line_spacing
    return out


def _bbox(
    fnt: Font,
    text: Text,
    anchor: str | None,
    direction: str | None,
    features: list[str] | None,
    language: str | None,
    stroke_width: float,
) -> Box:
    box: Box
    if isinstance(fnt, ImageFont.FreeTypeFont):
        box = fnt.getbbox(text, "L", direction, features, language, stroke_width, anchor)
        return box
    try:
        box = fnt.getbbox(text, anchor=anchor)
    except TypeError:
        box = fnt.getbbox(text)
    return box


def _length(fnt: Font, text: Text, direction: str | None, features: list[str] | None, language: str | None) -> float:
    if isinstance(fnt, ImageFont.FreeTypeFont):
        return float(fnt.getlength(text, "L", direction, features, language))
    return float(fnt.getlength(text))


def _check_text(text: Any) -> None:
    """Text is a str (or bytes, as Pillow takes); anything else is a TypeError."""
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"text must be a str, got {type(text).__name__}")


def layout(fnt: Font, xy: Sequence[float], text: Text, options: TextOptions = _PLAIN) -> list[Run]:
    """Render ``text`` at ``xy`` into positioned coverage masks (one per line)."""
    _check_text(text)
    feats = tuple(options.features) if options.features else None
    simple = not options.stroke_width and options.direction is None and feats is None and options.language is None
    runs: list[Run] = []
    for line in _split(fnt, xy, text, options):
        if not math.isfinite(line.x) or not math.isfinite(line.y):
            raise ValueError(f"text position must be finite, got {xy!r}")
        x, y = int(line.x), int(line.y)
        start = (math.modf(line.x)[0], math.modf(line.y)[0])
        if simple and (fnt, line.text, line.anchor, start, 0, None, None, None) not in _runs:
            # a line not seen before: composed from cached glyphs when that is exact
            placed = glyphs.compose(fnt, line.text, line.x, line.y, line.anchor)
            if placed is not None:
                if placed[0].size:
                    runs.append(Run(*placed))
                continue
        mask, dx, dy = _render(
            fnt, line.text, line.anchor, start, options.stroke_width, options.direction, feats, options.language
        )
        if mask.size:
            runs.append(Run(mask, x + dx, y + dy))
    return runs


def bbox(fnt: Font, xy: Sequence[float], text: Text, options: TextOptions = _PLAIN) -> Box:
    """(left, top, right, bottom) of ``text`` drawn at ``xy``, as ImageDraw.textbbox."""
    _check_text(text)
    feats = list(options.features) if options.features else None
    box: Box | None = None
    for line in _split(fnt, xy, text, options):
        left, top, right, bottom = _bbox(
            fnt, line.text, line.anchor, options.direction, feats, options.language, options.stroke_width
        )
        left, top, right, bottom = left + line.x, top + line.y, right + line.x, bottom + line.y
        box = (left, top, right, bottom) if box is None else \
            (min(box[0], left), min(box[1], top), max(box[2], right), max(box[3], bottom))  # fmt: skip
    return box if box is not None else (xy[0], xy[1], xy[0], xy[1])


def length(
    fnt: Font,
    text: Text,
    direction: str | None = None,
    features: Sequence[str] | None = None,
    language: str | None = None,
) -> float:
    """Advance width of one line of text, as ImageDraw.textlength."""
    _check_text(text)
    if "\n" in (text if isinstance(text, str) else text.decode("latin-1")):
        raise ValueError("can't measure length of multiline text")
    return _length(fnt, text, direction, list(features) if features else None, language)
