"""--rotate DEG on show, play, mode, demo and grab: the command draws on the turned screen;
grab turns the panel's picture back."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import fbgfx
from fbgfx.cli import main

# Pillow's transposes turn counter-clockwise; --rotate 90 turns the picture clockwise.
TRANSPOSE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


def run(capsys, *argv):
    """Run main() in-process; return (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def picture(path, size=(60, 40)):
    """An asymmetric picture (a wrong turn shows), saved as PNG."""
    im = Image.new("RGB", size, (0, 0, 80))
    im.paste((255, 0, 0), (0, 0, size[0] // 3, size[1] // 4))
    im.paste((0, 255, 0), (size[0] - 6, size[1] - 10, size[0], size[1]))
    im.save(path)
    return str(path)


def panel(png):
    """The pixels of a saved picture."""
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB"))


def turned(png, rotate):
    """A saved (logical) picture as a panel turned ``rotate`` degrees shows it."""
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB").transpose(TRANSPOSE[rotate]))


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_show_rotate_draws_turned(tmp_path, capsys, rotate):
    """show --rotate DEG shows what show on the logical-size screen shows, turned on the panel."""
    img = picture(tmp_path / "p.png")
    logical = "virtual:48x64:XRGB8888" if rotate != 180 else "virtual:64x48:XRGB8888"
    ref, out = tmp_path / "ref.png", tmp_path / "out.png"
    assert run(capsys, "show", img, "--duration", "0", "--out", ref, "-d", logical)[0] == 0
    code, _, err = run(capsys, "show", img, "--duration", "0", "--rotate", rotate, "--out", out, "-d",
                       "virtual:64x48:XRGB8888")  # fmt: skip
    assert code == 0, err
    assert (panel(out) == turned(ref, rotate)).all()


def test_play_rotate_draws_turned(tmp_path, capsys):
    """play --rotate 90 plays on the turned screen: the last frame appears turned."""
    frames = [Image.open(picture(tmp_path / f"f{i}.png")).convert("RGB") for i in range(2)]
    frames[1] = frames[1].transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    anim = tmp_path / "a.gif"
    frames[0].save(anim, save_all=True, append_images=frames[1:], duration=[20, 20], loop=0)
    ref, out = tmp_path / "ref.png", tmp_path / "out.png"
    assert run(capsys, "play", anim, "--fps", "0", "--out", ref, "-d", "virtual:48x64:XRGB8888")[0] == 0
    code, _, err = run(capsys, "play", anim, "--fps", "0", "--rotate", "90", "--out", out, "-d",
                       "virtual:64x48:XRGB8888")  # fmt: skip
    assert code == 0, err
    assert (panel(out) == turned(ref, 90)).all()


def test_mode_preview_rotate_turns_the_card(tmp_path, capsys):
    """mode WxH --rotate 90 previews the test card drawn for the turned screen, turned."""
    ref, out = tmp_path / "ref.png", tmp_path / "out.png"
    assert run(capsys, "mode", "48x64-32", "--duration", "0", "--out", ref, "-d", "virtual:100x100:XRGB8888")[0] == 0
    code, _, err = run(capsys, "mode", "64x48-32", "--duration", "0", "--rotate", "90", "--out", out, "-d",
                       "virtual:100x100:XRGB8888")  # fmt: skip
    assert code == 0, err
    assert panel(out).shape == (48, 64, 3)
    assert (panel(out) == turned(ref, 90)).all()


def test_demo_rotate_runs_on_the_turned_screen(tmp_path, capsys):
    """demo --rotate 90 runs on a turned screen and saves the panel's picture."""
    out = tmp_path / "demo.png"
    code, _, err = run(capsys, "demo", "--seconds", "0", "--rotate", "90", "--out", out, "-d",
                       "virtual:64x48:XRGB8888")  # fmt: skip
    assert code == 0, err
    assert panel(out).shape == (48, 64, 3) and panel(out).any()


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_grab_rotate_saves_the_logical_picture(tmp_path, capsys, rotate):
    """grab --rotate DEG saves the picture as drawn on a screen turned DEG; --region is in its coordinates."""
    spec = f"virtual:64x48:XRGB8888:file={tmp_path / 'fb.raw'}"
    drawn = np.asarray(Image.open(picture(tmp_path / "p.png", (48, 64) if rotate != 180 else (64, 48))))
    with fbgfx.open(spec) as fb:
        with fb.screen(rotate=rotate) as screen:
            screen.present(drawn)
    out = tmp_path / "grab.png"
    code, _, err = run(capsys, "grab", out, "--rotate", rotate, "-d", spec)
    assert code == 0, err
    assert (panel(out) == drawn).all()
    code, _, err = run(capsys, "grab", out, "--rotate", rotate, "--region", "2,3,10,20", "-d", spec)
    assert code == 0, err
    assert (panel(out) == drawn[3:23, 2:12]).all()


def test_rotate_from_environment_and_bad_values(tmp_path, capsys, monkeypatch):
    """$FBGFX_ROTATE is the default for --rotate; a bad --rotate or $FBGFX_ROTATE is one error line, exit 2."""
    img = picture(tmp_path / "p.png")
    out, ref = tmp_path / "out.png", tmp_path / "ref.png"
    code, _, err = run(capsys, "show", img, "--duration", "0", "--rotate", "45", "-d", "virtual:64x48")
    assert code == 2 and err.startswith("fbgfx: error: ") and "--rotate" in err and len(err.splitlines()) == 1
    assert run(capsys, "show", img, "--duration", "0", "--rotate", "90", "--out", ref, "-d", "virtual:64x48")[0] == 0
    monkeypatch.setenv("FBGFX_ROTATE", "90")
    assert run(capsys, "show", img, "--duration", "0", "--out", out, "-d", "virtual:64x48")[0] == 0
    assert (panel(out) == panel(ref)).all()
    monkeypatch.setenv("FBGFX_ROTATE", "sideways")
    for argv in (("show", img, "--duration", "0"), ("grab", out), ("mode", "32x32-32", "--duration", "0")):
        code, _, err = run(capsys, *argv, "-d", "virtual:64x48")
        assert code == 2 and "FBGFX_ROTATE" in err and len(err.splitlines()) == 1, argv
