"""Helpers of the command-line tests: ``fbgfx`` run in-process or as ``python -m fbgfx``,
its one-line errors, and the image files the commands read and write."""

import os
import subprocess
import sys

from PIL import Image

from fbgfx.cli import main

from . import ROOT

V565 = "virtual:800x480:RGB565"
V32 = "virtual:800x480:XRGB8888"


def run(capsys, *argv):
    """Run main() in-process; return (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_module(*argv, input=None, timeout=60, env=None):
    """Run `python -m fbgfx` in a subprocess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "fbgfx", *map(str, argv)],
        input=input,
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
        env=full_env,
    )


def one_error_line(err):
    """The stderr text is exactly one `fbgfx: error:` line; return it."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fbgfx: error: "), err
    assert "Traceback" not in err
    return lines[0]


def solid(path, size, color, **save):
    """Write a one-colour image file."""
    Image.new("RGB", size, color).save(path, **save)
    return str(path)


def rgb_at(png, xy):
    """The RGB of one pixel of an image file."""
    with Image.open(png) as im:
        return im.convert("RGB").getpixel(xy)


def near(a, b, tol=12):
    """Colours equal within tolerance (RGB565 quantisation, JPEG noise)."""
    return all(abs(int(x) - int(y)) <= tol for x, y in zip(a, b))


#: The colours of the frames :func:`animation` writes, in order.
COLORS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)]


def animation(path, size=(160, 96), durations=(40, 40, 40, 40), **save):
    """Write an animation whose frames are the COLORS in turn."""
    frames = [Image.new("RGB", size, c) for c in COLORS[: len(durations)]]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=list(durations), loop=0, **save)
    return str(path)
