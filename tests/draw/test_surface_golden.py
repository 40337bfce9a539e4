"""Golden images: every primitive in every common pixel format, compared pixel for pixel.

The PNGs in tests/draw/golden/ are ``Surface.to_image()`` of each scene. Regenerate them
after an intended change with::

    FBGFX_UPDATE_GOLDEN=1 python -m pytest tests/draw/test_surface_golden.py

Text is not part of the goldens (glyph rendering depends on the FreeType build);
tests/draw/test_text.py compares text against Pillow on the same machine instead.
"""

import os
import pathlib

import numpy as np
import pytest
from PIL import Image
from support.pillow_compare import assert_same_pixels

from fbgfx import Surface

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("FBGFX_UPDATE_GOLDEN") == "1"
FORMATS = ["RGB565", "BGR565", "XRGB8888", "XBGR8888", "RGB888", "BGR888", "C8", "R8"]

RED, GREEN, BLUE, YELLOW, GREY = (230, 40, 30), (40, 200, 60), (30, 60, 220), (250, 220, 20), (128, 128, 128)


def _bitmap():
    yy, xx = np.mgrid[0:12, 0:16]
    return Image.fromarray((((xx // 2 + yy // 3) % 2) * 255).astype(np.uint8), "L").convert("1")


def _gradient():
    yy, xx = np.mgrid[0:16, 0:20]
    return np.stack([xx * 12, yy * 15, 255 - xx * 12, np.full_like(xx, 160)], -1).astype(np.uint8)


SCENES = {
    "point": lambda s: s.point([(x, (x * 7) % 32) for x in range(0, 48, 3)], fill=YELLOW),
    "line": lambda s: (s.line((1, 2, 46, 29), fill=RED), s.line([(2, 30), (20, 3), (40, 25), (47, 0)], fill=GREEN)),
    "wide_line": lambda s: (
        s.line((3, 4, 44, 26), fill=RED, width=5),
        s.line([(5, 28), (24, 8), (44, 28)], fill=BLUE, width=7, joint="curve"),
    ),
    "rectangle": lambda s: (
        s.rectangle((2, 2, 30, 20), fill=BLUE, outline=YELLOW, width=3),
        s.rectangle([(20, 12), (46, 30)], outline=RED),
    ),
    "rounded_rectangle": lambda s: s.rounded_rectangle((2, 2, 45, 29), 9, fill=GREEN, outline=RED, width=2),
    "ellipse": lambda s: (
        s.ellipse((2, 2, 30, 25), fill=BLUE, outline=YELLOW, width=2),
        s.ellipse((25, 8, 46, 30), outline=RED, width=3),
    ),
    "circle": lambda s: (s.circle((16, 16), 12, fill=RED), s.circle((34, 16), 10.5, outline=GREEN, width=2)),
    "arc": lambda s: (s.arc((2, 2, 45, 29), 20, 250, fill=RED, width=3), s.arc((10, 6, 36, 25), -60, 60, fill=YELLOW)),
    "chord": lambda s: s.chord((2, 2, 45, 29), 30, 220, fill=BLUE, outline=YELLOW, width=2),
    "pieslice": lambda s: (
        s.pieslice((2, 2, 45, 29), -30, 100, fill=GREEN, outline=RED, width=2),
        s.pieslice((2, 2, 45, 29), 150, 200, fill=BLUE),
    ),
    "polygon": lambda s: (
        s.polygon([(2, 2), (45, 6), (10, 15), (40, 29), (4, 27)], fill=RED, outline=YELLOW),
        s.polygon([(24, 2), (30, 14), (18, 14)], outline=BLUE, width=3),
    ),
    "regular_polygon": lambda s: s.regular_polygon((24, 16, 14), 7, rotation=10, fill=GREEN, outline=BLUE, width=2),
    "bitmap": lambda s: s.bitmap((10, 8), _bitmap(), fill=YELLOW),
    "alpha": lambda s: (s.rectangle((2, 2, 30, 25), fill=BLUE), s.ellipse((15, 5, 45, 30), fill=RED + (128,))),
    "blit": lambda s: (s.clear(GREY), s.blit(_gradient(), (4, 4)), s.blit(_gradient()[..., :3], (30, 20), rotate=90)),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scene", sorted(SCENES))
def test_golden(scene, fmt):
    """The scene drawn in this format equals its golden PNG exactly."""
    s = Surface(48, 32, fmt)
    SCENES[scene](s)
    got = s.to_image()
    path = GOLDEN / f"{scene}-{fmt}.png"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"missing golden {path.name}; run with FBGFX_UPDATE_GOLDEN=1 to create it")
        GOLDEN.mkdir(exist_ok=True)
        got.save(path)
    want = Image.open(path)
    assert want.mode == got.mode and want.size == got.size
    assert_same_pixels(got, want, against=path.name)
