"""Several monitors from one program (drm:), fbgfx.displays() and info --all, on fake cards."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.fake_drm import CONNECTOR, CRTC, FakeCard, make_mode

import fbgfx
import fbgfx._displays as listing
import fbgfx.drm.discovery
from fbgfx.cli import main
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice
from fbgfx.drm.discovery import edid_monitor_name

SMALL = (make_mode(1280, 720, preferred=True), make_mode(1024, 768), make_mode(800, 600), make_mode(640, 480))
BIG = (make_mode(1920, 1080, preferred=True), make_mode(1280, 720), make_mode(800, 600))


def open_fb(card, **options):
    """A Framebuffer on a DrmDevice of the fake card."""
    return Framebuffer(DrmDevice(card, "drm:card0", console=False, **options), "drm:card0")


@pytest.fixture
def two_cards(monkeypatch):
    """/dev/dri/card0 and card1 as fake cards that fbgfx opens by path."""
    cards = {
        "/dev/dri/card0": FakeCard(heads=2, head_connected=[False, False], crtc_on=False),
        "/dev/dri/card1": FakeCard(heads=1, path="/dev/dri/card1", driver="fake-dsi", crtc_on=False),
    }
    monkeypatch.setattr(fbgfx.drm.discovery, "find_cards", lambda dri_dir="/dev/dri": list(cards))
    monkeypatch.setattr(listing, "find_cards", lambda dri_dir="/dev/dri": list(cards))
    monkeypatch.setattr(fbgfx.drm.discovery, "Card", lambda path: Peek(cards[path]))
    monkeypatch.setattr(listing, "monitor_name", lambda card, conn, root: "QEMU Monitor")
    return cards


class Peek:
    """A second look at a fake card (what discovery opens): closing it leaves the card open."""

    def __init__(self, card):
        self._card = card

    def __getattr__(self, name):
        return getattr(self._card, name)

    def close(self):
        pass


def open_spec(cards, spec):
    """fbgfx's open of a drm: spec, with the fake cards behind the paths."""
    return Framebuffer(DrmDevice.open(spec, console=False, opener=cards.__getitem__), spec)


def edid(name: bytes) -> bytes:
    """An EDID base block whose fourth descriptor names the monitor."""
    block = bytearray(128)
    block[:8] = b"\x00\xff\xff\xff\xff\xff\xff\x00"
    block[108:113] = b"\x00\x00\x00\xfc\x00"
    block[113:126] = (name + b"\n").ljust(13, b" ")
    return bytes(block)


# -- several connectors of one card -----------------------------------------------------------------


def test_two_connectors_of_one_card_show_their_own_pictures():
    """Virtual-1 and Virtual-2 open together: each its own CRTC, buffers and picture."""
    card = FakeCard(heads=2)
    with open_fb(card, connector="Virtual-1") as a, open_fb(card, connector="Virtual-2") as b:
        assert (a.drm.connector, a.drm.crtc_id) == ("Virtual-1", CRTC)
        assert (b.drm.connector, b.drm.crtc_id) == ("Virtual-2", CRTC + 1)
        assert not set(a.drm.fb_ids) & set(b.drm.fb_ids)
        with a.screen().frame() as s:
            s.clear("red")
        with b.screen().frame() as s:
            s.clear("blue")
        assert (card.scanout(CRTC)[0, :4] == [0, 0, 255, 0]).all()  # XRGB8888 red, little-endian
        assert (card.scanout(CRTC + 1)[0, :4] == [255, 0, 0, 0]).all()
        assert card.calls.count("set_master") == 1  # one descriptor, one DRM master


def test_flips_on_one_connector_leave_the_other():
    """Page flips of one display are queued on its CRTC only; the other's picture stays."""
    card = FakeCard(heads=2)
    with open_fb(card, connector="Virtual-1") as a, open_fb(card, connector="Virtual-2") as b:
        with b.screen().frame() as s:
            s.clear("white")
        shown_b = card.scanout(CRTC + 1).copy()
        flips_b = list(card.flips_by_crtc[CRTC + 1])
        screen = a.screen()
        for color in ("red", "green", "blue"):
            with screen.frame() as s:
                s.clear(color)
        assert len(card.flips_by_crtc[CRTC]) == 3 and card.flips_by_crtc[CRTC + 1] == flips_b
        assert (card.scanout(CRTC + 1) == shown_b).all()
        a.wait_flip()
        assert (a.drm.flips, a.drm.flip_events) == (3, 3)


