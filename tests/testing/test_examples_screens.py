"""The examples tested as users test their own apps: run on the fbgfx_display fixture's
display, driven by taps, compared with the pictures in tests/screens/test_examples_screens/ (no sleeps)."""

from __future__ import annotations

import os
import sys

import PIL
import pytest
from support import ROOT

# paint.py on a 320x240 panel: the CLEAR button's label (text: its pixels follow the
# FreeType that Pillow bundles) is not compared; everything else is, exactly.
PAINT_LABEL = (257, 1, 319, 32)
# Turned 90 degrees, the button sits on the panel's right edge, further down.
PAINT_LABEL_90 = (288, 193, 319, 239)


def start(display, name: str, *args: str) -> None:
    """Start examples/NAME on the display, importing this checkout's fbgfx."""
    env = dict(display.env, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    display.start_app([sys.executable, os.path.join(ROOT, "examples", name), *args], env=env)


def paint_session(display, label, dot, stroke, clear) -> None:
    """Paint a dot and an L-shaped stroke, compare, then CLEAR and compare with the empty canvas."""
    display.wait_for_frame(60)  # the empty canvas
    display.assert_matches("canvas", ignore=[label])
    display.tap(*dot)
    display.wait_for_frame(60)
    (x0, y0), (x1, y1), (x2, y2) = stroke
    display.press(x0, y0)
    display.wait_for_frame(60)  # paint shows one frame per batch of touches
    display.move(x1, y1)
    display.wait_for_frame(60)
    display.move(x2, y2)
    display.wait_for_frame(60)
    display.release()
    display.wait_for_frame(60)
    display.assert_matches("painted", ignore=[label])
    display.tap(*clear)
    display.wait_for_frame(60, frames=2)  # the batch's frame, which stops at the CLEAR touch, then the wiped canvas
    display.assert_matches("canvas", ignore=[label])


def test_paint_draws_under_taps(fbgfx_display):
    """examples/paint.py: a dot under a tap, a stroke along a drag, CLEAR wipes it all."""
    start(fbgfx_display, "paint.py")
    paint_session(fbgfx_display, PAINT_LABEL, (40, 120), [(80, 200), (240, 200), (240, 100)], (290, 15))


@pytest.mark.fbgfx_display(width=320, height=240, rotate=90)
def test_paint_rotated_draws_under_the_finger(fbgfx_display):
    """paint.py on a panel turned 90 degrees ($FBGFX_ROTATE from the marker): painting still lands under the finger."""
    start(fbgfx_display, "paint.py")
    paint_session(fbgfx_display, PAINT_LABEL_90, (40, 120), [(80, 200), (240, 200), (240, 100)], (300, 215))


@pytest.mark.skipif(
    tuple(int(v) for v in PIL.__version__.split(".")[:2]) < (10, 1),
    reason="the baseline's text is Pillow >= 10.1's own font; older Pillow draws DejaVu Sans",
)
@pytest.mark.fbgfx_display(width=480, height=320, format="RGB565")
def test_dashboard_matches_but_for_its_clock(fbgfx_display):
    """examples/dashboard.py --demo shows the same picture everywhere but for the clock, which ignore= leaves out."""
    start(fbgfx_display, "dashboard.py", "--demo")
    fbgfx_display.wait_for_frame(60)
    clock = (240, 0, 480, 29)
    # The text matched to the pixel between Pillow 10.4 (FreeType 2.13.2) and 13.0 (FreeType 2.14.3); max_pixels
    # leaves room for the gauges' polygon edges, which arm64 rounds with fused multiply-adds (as Pillow does there).
    fbgfx_display.assert_matches("demo", ignore=[clock], max_pixels=300)
