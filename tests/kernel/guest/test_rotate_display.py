"""A turned Screen (rotate=90/180/270) on real drivers: the monitor shows the picture turned
clockwise, exactly as Pillow turns the same picture (qemu screendump)."""

import numpy as np
import pytest
from PIL import Image, ImageDraw

import fbgfx

pytestmark = [pytest.mark.kernel, pytest.mark.setups("bochs", "cirrus", "cirrusfb")]

# Pillow's transposes turn counter-clockwise; rotate=90 turns the picture clockwise.
TRANSPOSE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


def assert_shows(kernel, shot: np.ndarray, rgb: np.ndarray) -> None:
    """The monitor shows ``rgb`` to the bits the device keeps (6-bit DAC at 8 bpp)."""
    assert shot.shape == rgb.shape
    if kernel.var()["bits_per_pixel"] == 8:
        bad = (shot >> 2) != (rgb >> 2)
    else:
        lengths = [n for _, n in kernel.channels()]
        bad = np.stack([(shot[..., i] >> (8 - n)) != (rgb[..., i] >> (8 - n)) for i, n in enumerate(lengths)], -1)
    assert not bad.any(), f"{int(bad.any(-1).sum())} pixels differ"


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_turned_frame_on_monitor(kernel, rotate):
    """Shapes drawn on a turned Screen appear on the monitor as Pillow's turn of the same drawing."""
    with fbgfx.open(kernel.device) as fb:
        with fb.screen(rotate=rotate) as screen:
            w, h = screen.size
            expected = Image.new("RGB", (w, h), "black")
            draw = ImageDraw.Draw(expected)
            with screen.frame() as s:
                s.clear("black")
                for d in (s, draw):
                    d.rectangle((10, 10, w // 2, h // 3), fill="red", outline="white", width=3)
                    d.rectangle((w // 2 + 1, h // 2, w - 1, h - 1), fill=(0, 255, 0))
                    d.line((20, h // 2, 20, h - 20), fill="white", width=5)
            with screen.frame() as s:  # a small change: only its turned rectangle is written
                for d in (s, draw):
                    d.rectangle((w - 40, 5, w - 9, 36), fill=(0, 0, 255))
            shown = expected.transpose(TRANSPOSE[rotate])
            assert_shows(kernel, kernel.settled_screendump(), np.asarray(shown))


def test_turned_present_on_monitor(kernel, rng):
    """present() on a screen turned 90 degrees shows the picture turned on the monitor."""
    with fbgfx.open(kernel.device) as fb:
        with fb.screen(palette=None, rotate=90) as screen:
            if fb.format.indexed:  # colours the device's own colour map can show exactly
                palette = fb.get_palette()
                rgb = palette[rng.integers(0, len(palette), (screen.height, screen.width))]
            else:
                rgb = rng.integers(0, 256, (screen.height, screen.width, 3), dtype=np.uint8)
            screen.present(rgb)
            shown = Image.fromarray(rgb).transpose(TRANSPOSE[90])
            assert_shows(kernel, kernel.settled_screendump(), np.asarray(shown))
