"""The command line against hostile use: a closed stdout, FIFOs nobody writes to,
errors that must name the user's path."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PIL import Image
from support import RECORDINGS

import fbgfx
from fbgfx.cli import _clock, main

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}
TABLET = RECORDINGS / "qemu-tablet.evemu"


def fbgfx_cli(*args: str, stdout=subprocess.PIPE, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fbgfx", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env or ENV,
        timeout=120,
    )


@pytest.mark.parametrize("args", [["info"], ["info", "--json"], ["touch", "--list"]])
def test_closed_stdout_ends_quietly(args):
    """`fbgfx info | head -1` with the reader gone: no "Broken pipe" error, the status of SIGPIPE (141)."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line is written
    try:
        out = fbgfx_cli(*args, "-d", "virtual:800x480", stdout=w)
    finally:
        os.close(w)
    assert out.stderr == ""
    assert out.returncode == 141


@pytest.mark.parametrize("command", ["show", "play"])
def test_fifo_nobody_writes_ends_at_duration(tmp_path, command):
    """`fbgfx show|play FIFO --duration 1` with no writer: one error line naming the FIFO, instead of hanging."""
    fifo = tmp_path / "pic.png"
    os.mkfifo(fifo)
    out = fbgfx_cli(command, str(fifo), "-d", "virtual:64x48", "--duration", "1")
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"fbgfx: error: {fifo}: nothing was written to the FIFO before --duration ended"]


class Clock:
    """The command line's clock: sleeping advances it at once (polls keep real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_show_reads_a_picture_from_a_fifo(tmp_path, monkeypatch):
    """A picture written into a FIFO is shown (it is read once, checked and decoded from memory)."""
    monkeypatch.setattr(_clock, "time", Clock())
    fifo = tmp_path / "pic.png"
    os.mkfifo(fifo)
    png = tmp_path / "red.png"
    Image.new("RGB", (64, 48), "red").save(png)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(png.read_bytes())

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    out = tmp_path / "out.png"
    assert main(["show", str(fifo), "-d", "virtual:64x48", "--duration", "30", "--out", str(out)]) == 0
    t.join(timeout=30)
    assert Image.open(out).convert("RGB").getpixel((10, 10)) == (255, 0, 0)


def test_play_reads_an_animation_from_a_fifo(tmp_path, monkeypatch):
    """An animated GIF written into a FIFO plays (read once, not probed and then missed)."""
    monkeypatch.setattr(_clock, "time", Clock())
    fifo = tmp_path / "anim.gif"
    os.mkfifo(fifo)
    gif = tmp_path / "a.gif"
    frames = [Image.new("RGB", (64, 48), c) for c in ("red", "lime")]
    frames[0].save(gif, save_all=True, append_images=frames[1:], duration=100)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(gif.read_bytes())

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    out = tmp_path / "out.png"
    assert main(["play", str(fifo), "-d", "virtual:64x48", "--duration", "30", "--out", str(out)]) == 0
    t.join(timeout=30)
    assert Image.open(out).convert("RGB").getpixel((10, 10)) == (0, 255, 0)  # the last frame


def test_touch_fifo_in_environment_ends_at_seconds(tmp_path):
    """$FBGFX_TOUCH naming a FIFO recording nobody writes: `fbgfx touch --seconds 1` ends with one line."""
    fifo = tmp_path / "touch.evemu"
    os.mkfifo(fifo)
    out = fbgfx_cli("touch", "-d", "virtual:64x48", "--seconds", "1", env={**ENV, "FBGFX_TOUCH": str(fifo)})
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"fbgfx: error: {fifo}: nothing was written to the FIFO before --seconds ended"]


def test_touch_reads_a_recording_from_a_fifo(tmp_path, monkeypatch, capsys):
    """A recording written into a FIFO named by $FBGFX_TOUCH is replayed."""
    fifo = tmp_path / "touch.evemu"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(TABLET.read_bytes())

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    monkeypatch.setenv("FBGFX_TOUCH", str(fifo))
    assert main(["touch", "-d", "virtual:1280x800", "--seconds", "30"]) == 0
    t.join(timeout=30)
    assert capsys.readouterr().out.splitlines()[0] == "down x=640 y=200 slot=0 t=0.100"


def test_state_file_that_is_a_directory_names_the_path(tmp_path, capsys):
    """A framebuffer file whose state file became a directory: the error names the paths, not a file descriptor."""
    raw = tmp_path / "fb.raw"
    fbgfx.open(f"virtual:64x48:file={raw}").close()
    state = Path(str(raw) + ".state.json")
    state.unlink()
    state.mkdir()
    capsys.readouterr()
    assert main(["info", "-d", f"virtual:64x48:file={raw}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fbgfx: error: {raw}: ") and f"{state} is unusable: it is not a regular file" in err
    assert ": Is a directory" not in err


def test_grab_onto_a_directory_names_it(tmp_path, capsys):
    """`fbgfx grab DIR.png` where DIR.png is a directory: the error names it, not a temporary file."""
    target = tmp_path / "shot.png"
    target.mkdir()
    assert main(["grab", "-d", "virtual:64x48", str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"fbgfx: error: {target}: cannot save the picture there (Is a directory)\n"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_colon_in_a_file_path_is_escaped(tmp_path, capsys):
    """`file=DIR/a\\:b.raw` names the file `a:b.raw` (a bare `:` separates options, so it was read as a format)."""
    png = tmp_path / "red.png"
    Image.new("RGB", (64, 48), "red").save(png)
    spec = f"virtual:64x48:file={tmp_path}/a\\:b.raw:RGB565"
    assert main(["show", str(png), "-d", spec, "--duration", "0"]) == 0, capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["a:b.raw", "a:b.raw.state.json", "red.png"]
    with fbgfx.open(spec, readonly=True) as fb:
        assert fb.format.name == "RGB565" and fb.snapshot().getpixel((5, 5)) == (255, 0, 0)
    assert main(["show", str(png), "-d", f"virtual:64x48:file={tmp_path}/x:y.raw", "--duration", "0"]) == 2
    assert "'y.raw'" in capsys.readouterr().err  # unescaped: the rest is taken for a format, and the error says so
