"""The runnable examples: each runs headless on a virtual framebuffer and draws something sensible."""

import os
import re
import subprocess
import sys

import pytest
from PIL import Image
from support import RECORDINGS, ROOT

DEVICE = "virtual:800x480:RGB565"

EXAMPLES = {
    "hello.py": ["--seconds", "0"],
    "clock.py": ["--seconds", "1"],
    "slideshow.py": ["--seconds", "1", "--delay", "0.2", "--fade", "0.2"],
    "video.py": ["--duration", "1", "--no-audio"],
    "bounce.py": ["--seconds", "1"],
    "dashboard.py": ["--seconds", "1"],
    "monitors.py": ["--seconds", "1"],
    "layers.py": ["--seconds", "1"],
    "paint.py": ["--touch", str(RECORDINGS / "ft5406-multitouch.evemu")],
}


def run_example(name, args, device, out):
    """Run one example as a program; return the finished process."""
    cmd = [sys.executable, os.path.join(ROOT, "examples", name), "--device", device, "--out", str(out), *args]
    # A script's own folder comes first on sys.path, not the working directory: point
    # Python at this checkout so the fbgfx under test is imported, not an installed one.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def distinct_colours(path):
    """How many different colours an image holds (capped)."""
    with Image.open(path) as im:
        colours = im.convert("RGB").getcolors(maxcolors=4096)
    return 4096 if colours is None else len(colours)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_headless(tmp_path, name):
    """Each example exits cleanly on a virtual 800x480 RGB565 screen and leaves a full-size, varied picture."""
    out = tmp_path / "out.png"
    res = run_example(name, EXAMPLES[name], DEVICE, out)
    assert res.returncode == 0, res.stderr
    with Image.open(out) as im:
        assert im.size == (800, 480)
    assert distinct_colours(out) >= 5, name


def test_dashboard_small_lcd(tmp_path):
    """The dashboard lays itself out on a 480x320 LCD too."""
    out = tmp_path / "out.png"
    res = run_example("dashboard.py", ["--seconds", "0.5"], "virtual:480x320:RGB565", out)
    assert res.returncode == 0, res.stderr
    with Image.open(out) as im:
        assert im.size == (480, 320)
    assert distinct_colours(out) >= 5


def test_clock_redraws_only_changed_digits(tmp_path):
    """After the first tick the clock redraws fewer cells per tick than the eight of HH:MM:SS."""
    out = tmp_path / "out.png"
    res = run_example("clock.py", ["--seconds", "2.5"], DEVICE, out)
    assert res.returncode == 0, res.stderr
    updates, ticks = map(int, re.search(r"(\d+) cell updates in (\d+) ticks", res.stdout).groups())
    assert ticks >= 2
    assert updates < 8 * ticks  # a clock redrawing everything would update 8 cells a tick


def test_bounce_flips_pages(tmp_path):
    """bounce.py gets page flipping on a device that can pan, and a RAM back buffer on one that cannot."""
    out = tmp_path / "out.png"
    res = run_example("bounce.py", ["--seconds", "0.3"], DEVICE, out)
    assert res.returncode == 0, res.stderr
    assert "flip buffering" in res.stdout
    res = run_example("bounce.py", ["--seconds", "0.3"], DEVICE + ":pan=0", out)
    assert res.returncode == 0, res.stderr
    assert "copy buffering" in res.stdout


def test_paint_draws_under_the_touches(tmp_path):
    """paint.py replaying two fingers: a dot under each touch in its finger's colour,
    black where nothing touched, and the CLEAR button top right."""
    out = tmp_path / "out.png"
    rec = str(RECORDINGS / "ft5406-multitouch.evemu")
    res = run_example("paint.py", ["--touch", rec], "virtual:800x480:XRGB8888", out)
    assert res.returncode == 0, res.stderr
    assert "raspberrypi-ts" in res.stdout and "3 touches" in res.stdout
    with Image.open(out) as im:
        im = im.convert("RGB")
        assert im.getpixel((100, 200)) == (255, 215, 0)  # finger 1 (slot 0)
        assert im.getpixel((105, 202)) == (255, 215, 0)  # its stroke to (110, 205)
        assert im.getpixel((700, 50)) == (0, 200, 255)  # finger 2 (slot 1)
        assert im.getpixel((400, 400)) == (0, 0, 0)
        assert im.getpixel((799 - 4, 2)) != (0, 0, 0)  # the button's outline


def test_paint_rotated_draws_under_the_touches(tmp_path):
    """paint.py --rotate 90: the picture is turned on the panel and every dot still
    lands on the panel where the finger was; CLEAR is in the panel's bottom right."""
    out = tmp_path / "out.png"
    rec = str(RECORDINGS / "ft5406-multitouch.evemu")
    res = run_example("paint.py", ["--touch", rec, "--rotate", "90"], "virtual:800x480:XRGB8888", out)
    assert res.returncode == 0, res.stderr
    assert "480x800 screen (rotate 90)" in res.stdout
    with Image.open(out) as im:
        im = im.convert("RGB")
        assert im.getpixel((100, 200)) == (255, 215, 0)
        assert im.getpixel((700, 50)) == (0, 200, 255)
        assert im.getpixel((400, 240)) == (0, 0, 0)
        assert im.getpixel((795, 470)) == (70, 70, 70)  # the button, logical top right


def test_paint_clear_button_wipes(tmp_path):
    """A touch on CLEAR wipes the strokes drawn before it."""
    rec = tmp_path / "clear.evemu"
    lines = (
        RECORDING_HEAD + "E: 0.000000 0001 0110 1\nE: 0.000000 0000 0000 0\n"
        "E: 0.100000 0001 0110 0\nE: 0.100000 0000 0000 0\n"
        "E: 0.200000 0003 0000 32000\nE: 0.200000 0003 0001 300\nE: 0.200000 0000 0000 0\n"
        "E: 0.300000 0001 0110 1\nE: 0.300000 0000 0000 0\n"
    )
    rec.write_text(lines)
    out = tmp_path / "out.png"
    res = run_example("paint.py", ["--touch", str(rec)], "virtual:800x480:XRGB8888", out)
    assert res.returncode == 0, res.stderr
    with Image.open(out) as im:
        assert im.convert("RGB").getpixel((400, 240)) == (0, 0, 0)


# A tablet (BTN_LEFT: bit 0x110) at raw (16384, 16384), the middle of the screen, pressed.
RECORDING_HEAD = """N: QEMU Virtio Tablet
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 01 00 00 00 00 00
A: 00 0 32767 0 0 0
A: 01 0 32767 0 0 0
E: 0.000000 0003 0000 16384
E: 0.000000 0003 0001 16384
E: 0.000000 0000 0000 0
"""