def test_a_connector_open_twice_in_one_program_is_a_clear_error():
    """Opening a connector this program already shows on says so (EBUSY), and changes nothing."""
    card = FakeCard(heads=2)
    with open_fb(card, connector="Virtual-1") as a:
        before = dict(card.states)
        with pytest.raises(fbgfx.FramebufferError, match="Virtual-1 is already open in this program") as info:
            open_fb(card, connector="Virtual-1")
        assert info.value.errno == 16
        assert card.states == before and a.drm.connector == "Virtual-1"
        with a.screen().frame() as s:
            s.clear("green")
        assert card.fd >= 0


def test_default_open_takes_the_next_free_connected_connector():
    """Two plain opens show on the two connected connectors in turn; a third says all are open."""
    card = FakeCard(heads=2)
    with open_fb(card) as a, open_fb(card) as b:
        assert (a.drm.connector, b.drm.connector) == ("Virtual-1", "Virtual-2")
        with pytest.raises(fbgfx.FramebufferError, match="every connected display is already open"):
            open_fb(card)


def test_closing_one_display_keeps_the_other_and_the_last_gives_the_card_back():
    """The first close restores its CRTC only; the last drops master and closes the card."""
    card = FakeCard(heads=2)
    a, b = open_fb(card, connector="Virtual-1"), open_fb(card, connector="Virtual-2")
    a.close()
    assert card.states[CRTC].fb_id == 7 and card.master and card.fd >= 0  # the console's fb again
    with b.screen().frame() as s:
        s.clear("red")
    assert (card.scanout(CRTC + 1)[0, :4] == [0, 0, 255, 0]).all()
    b.close()
    assert card.states[CRTC + 1].fb_id == 0  # it was off before
    assert not card.master and card.fd == -1 and card.calls.count("drop_master") == 1


def test_another_program_holding_the_card_is_refused_as_before():
    """When another program is DRM master, opening any connector raises FramebufferError."""
    card = FakeCard(heads=2, master_error=16)
    with pytest.raises(fbgfx.FramebufferError, match="another program owns this display"):
        open_fb(card, connector="Virtual-2")
    assert card.fd == -1


# -- mirroring ----------------------------------------------------------------------------------------


def test_mirror_shows_one_picture_on_both_at_the_largest_common_mode():
    """connector=A,B: one set of buffers on both CRTCs, at the largest size both offer."""
    card = FakeCard(heads=2, head_modes=[SMALL, BIG])
    with open_fb(card, connector="Virtual-1,Virtual-2") as fb:
        assert fb.size == (1280, 720) and fb.drm.connectors == ("Virtual-1", "Virtual-2")
        assert fb.drm.connector == "Virtual-1,Virtual-2" and fb.drm.crtc_ids == (CRTC, CRTC + 1)
        screen = fb.screen()
        for color in ("red", "blue"):
            with screen.frame() as s:
                s.clear(color)
        assert card.states[CRTC].fb_id == card.states[CRTC + 1].fb_id
        assert (card.scanout(CRTC) == card.scanout(CRTC + 1)).all()
        assert (card.scanout(CRTC + 1)[0, :4] == [255, 0, 0, 0]).all()
        assert len(card.flips_by_crtc[CRTC]) == len(card.flips_by_crtc[CRTC + 1]) == 2
        assert [str(m) for m in fb.modes()] == ["1280x720", "800x600"]


def test_mirror_mode_option_and_set_mode_take_a_shared_size():
    """mode= picks a size both offer; set_mode switches both CRTCs."""
    card = FakeCard(heads=2, head_modes=[SMALL, BIG])
    with open_fb(card, connector="Virtual-1,Virtual-2", mode="800x600") as fb:
        assert fb.size == (800, 600)
        fb.set_mode(1280, 720)
        assert card.states[CRTC].mode.hdisplay == card.states[CRTC + 1].mode.hdisplay == 1280


