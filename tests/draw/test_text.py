"""Text on a Surface against Pillow's ImageDraw.text, fonts and text metrics."""

import functools

import numpy as np
import PIL
import pytest
from PIL import Image, ImageDraw, ImageFont
from support.pillow_compare import assert_like_pillow

import fbgfx
from fbgfx import Surface

W, H = 160, 80
TOL = 2  # blending rounding: Pillow and fbgfx may differ by this much per channel


# Text is compared on a wider picture, within TOL, and must draw something.
compare = functools.partial(assert_like_pillow, size=(W, H), tolerance=TOL, must_draw=True)


@pytest.fixture(scope="module")
def ttf_path(tmp_path_factory):
    """Pillow's built-in scalable font written out as a .ttf file (DejaVu Sans with Pillow < 10.1)."""
    default = ImageFont.load_default()
    if not hasattr(default, "font_bytes"):  # Pillow < 10.1 builds in no TrueType font
        return fbgfx.font(size=10).path
    path = tmp_path_factory.mktemp("fonts") / "default.ttf"
    path.write_bytes(default.font_bytes)
    return path


def test_default_font_exists_and_scales():
    """fbgfx.font() with no path gives a scalable font of the asked size."""
    small, big = fbgfx.font(size=10), fbgfx.font(size=40)
    assert isinstance(big, ImageFont.FreeTypeFont)
    assert big.getbbox("Hello")[3] > 2 * small.getbbox("Hello")[3]


def test_default_font_on_old_pillow_falls_back_to_dejavu(monkeypatch, tmp_path):
    """With a Pillow older than 10.1 (no sized load_default), fbgfx.font(size=) loads DejaVu Sans at that size."""
    from fbgfx import text

    source = ImageFont.load_default()
    if not hasattr(source, "font_bytes"):
        pytest.skip(f"Pillow {PIL.__version__} is itself older than 10.1 (test_default_font_exists_and_scales runs)")
    dejavu = tmp_path / "DejaVuSans.ttf"
    dejavu.write_bytes(source.font_bytes)
    monkeypatch.setattr(ImageFont, "load_default", lambda: source)
    monkeypatch.setattr(text, "_DEFAULTS", {})
    monkeypatch.setattr(text, "_FALLBACK_FONTS", (str(tmp_path / "missing.ttf"), str(dejavu)))
    f = fbgfx.font(size=30)
    assert isinstance(f, ImageFont.FreeTypeFont) and f.path == str(dejavu) and f.size == 30


def test_default_font_on_old_pillow_without_dejavu_names_the_version(monkeypatch, tmp_path):
    """With a Pillow older than 10.1 and no DejaVu Sans, fbgfx.font(size=) says which Pillow and which package."""
    from fbgfx import text

    monkeypatch.setattr(ImageFont, "load_default", lambda: None)
    monkeypatch.setattr(text, "_DEFAULTS", {})
    monkeypatch.setattr(text, "_FALLBACK_FONTS", (str(tmp_path / "missing.ttf"),))
    with pytest.raises(OSError, match=r"Pillow >= 10\.1.*fonts-dejavu-core"):
        fbgfx.font(size=24)


def test_default_text_matches_pillow():
    """Text in the default font matches ImageDraw.text within antialiasing tolerance."""
    compare(lambda d: d.text((5, 5), "Hello, World", fill=(255, 255, 255)))
    compare(lambda d: d.text((10.5, 20.25), "Hello", fill=(250, 120, 30)), background=(20, 40, 200))


def test_truetype_file_matches_pillow(ttf_path):
    """A TrueType font loaded from a file, at several sizes and anchors."""
    for size in (12, 24, 37):
        f = fbgfx.font(ttf_path, size)
        for anchor in (None, "mm", "rs", "ld"):
            compare(lambda d: d.text((80, 40), "Ag fbgfx!", fill=(0, 255, 128), font=f, anchor=anchor))


def test_bitmap_font_matches_pillow():
    """Pillow's bitmap (non-FreeType) font draws the same pixels."""
    # Pillow < 10.1 has no load_default_imagefont(): its load_default() is that bitmap font.
    f = getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)()
    compare(lambda d: d.text((3, 4), "Bitmap 123", fill=(255, 255, 0), font=f))


def test_multiline_alignment_and_spacing_match_pillow(ttf_path):
    """multiline_text with align and spacing places lines as Pillow does."""
    f = fbgfx.font(ttf_path, 14)
    for align in ("left", "center", "right"):
        compare(
            lambda d: d.multiline_text(
                (80, 10), "one\nthree three\ntwo", fill=(255, 255, 255), font=f, anchor="ma", align=align, spacing=6
            )
        )
    compare(lambda d: d.text((5, 5), "a\nbb", fill=(255, 255, 255), font=f))


