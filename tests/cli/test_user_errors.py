"""Errors a user can act on: one clear line naming what is wrong, never a bare
OverflowError, a traceback, a temporary file's name or a raw control character."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import fbgfx

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fbgfx", *args], capture_output=True, text=True, env=ENV, timeout=120)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_infinite_boxes_are_clear_errors(bad):
    """An infinite or NaN box (mark_dirty, clip, subsurface, blit's source_rect) names the box, no OverflowError."""
    fb = fbgfx.open("virtual:64x48")
    screen = fb.screen(console=False)
    box = (0, 0, bad, 10)
    with pytest.raises(TypeError, match=r"box must be \(left, top, right, bottom\) integers"):
        screen.mark_dirty(box)
    surface = screen.surface
    with pytest.raises(ValueError, match="clip: coordinates must be finite"):
        surface.clip = box
    with pytest.raises(ValueError, match="subsurface: coordinates must be finite"):
        surface.subsurface(box)
    with pytest.raises(ValueError, match="source_rect: coordinates must be finite"):
        surface.blit(Image.new("RGB", (4, 4)), (0, 0), source_rect=box)
    fb.close()


def test_play_with_an_infinite_box_is_a_clear_error(tmp_path):
    """screen.play(box=(0, 0, inf, inf)) says the box must be integers, not OverflowError."""
    pytest.importorskip("av")
    frames = [Image.new("RGB", (8, 8), c) for c in ("red", "blue")]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:], duration=20)
    fb = fbgfx.open("virtual:64x48")
    screen = fb.screen(console=False)
    with pytest.raises(TypeError, match=r"box must be \(x0, y0, x1, y1\) integers"):
        screen.play(str(tmp_path / "a.gif"), box=(0, 0, math.inf, math.inf), audio=False)
    fb.close()


@pytest.mark.parametrize("command", ["show", "grab"])
@pytest.mark.parametrize("where", ["name", "folder"])
def test_too_long_picture_names_are_one_line(tmp_path, command, where):
    """show/grab with a name the filesystem refuses: one line saying it is too long, shortened, with the limits."""
    long = "a" * 300
    path = tmp_path / (f"{long}.png" if where == "name" else f"{long}/x.png")
    out = _cli(command, str(path), "-d", "virtual:64x48")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: "), out.stderr
    assert "the file name is too long" in lines[0] and "255 bytes" in lines[0], lines[0]
    assert long not in lines[0] and ".tmp" not in lines[0]  # shortened; no temporary name


def test_grab_to_a_long_name_the_filesystem_takes(tmp_path):
    """grab to a 252-byte name works (its temporary file's name is kept short)."""
    path = tmp_path / ("b" * 248 + ".png")
    out = _cli("grab", str(path), "-d", "virtual:64x48")
    assert out.returncode == 0, out.stderr
    assert Image.open(path).size == (64, 48)
    assert sorted(os.listdir(tmp_path)) == [path.name]


@pytest.mark.parametrize(
    "spec", ["drm:card\x000", "drm:card0:connector=HD\x00MI", "drm:card0:connector=HD\x1bMI", "/dev/fb\x000"]
)
def test_nul_and_control_characters_in_device_names_are_escaped(spec):
    """A device name with a NUL (or a control character in a drm: spec) is refused, shown with escapes."""
    with pytest.raises(ValueError, match="cannot hold NUL or control characters") as info:
        fbgfx.open(spec)
    assert "\x00" not in str(info.value) and "\x1b" not in str(info.value)


def test_cli_control_character_in_a_drm_spec_is_one_escaped_line():
    """`fbgfx info -d 'drm:...ESC...'`: one error line, the control character escaped."""
    out = _cli("info", "-d", "drm:card0:connector=HD\x1bMI")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "\x1b" not in out.stderr and "\\x1b" in out.stderr, out.stderr


def test_present_keeps_working_after_the_errors():
    """The refused calls change nothing: the screen still presents."""
    fb = fbgfx.open("virtual:16x8")
    screen = fb.screen(console=False)
    with pytest.raises(TypeError):
        screen.mark_dirty((0, 0, math.inf, 1))
    screen.present(np.full((8, 16, 3), 255, np.uint8))
    assert fb.snapshot().getextrema() == ((255, 255),) * 3
    fb.close()
