"""Text lines composed from cached glyphs (fbgfx._draw.glyphs) are the pixels Pillow draws."""

from __future__ import annotations

import os
import random
import string
from typing import Any

import numpy as np
import PIL
import pytest
from PIL import Image, ImageDraw, ImageFont
from support.pillow_compare import assert_same_pixels

import fbgfx
from fbgfx._draw import glyphs

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
PILLOW = tuple(int(p) for p in PIL.__version__.split(".")[:2])
needs_dejavu = pytest.mark.skipif(not os.path.exists(DEJAVU), reason="DejaVu Sans is not installed (fonts-dejavu-core)")
# Before Pillow 11 fbgfx draws every line through Pillow's renderer (glyphs.compose is off).
glyph_path = pytest.mark.skipif(PILLOW < (11, 0), reason=f"Pillow {PIL.__version__} < 11: no glyph path to test")
# Before Pillow 10.1, load_default() is a latin-1 bitmap font: Pillow and fbgfx both refuse "n\u0303".
scalable_default = pytest.mark.skipif(
    PILLOW < (10, 1), reason=f"Pillow {PIL.__version__}'s load_default() is a latin-1 bitmap font"
)


WORDS = ["Hello", "AVAVA To Ty", "fi fl ffi", "Wave Te yo", "\u00c4\u00d6\u00dc \u00e9 n\u0303", "x\ty"]


def _strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append(f"{rng.uniform(-999, 999):8.3f} V")
        elif kind == 1:
            out.append("".join(rng.choice(string.printable[:95]) for _ in range(rng.randint(1, 24))))
        elif kind == 2:
            out.append(
                rng.choice(
                    ["Hello", "AVAVA To Ty", "fi fl ffi", "Wave Te yo", "\u00c4\u00d6\u00dc \u00e9 n\u0303", "x\ty"]
                )
            )
        else:
            out.append(f"{rng.randint(0, 100)} % {rng.random():.2f} \u00b0C")
    return out


def _positions(seed: int, n: int) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    return [
        (
            rng.choice([rng.randint(-20, 170), rng.uniform(0, 170)]),
            rng.choice([rng.randint(-8, 50), rng.uniform(0, 50)]),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize(
    "font_name", [pytest.param("default", marks=scalable_default), pytest.param("dejavu-13", marks=needs_dejavu)]
)
def test_fresh_strings_match_pillow_pixel_for_pixel(font_name: str) -> None:
    """300 different strings, each at its own (whole or fractional) position and in its own
    colour, give exactly Pillow's pixels, on top of each other as they accumulate."""
    font: Any = ImageFont.load_default() if font_name == "default" else ImageFont.truetype(DEJAVU, 13)
    rng = random.Random(5)
    s = fbgfx.Surface(200, 60, "XRGB8888")
    im = Image.new("RGB", (200, 60))
    d = ImageDraw.Draw(im)
    for text, xy in zip(_strings(1, 300), _positions(2, 300)):
        colour = (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255))
        s.text(xy, text, fill=colour, font=font)
        d.text(xy, text, fill=colour, font=font)
    assert_same_pixels(s.to_image(), im)


@glyph_path
def test_readings_in_the_default_font_take_the_glyph_path() -> None:
    """The readings of a dashboard are composed from glyphs (the path is not silently unused)."""
    font = ImageFont.load_default()
    for text in ("  12.345 V", "-999.000 V", "0.5 A"):
        assert glyphs.compose(font, text, 10.0, 3.0, None) is not None
        assert glyphs.compose(font, text, 10.25, 3.75, "ls") is not None


@glyph_path
@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "RGB888", "ARGB4444", "R8", "C8"])
def test_glyph_path_draws_what_the_rendering_path_draws(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In every kind of format, text composed from glyphs equals text rendered whole by Pillow,
    clipped at the surface's edges and through a clip rectangle, opaque or translucent."""
    font = ImageFont.load_default()
    calls = list(zip(_strings(3, 60), _positions(4, 60)))

    def draw(s: fbgfx.Surface) -> np.ndarray:
        rng = random.Random(6)
        for i, (text, xy) in enumerate(calls):
            if i == 30:
                s.set_clip((20, 5, 150, 40))
            alpha = 255 if i % 3 else rng.randint(1, 254)
            s.text(xy, text, fill=(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255), alpha), font=font)
        return s.array.copy()

    fast = draw(fbgfx.Surface(200, 60, fmt))
    monkeypatch.setattr(glyphs, "compose", lambda *a: None)
    slow = draw(fbgfx.Surface(200, 60, fmt))
    assert np.array_equal(fast, slow)


def test_subsurface_text_reports_and_draws_like_the_whole_surface() -> None:
    """Text on a subsurface lands at the offset and reports its box to the parent's on_draw."""
    font = ImageFont.load_default()
    parent = fbgfx.Surface(120, 40, "RGB565")
    boxes: list[tuple[int, int, int, int]] = []
    parent.on_draw = lambda *box: boxes.append(box)
    sub = parent.subsurface((30, 10, 120, 40))
    sub.text((2, 3), " 42.125 V", fill=(200, 100, 50), font=font)
    whole = fbgfx.Surface(120, 40, "RGB565")
    whole.text((32, 13), " 42.125 V", fill=(200, 100, 50), font=font)
    assert np.array_equal(parent.array, whole.array)
    assert boxes and all(b[0] >= 30 and b[1] >= 10 for b in boxes)


@needs_dejavu
def test_kerned_pairs_go_to_pillow() -> None:
    """A font that kerns ("AV", "To") never has those pairs composed from single glyphs."""
    font = ImageFont.truetype(DEJAVU, 20)
    pairs = ("AV", "To", "Ty", "Wa")
    kerned = [text for text in pairs if font.getlength(text) != font.getlength(text[0]) + font.getlength(text[1])]
    assert kerned == list(pairs), f"DejaVu Sans should kern all of {pairs}; it kerns {kerned}"
    for text in kerned:
        assert glyphs.compose(font, text, 0.0, 0.0, None) is None


def test_other_features_take_pillow_s_renderer() -> None:
    """Anchors other than la/ls, negative fractional positions, bytes and bitmap fonts are
    not composed (Pillow's renderer draws them)."""
    font = ImageFont.load_default()
    assert glyphs.compose(font, "12.5", 0.0, 0.0, "mm") is None
    assert glyphs.compose(font, "12.5", -3.5, 0.0, None) is None
    assert glyphs.compose(font, b"12.5", 0.0, 0.0, None) is None
    bitmap = getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)()  # Pillow < 10.1: the default
    assert glyphs.compose(bitmap, "12.5", 0.0, 0.0, None) is None