def test_stroked_text_matches_pillow(ttf_path):
    """stroke_width / stroke_fill outline the glyphs as Pillow does."""
    f = fbgfx.font(ttf_path, 24)
    compare(lambda d: d.text((10, 10), "Stroke", fill=(255, 255, 255), font=f, stroke_width=2, stroke_fill=(255, 0, 0)))


def test_stroked_default_font_matches_pillow():
    """Stroked text in fbgfx.font(size=24) fills the stroke as Pillow >= 11.2 does (stroke_filled)."""
    f = fbgfx.font(size=24)
    for width in (1, 2, 3):
        compare(
            lambda d: d.text(
                (10, 10), "Stroke", fill=(255, 255, 255), font=f, stroke_width=width, stroke_fill=(255, 0, 0)
            )
        )


def test_text_partly_off_surface_is_clipped():
    """Text running off every edge draws the visible part exactly as Pillow."""
    f = fbgfx.font(size=30)
    compare(lambda d: d.text((-20, -10), "Clipped text here", fill=(255, 255, 255), font=f))
    compare(lambda d: d.text((120, 60), "Edge", fill=(255, 255, 255), font=f))
    Surface(W, H).text((10**9, -(10**9)), "far away")


def test_textbbox_and_textlength_equal_pillow(ttf_path):
    """textbbox, multiline_textbbox and textlength give Pillow's numbers."""
    s = Surface(W, H)
    d = ImageDraw.Draw(Image.new("RGB", (W, H)))
    for f in (None, fbgfx.font(ttf_path, 18)):
        for anchor in (None, "mm", "rb"):
            assert s.textbbox((10, 20), "Hello", font=f, anchor=anchor) == d.textbbox(
                (10, 20), "Hello", font=f, anchor=anchor
            )
        assert s.textlength("Hello", font=f) == d.textlength("Hello", font=f)
        assert s.multiline_textbbox((5, 5), "a\nbcd", font=f, align="right") == d.multiline_textbbox(
            (5, 5), "a\nbcd", font=f, align="right"
        )


def test_font_size_is_the_default_font_at_that_size():
    """font_size draws and measures in fbgfx.font(size=...); a given font wins; a bad size is a ValueError."""
    f = fbgfx.font(size=22)
    a, b = Surface(W, H), Surface(W, H)
    a.text((5, 5), "Sized", font_size=22)
    b.text((5, 5), "Sized", font=f)
    assert a.array.any() and np.array_equal(a.array, b.array)
    assert a.textbbox((5, 5), "Sized", font_size=22) == b.textbbox((5, 5), "Sized", font=f)
    assert a.textlength("Sized", font_size=22) == b.textlength("Sized", font=f)
    assert a.textlength("Sized", font=f, font_size=40) == b.textlength("Sized", font=f)
    for bad in (0, -3, float("nan")):
        with pytest.raises(ValueError, match="font size"):
            a.text((5, 5), "x", font_size=bad)


@pytest.mark.parametrize("fmt", ["RGB565", "BGR565", "RGB888", "C8", "R8", "ARGB8888"])
def test_text_in_every_format(fmt):
    """Text blends into each format close to Pillow's result converted to that format."""
    s = Surface(W, H, fmt)
    s.text((5, 5), "Hello", fill="white", font=fbgfx.font(size=24))
    im = Image.new("RGB", (W, H))
    ImageDraw.Draw(im).text((5, 5), "Hello", fill="white", font=fbgfx.font(size=24))
    want = np.asarray(im)
    got = np.asarray(s.to_image().convert("RGB")).astype(int)
    ref = s.format.unpack(s.format.pack(want, s.palette), s.palette).astype(int)
    assert (got > 0).any()
    # solid glyph pixels are exact; edges may round differently in coarse formats
    solid = want[..., 0] == 255
    assert np.array_equal(got[solid], ref[solid])


def test_text_with_alpha_fill_blends():
    """An RGBA fill blends the glyphs at that opacity."""
    s = Surface(W, H)
    s.clear((0, 0, 255))
    s.text((5, 5), "Hello", fill=(255, 0, 0, 128), font=fbgfx.font(size=30))
    a = np.asarray(s.to_image()).astype(int)
    assert a[..., 0].max() in (127, 128, 129) and a[..., 2].min() >= 126


def test_font_errors(tmp_path):
    """Missing files, non-font files and bad sizes raise clear errors."""
    with pytest.raises(FileNotFoundError):
        fbgfx.font(tmp_path / "missing.ttf")
    junk = tmp_path / "junk.ttf"
    junk.write_bytes(b"not a font")
    with pytest.raises(OSError):
        fbgfx.font(junk)
    for size in (0, -3, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            fbgfx.font(size=size)
    with pytest.raises(ValueError):
        Surface(10, 10).text((0, 0), "a\nb", anchor="lt")
