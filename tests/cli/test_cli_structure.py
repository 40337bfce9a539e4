"""The command line as a package: commands registered once, shared helpers written once."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support import ROOT
from support.cli_run import V565, run

import fbgfx.cli
from fbgfx.cli import COMMANDS, build_parser, main
from fbgfx.cli._command import Command, Context
from fbgfx.convert import has_alpha
from fbgfx.modes import Timings, read_fb_modes
from fbgfx.screeninfo import VarScreenInfo, describe_mode


def test_every_command_is_a_module_with_a_command() -> None:
    """COMMANDS lists every command (the kiosk tools after serve), each from its own module, all in the parser."""
    names = ["info", "show", "play", "grab", "mode", "demo", "touch", "serve", "mirror", "idle", "bench"]
    assert [c.name for c in COMMANDS] == names
    for command in COMMANDS:
        module = getattr(fbgfx.cli, command.name)
        assert module.COMMAND is command
    choices = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert list(choices) == [c.name for c in COMMANDS]


def test_play_leaves_playing_to_the_player() -> None:
    """cli/play.py reads options and hands them to fbgfx.video's one player: it stays under
    200 lines (issue 28; the player's pacing and read-ahead live in fbgfx/video/)."""
    lines = (Path(ROOT) / "fbgfx" / "cli" / "play.py").read_text().count("\n")
    assert 0 < lines <= 200, lines


def test_a_new_command_plugs_in(capsys: Any, monkeypatch: Any) -> None:
    """A command added to COMMANDS gets --device (and --out when asked), its options and its run."""
    seen = []

    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--calibrate", action="store_true")

    def run_knob(args: argparse.Namespace, context: Context) -> int:
        seen.append((args.device, args.calibrate, args.out))
        context.note("turn it")
        return 0

    knob = Command("knob", "read a rotary knob", "Read a rotary knob.", add, run_knob, out=True)
    monkeypatch.setattr(fbgfx.cli, "COMMANDS", (*COMMANDS, knob))
    code, _, err = run(capsys, "knob", "--calibrate", "-d", V565, "--out", "t.png")
    assert code == 0 and seen == [(V565, True, "t.png")]
    assert err == "fbgfx: note: turn it\n"


def test_notes_belong_to_one_run(capsys: Any, tmp_path: Path) -> None:
    """A note from one command run (virtual screen without --out) does not show up in the next run."""
    img = tmp_path / "a.png"
    Image.new("RGB", (8, 8), "red").save(img)
    code, _, err = run(capsys, "show", img, "--duration", "0", "-d", V565)
    assert code == 0 and "fbgfx: note: nothing outside this process" in err
    code, _, err = run(capsys, "info", "-d", V565)
    assert code == 0 and err == ""


def test_entry_points() -> None:
    """The console script points at fbgfx.cli:main and the package is installed with fbgfx.cli."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with open(Path(ROOT) / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)
    assert project["project"]["scripts"]["fbgfx"] == "fbgfx.cli:main"
    packages = project["tool"]["setuptools"].get("packages")
    if isinstance(packages, dict):  # packages.find: every fbgfx.* package ships
        assert "fbgfx.*" in packages["find"]["include"]
    else:
        assert packages is None or "fbgfx.cli" in packages
    assert main(["--version"]) == 0


def test_describe_mode_one_copy() -> None:
    """describe_mode reads a var or a set_mode request alike, adding the virtual size when it differs."""
    var = VarScreenInfo(xres=800, yres=600, xres_virtual=800, yres_virtual=1200, bits_per_pixel=16)
    assert describe_mode(var) == "800x600-16 (virtual 800x1200)"
    asked = {"xres": 640, "yres": 480, "xres_virtual": 640, "yres_virtual": 480, "bits_per_pixel": 32}
    assert describe_mode(asked) == "640x480-32"


def test_refresh_rate_one_copy(tmp_path: Path, capsys: Any) -> None:
    """Timings.rates gives fbset's clocks (VESA 640x480@60: 25.175 MHz, 31.469 kHz, 59.94 Hz) for fb.modes and info."""
    timings = Timings(39721, 48, 16, 33, 10, 96, 2)
    rates = timings.rates(640, 480)
    assert rates is not None
    assert rates.pixel_clock == pytest.approx(25.175e6, rel=1e-4)
    assert rates.line_rate == pytest.approx(31.469e3, rel=1e-4)
    assert rates.refresh == pytest.approx(59.94, rel=1e-4)
    assert Timings(0, 48, 16, 33, 10, 96, 2).rates(640, 480) is None
    modes = tmp_path / "fb.modes"
    modes.write_text('mode "640x480-60"\n  geometry 640 480 640 480 16\n  timings 39721 48 16 33 10 96 2\nendmode\n')
    assert [m.refresh for m in read_fb_modes(str(modes))] == [60]


@pytest.mark.parametrize(
    "mode, info, alpha",
    [
        ("RGB", {}, False),
        ("RGBA", {}, True),
        ("LA", {}, True),
        ("PA", {}, True),
        ("RGBa", {}, True),
        ("La", {}, True),
        ("P", {"transparency": 0}, True),
        ("L", {}, False),
        ("P", {}, False),
    ],
)
def test_has_alpha_one_copy(mode: str, info: dict[str, Any], alpha: bool) -> None:
    """convert.has_alpha: the one list of image modes with alpha (and a transparency key)."""
    im = Image.new(mode, (2, 2))
    im.info.update(info)
    assert has_alpha(im) is alpha


@pytest.mark.parametrize("command, drawing", [("show", "_slideshow"), ("play", "play_on"), ("demo", "run_demo")])
def test_interrupted_drawing_still_saves_out(
    command: str, drawing: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """Ctrl-C while show, play or demo draws: --out still gets the picture shown, then the screen closes (130)."""
    screens: list[fbgfx.Screen] = []

    def interrupted(screen: fbgfx.Screen, *args: Any) -> None:
        screens.append(screen)
        with screen.frame() as s:
            s.clear((255, 0, 0))
        raise KeyboardInterrupt

    monkeypatch.setattr(getattr(fbgfx.cli, command), drawing, interrupted)
    picture = tmp_path / "a.png"
    Image.new("RGB", (8, 8), "blue").save(picture)
    given = {"show": [picture], "play": [picture], "demo": []}[command]
    out = tmp_path / "o.png"
    code, _, err = run(capsys, command, *given, "--out", out, "-d", V565)
    assert code == 130, err
    assert len(screens) == 1 and screens[0].closed
    with Image.open(out) as im:
        assert im.convert("RGB").getpixel((400, 240)) == (255, 0, 0)