def test_mirror_mode_not_shared_lists_the_shared_modes():
    """A mode= one of them lacks is a ModeError naming what they share; nothing is shown."""
    card = FakeCard(heads=2, head_modes=[SMALL, BIG])
    with pytest.raises(fbgfx.ModeError, match=r"1920x1080 is not a mode .* all offer; they share: 1280x720@60, 800x"):
        open_fb(card, connector="Virtual-1,Virtual-2", mode="1920x1080")
    assert card.states[CRTC].fb_id == 7 and card.fd == -1


def test_mirror_of_connectors_without_a_common_mode_is_a_mode_error():
    """Connectors that share no size: ModeError listing each one's modes."""
    only = (make_mode(1024, 600, preferred=True),)
    card = FakeCard(heads=2, head_modes=[only, BIG])
    with pytest.raises(fbgfx.ModeError, match="share no mode: Virtual-1 offers 1024x600@60; Virtual-2 offers 1920"):
        open_fb(card, connector="Virtual-1,Virtual-2")


# -- finding the card ---------------------------------------------------------------------------------


def test_default_open_takes_the_first_connected_connector_over_all_cards(two_cards):
    """drm: with card0 dark opens card1's connector (a Pi 5's DSI panel on card1)."""
    with open_spec(two_cards, "drm:") as fb:
        assert fb.drm.card == "/dev/dri/card1" and fb.drm.connector == "Virtual-1"


def test_a_connector_name_without_a_card_finds_its_card(two_cards):
    """drm:connector=NAME opens the card that has that connector."""
    two_cards["/dev/dri/card0"].plug(1)
    with open_spec(two_cards, "drm:connector=Virtual-2") as fb:
        assert fb.drm.card == "/dev/dri/card0" and fb.drm.connector == "Virtual-2"


def test_connectors_on_two_cards_in_one_program(two_cards):
    """A display on each card: each card has its own master and descriptor."""
    two_cards["/dev/dri/card0"].plug(0)
    with open_spec(two_cards, "drm:card0:connector=Virtual-1") as a, open_spec(two_cards, "drm:card1") as b:
        assert (a.drm.card, b.drm.card) == ("/dev/dri/card0", "/dev/dri/card1")
        assert all(card.master for card in two_cards.values())


# -- listing displays --------------------------------------------------------------------------------


def test_displays_lists_every_connector_of_every_card(two_cards, tmp_path):
    """fbgfx.displays(): card, connector, connected, preferred, modes, size_mm, monitor, spec."""
    two_cards["/dev/dri/card0"].plug(1, SMALL)
    found = fbgfx.displays(fb_glob=str(tmp_path / "fb*"))
    assert [(d.card, d.connector, d.connected) for d in found] == [
        ("/dev/dri/card0", "Virtual-1", False),
        ("/dev/dri/card0", "Virtual-2", True),
        ("/dev/dri/card1", "Virtual-1", True),
    ]
    d = found[1]
    assert d.spec == "drm:card0:connector=Virtual-2"
    assert (d.preferred.width, d.preferred.height, d.preferred.refresh) == (1280, 720, 60)
    assert [(m.width, m.height) for m in d.modes] == [(1280, 720), (1024, 768), (800, 600), (640, 480)]
    assert d.size_mm == (300, 200) and d.monitor == "QEMU Monitor"
    assert found[0].preferred is None and found[0].monitor is None and found[0].size_mm is None


def test_a_displays_spec_opens_that_display(two_cards, tmp_path):
    """The spec of a listed display is what fbgfx.open takes for it."""
    two_cards["/dev/dri/card0"].plug(1, SMALL)
    listed = [d for d in fbgfx.displays(fb_glob=str(tmp_path / "fb*")) if d.connected][0]
    with open_spec(two_cards, listed.spec) as fb:
        assert (fb.drm.connector, fb.size) == (listed.connector, (1280, 720))


