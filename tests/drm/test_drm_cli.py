"""fbgfx info, grab and mode on drm: displays, with the fake card of tests/support/fake_drm.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from support.fake_drm import FakeCard

import fbgfx.cli.play
import fbgfx.drm as drm
import fbgfx.drm.discovery
from fbgfx.cli import main
from fbgfx.device import Framebuffer
from fbgfx.drm import CardInfo, DrmDevice


def run(capsys, *argv):
    """Run main() in-process; return (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def card(monkeypatch):
    """A fake card that fbgfx.drm opens for any /dev/dri path."""
    card = FakeCard()
    monkeypatch.setattr(fbgfx.drm.discovery, "Card", lambda path: card)
    monkeypatch.setattr(drm.DrmDevice, "open", classmethod(lambda cls, spec, **k: DrmDevice(card, spec, console=False)))
    return card


def fake_probe(card: FakeCard) -> CardInfo:
    return CardInfo(card.path, "fake-drm", (card.connector(30),), (card.crtc(40),), tuple(card.planes()))


def test_info_lists_connectors_modes_crtcs_planes(capsys, monkeypatch, card):
    """info on drm: lists connectors, their modes (preferred marked), CRTCs and plane formats."""
    monkeypatch.setattr("fbgfx.cli.info.probe", lambda path: fake_probe(card))
    code, out, err = run(capsys, "info", "-d", "drm:card0")
    assert code == 0, err
    assert "/dev/dri/card0: driver fake-drm" in out
    assert "connector Virtual-1 (connected), 300x200 mm" in out
    assert "modes: 1280x800@60 preferred, 1920x1080@60" in out
    assert "crtc 40: 1280x800@60 fb 7 at 0,0" in out
    assert "XR24 AR24 RG16" in out


def test_info_json_on_drm(capsys, monkeypatch, card):
    """info --json on drm: gives connectors with modes and the preferred flag."""
    monkeypatch.setattr("fbgfx.cli.info.probe", lambda path: fake_probe(card))
    code, out, _ = run(capsys, "info", "--json", "-d", "drm:card0")
    data = json.loads(out)
    assert code == 0 and data["device"] == "drm:/dev/dri/card0"
    conn = data["connectors"][0]
    assert conn["name"] == "Virtual-1" and conn["connected"] is True
    assert conn["modes"][0]["hdisplay"] == 1280 and conn["modes"][0]["preferred"] is True
    assert data["planes"][0]["formats"] == ["XR24", "AR24", "RG16"]


def test_grab_reads_what_another_program_shows(capsys, tmp_path, card):
    """grab on drm: saves the picture on the CRTC (read through GETFB2), not a new one."""
    holder = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    try:
        rgb = np.random.default_rng(2).integers(0, 256, (800, 1280, 3), dtype=np.uint8)
        holder.pixels[...] = holder.format.pack(rgb)
        code, _, err = run(capsys, "grab", tmp_path / "shot.png", "-d", "drm:card0")
        assert code == 0, err
        assert np.array_equal(np.asarray(Image.open(tmp_path / "shot.png")), rgb)
        assert len(card.setcrtc) == 1  # grab changed nothing on the display
    finally:
        card.fd = 3
        holder.close()


def test_mode_list_on_drm(capsys, card):
    """mode --list on drm: lists the connector's modes with the current one starred."""
    code, out, err = run(capsys, "mode", "--list", "-d", "drm:card0")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "current: 1280x800-32 XRGB8888 (60 Hz)"
    assert lines[1].startswith("* 1280x800") and "60 Hz" in lines[1]
    assert any(line.startswith("  1024x768") for line in lines)


def test_mode_refused_on_drm_names_the_modes(capsys, card):
    """mode WxH --test that the connector does not list is one error line naming its modes."""
    code, _, err = run(capsys, "mode", "1000x700", "--test", "-d", "drm:card0")
    assert code == 2
    assert "its modes: 1280x800@60" in err and err.count("\n") == 1


def test_info_on_drm_without_a_card_lists_every_card(capsys, monkeypatch, card):
    """info -d drm: describes every card (--json: a list), connected or not."""
    other = FakeCard(connected=False)
    other.path = "/dev/dri/card1"
    monkeypatch.setattr("fbgfx.cli._device.find_display", lambda: "/dev/dri/card0")
    monkeypatch.setattr("fbgfx.cli.info.find_cards", lambda: ["/dev/dri/card0", "/dev/dri/card1"])
    monkeypatch.setattr("fbgfx.cli.info.probe", lambda path: fake_probe(card if path.endswith("0") else other))
    code, out, err = run(capsys, "info", "-d", "drm:")
    assert code == 0, err
    assert "/dev/dri/card0: driver fake-drm" in out and "/dev/dri/card1: driver fake-drm" in out
    assert "connector Virtual-1 (disconnected)" in out
    code, out, _ = run(capsys, "info", "--json", "-d", "drm:")
    assert [c["path"] for c in json.loads(out)] == ["/dev/dri/card0", "/dev/dri/card1"]


def test_show_on_drm_puts_the_picture_on_the_crtc(capsys, tmp_path, card):
    """show -d drm: draws the image into the buffer the CRTC shows, and close gives the
    display back."""
    img = Image.new("RGB", (1280, 800), (10, 200, 30))
    img.save(tmp_path / "green.png")
    seen = []
    real_close = DrmDevice.close

    def close_after_look(self):
        if self._buffers is not None:
            seen.append(card.scanout().view("<u4")[400, 640])
        real_close(self)

    DrmDevice.close = close_after_look
    try:
        code, _, err = run(capsys, "show", tmp_path / "green.png", "-d", "drm:card0", "--duration", "0")
    finally:
        DrmDevice.close = real_close
    assert code == 0, err
    assert seen == [(10 << 16) | (200 << 8) | 30]
    assert card.state.fb_id == 7  # the console's framebuffer again


def test_play_box_on_legacy_kms_says_composed(tmp_path, capsys, monkeypatch, card):
    """play --box on a drm: display driven by legacy KMS: composed by fbgfx, saying so;
    the card shows the video in the box and the screen around it."""
    frames = [Image.new("RGB", (40, 20), c) for c in ((255, 0, 0), (0, 0, 255))]
    anim = tmp_path / "a.gif"
    frames[0].save(anim, save_all=True, append_images=frames[1:], duration=40)
    shown = []
    play_on = fbgfx.cli.play.play_on

    def watched(*args):
        play_on(*args)
        shown.append(card.scanout().view("<u4").copy())

    monkeypatch.setattr(fbgfx.cli.play, "play_on", watched)
    code, _, err = run(capsys, "play", anim, "--box", "100,50,140,70", "--fps", "0", "-d", "drm:card0")
    assert code == 0, err
    assert "fbgfx: play: video composed by fbgfx (the display is driven by legacy KMS (no atomic modesetting))" in err
    assert len(shown) == 1
    inside = np.zeros(shown[0].shape, bool)
    inside[50:70, 100:140] = True
    assert (shown[0][inside] == 0x0000FF).all() and (shown[0][~inside] == 0).all()
