"""The runnable examples: each runs headless on a virtual framebuffer and draws something sensible."""

import os
import re
import subprocess
import sys

import pytest
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = "virtual:800x480:RGB565"

EXAMPLES = {
    "hello.py": ["--seconds", "0"],
    "clock.py": ["--seconds", "1"],
    "slideshow.py": ["--seconds", "1", "--delay", "0.2", "--fade", "0.2"],
    "video.py": ["--frames", "20"],
    "bounce.py": ["--seconds", "1"],
    "dashboard.py": ["--seconds", "1"],
}


def run_example(name, args, device, out):
    """Run one example as a program; return the finished process."""
    cmd = [sys.executable, os.path.join(ROOT, "examples", name), "--device", device, "--out", str(out), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)


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