def test_info_all_prints_every_display_and_its_spec(two_cards, capsys, monkeypatch):
    """fbgfx info --all: a line per display with its spec; --json the same as data."""
    monkeypatch.setattr(listing, "glob", type("G", (), {"glob": staticmethod(lambda p: [])}))
    assert main(["info", "--all"]) == 0
    out = capsys.readouterr().out
    assert "drm:card0:connector=Virtual-1  (disconnected)" in out
    assert "drm:card1:connector=Virtual-1  (connected, 1280x800@60, 'QEMU Monitor', 300x200 mm)" in out
    assert main(["info", "--all", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[2]["spec"] == "drm:card1:connector=Virtual-1" and data[2]["preferred"] == "1280x800@60"
    assert data[2]["size_mm"] == [300, 200] and "1024x768@75" in data[2]["modes"]


def test_displays_a_user_may_not_open_come_from_sysfs(tmp_path, monkeypatch):
    """Without permission to open the card or /dev/fb0, displays() reads sysfs: status,
    modes, the EDID's name and size, the fbdev's current mode."""

    def refuse(path):
        raise fbgfx.FramebufferError(13, "permission denied", path)

    monkeypatch.setattr(fbgfx.drm.discovery, "Card", refuse)
    monkeypatch.setattr(listing, "find_cards", lambda dri_dir="/dev/dri": ["/dev/dri/card0"])
    sysfs = tmp_path / "sys"
    hdmi1, hdmi2, fb0 = sysfs / "drm/card0-HDMI-A-1", sysfs / "drm/card0-HDMI-A-2", sysfs / "graphics/fb0"
    for folder in (hdmi1, hdmi2, fb0):
        folder.mkdir(parents=True)
    block = bytearray(edid(b"DELL U2415"))
    block[21:23] = bytes([53, 30])  # centimetres
    (hdmi1 / "status").write_text("connected\n")
    (hdmi1 / "modes").write_text("1920x1200\n1920x1080\n1920x1080i\n1280x720\n")
    (hdmi1 / "edid").write_bytes(bytes(block))
    (hdmi2 / "status").write_text("disconnected\n")
    (hdmi2 / "modes").write_text("")
    (fb0 / "mode").write_text("U:1024x768p-60\n")
    (fb0 / "modes").write_text("U:1024x768p-60\nU:800x600p-60\n")
    node = tmp_path / "fb0"  # a plain file: opening it as a framebuffer fails too
    node.write_bytes(b"")
    one, two, fb = fbgfx.displays(fb_glob=str(node), sysfs=str(sysfs))
    assert (one.connector, one.connected, one.spec) == ("HDMI-A-1", True, "drm:card0:connector=HDMI-A-1")
    assert (one.preferred.width, one.preferred.height) == (1920, 1200)
    assert [(m.width, m.height, m.interlaced) for m in one.modes][1:3] == [(1920, 1080, False), (1920, 1080, True)]
    assert (one.monitor, one.size_mm) == ("DELL U2415", (530, 300))
    assert (two.connector, two.connected, two.preferred, two.monitor) == ("HDMI-A-2", False, None, None)
    assert (fb.card, fb.connector, fb.spec) == (str(node), None, str(node))
    assert (fb.preferred.width, fb.preferred.height, fb.preferred.refresh) == (1024, 768, 60)
    assert [(m.width, m.height) for m in fb.modes] == [(1024, 768), (800, 600)]


def test_edid_monitor_name_reads_the_product_name_descriptor():
    """The EDID's 0xFC descriptor is the monitor's name; no EDID or no descriptor: None."""
    assert edid_monitor_name(edid(b"DELL U2415")) == "DELL U2415"
    assert edid_monitor_name(b"") is None
    assert edid_monitor_name(bytes(128)) is None


def test_two_displays_draw_independently_in_numpy():
    """Pixels written to one display's memory do not appear on the other."""
    card = FakeCard(heads=2)
    with open_fb(card, connector="Virtual-1") as a, open_fb(card, connector="Virtual-2") as b:
        a.pixels[:] = 0x00FF00
        a.flush()
        assert int(np.asarray(b.pixels).max()) == 0
        assert (card.scanout(CRTC)[0, :4] == [0, 255, 0, 0]).all()
        assert card.connector(CONNECTOR + 1).connected
