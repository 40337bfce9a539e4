"""The drm: backend against a fake card (tests/support/fake_drm.py); real drivers are in tests/kernel."""

from __future__ import annotations

import errno

import numpy as np
import pytest
from support.fake_drm import CONSOLE_FB, CRTC, FakeCard, make_mode
from support.refuse import refuse_open

import fbgfx
from fbgfx import _restore
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, fourcc, fourcc_name, parse_spec


def open_fake(card: FakeCard = None, **options) -> Framebuffer:
    card = card or FakeCard()
    return Framebuffer(DrmDevice(card, "drm:card0", console=False, **options), "drm:card0")


@pytest.fixture
def card():
    """A fake card showing the console's framebuffer at 1280x800."""
    return FakeCard()


@pytest.fixture
def fb(card):
    """A drm: Framebuffer on the fake card, closed afterwards."""
    fb = open_fake(card)
    yield fb
    fb.close()


# -- specs --------------------------------------------------------------------------------------


def test_parse_spec_forms():
    """drm:, drm:cardN, drm:/path and options parse into a card path and options."""
    assert parse_spec("drm:") == (None, {})
    assert parse_spec("drm") == (None, {})
    assert parse_spec("drm:card1") == ("/dev/dri/card1", {})
    assert parse_spec("drm:/dev/dri/card0") == ("/dev/dri/card0", {})
    assert parse_spec("drm:card0:connector=HDMI-A-1:mode=1280x720@60") == (
        "/dev/dri/card0",
        {"connector": "HDMI-A-1", "mode": "1280x720@60"},
    )
    assert parse_spec("drm::mode=800x600:format=rgb565") == (None, {"mode": "800x600", "format": "rgb565"})


@pytest.mark.parametrize("spec", ["drm:card0:size=3", "drm:card0:mode=big", "drm::format=C8", "drm:a:b"])
def test_parse_spec_rejects_bad_options(spec):
    """Unknown options, bad modes and formats raise ValueError naming what is allowed."""
    with pytest.raises(ValueError):
        parse_spec(spec)


def test_fourcc_round_trip():
    """fourcc codes convert to the kernel's numbers and back."""
    assert fourcc("XR24") == 0x34325258
    assert fourcc_name(0x34325258) == "XR24"


# -- opening -------------------------------------------------------------------------------------


def test_open_takes_the_display(fb, card):
    """Open becomes master, sets the CRTC to its own black buffer at the preferred mode."""
    assert card.master
    assert (fb.width, fb.height, fb.format.name) == (1280, 800, "XRGB8888")
    assert fb.stride == 5120
    crtc, fb_id, x, y, conns, mode = card.setcrtc[-1]
    assert (crtc, x, y, conns, mode) == (CRTC, 0, 0, (30,), card.modes[0])
    assert fb_id in fb.drm.fb_ids and fb_id != CONSOLE_FB
    assert not card.scanout().any()


def test_drm_attribute_describes_the_display(fb):
    """fb.drm names driver, connector, CRTC, plane, mode, format and pages."""
    info = fb.drm
    assert (info.driver, info.connector, info.crtc_id, info.plane_id) == ("fake-drm", "Virtual-1", CRTC, 50)
    assert (info.mode.hdisplay, info.mode.vdisplay, info.fourcc, info.pages) == (1280, 800, "XR24", 2)
    assert "RG16" in info.plane_formats


def test_fbdev_only_fields_say_so(fb):
    """fb.var, fb.fix and the palette raise ENOTTY saying they are fbdev-only."""
    for name in ("var", "fix"):
        with pytest.raises(fbgfx.FramebufferError, match="fbdev-only") as info:
            getattr(fb, name)
        assert info.value.errno == errno.ENOTTY
    with pytest.raises(fbgfx.FramebufferError, match="fbdev-only"):
        fb.get_palette()
    with pytest.raises(fbgfx.FramebufferError, match="fbdev-only"):
        fb.set_palette([[1, 2, 3]])
    assert fb.palette is None


def test_fbdev_framebuffer_has_no_drm(tmp_path, open_virtual):
    """fb.drm is None on a non-DRM device."""
    vfb = open_virtual("64x48")
    assert vfb.drm is None


def test_pixels_are_the_buffer_on_screen(fb, card):
    """Writes to fb.pixels land in the buffer the CRTC scans out."""
    fb.pixels[10:20, 30:40] = 0x00FF8000
    shown = card.scanout().view("<u4")
    assert (shown[10:20, 30:40] == 0x00FF8000).all()
    assert shown.sum() == 0x00FF8000 * 100


def test_another_master_gives_a_clear_error():
    """A display held by another program raises FramebufferError with errno and advice."""
    for err in (errno.EBUSY, errno.EACCES):
        card = FakeCard(master_error=err)
        with pytest.raises(fbgfx.FramebufferError, match="another program owns this display") as info:
            open_fake(card)
        assert info.value.errno == err
        assert card.fd == -1 and not card.setcrtc and not card.dumbs


def test_unknown_connector_lists_connectors():
    """connector= naming no connector raises with the list of connectors."""
    with pytest.raises(fbgfx.FramebufferError, match=r"no connector 'HDMI-A-1'; connectors: Virtual-1 \(connected\)"):
        open_fake(connector="HDMI-A-1")


def test_no_connected_display():
    """A card without a connected display raises ENODEV."""
    with pytest.raises(fbgfx.FramebufferError, match="no connected display") as info:
        open_fake(FakeCard(connected=False))
    assert info.value.errno == errno.ENODEV


def test_mode_option_picks_a_connector_mode(card):
    """mode=WxH@HZ picks that connector mode; an unknown one is a ModeError listing modes."""
    with open_fake(card, mode="1024x768@75") as fb:
        assert fb.drm.mode.vrefresh == 75 and fb.size == (1024, 768)
    with pytest.raises(fbgfx.ModeError, match=r"its modes: 1280x800@60, 1920x1080@60, 1024x768@60"):
        open_fake(FakeCard(), mode="1000x700")


def test_rgb565_when_asked_and_offered(card):
    """format=RGB565 gives 16-bit buffers where the plane lists RG16, else a clear error."""
    with open_fake(card, format="RGB565") as fb:
        assert fb.format.name == "RGB565" and card.fourcc_on_screen() == "RG16"
    with pytest.raises(fbgfx.FramebufferError, match="does not scan out RGB565"):
        open_fake(FakeCard(formats=("XR24",)), format="RGB565")


# -- flips ---------------------------------------------------------------------------------------


def test_pan_is_a_page_flip_with_one_event_each(fb, card):
    """Panning to the other page queues a flip; each flip's event is read once."""
    rows = fb.memory.size // 2 // fb.stride  # the second buffer's first row
    fb.pixels[:] = 1
    fb.pan(0, rows)
    assert card.flips == [fb.drm.fb_ids[1]]
    fb.pixels[:] = 2  # now the second page
    assert (card.scanout().view("<u4") == 2).all()
    fb.pan(0, 0)  # waits for the first flip's event before queueing
    assert fb.wait_flip()
    assert not fb.wait_flip()
    assert (card.scanout().view("<u4") == 1).all()
    assert (fb.drm.flips, fb.drm.flip_events) == (2, 2)


def test_pages_are_whole_memory_pages_apart():
    """800x600 rows are padded so the two buffers sit end to end in one mapping."""
    card = FakeCard(modes=(make_mode(800, 600, preferred=True),))
    with open_fake(card) as fb:
        rows = fb.memory.size // 2 // fb.stride
        assert rows >= 600 and (rows * fb.stride) % 4096 == 0
        fb.pan(0, rows)
        fb.pixels[:] = 7
        assert (card.scanout().view("<u4") == 7).all() and card.scanout().shape[0] == 600


def test_one_page_when_no_room_for_two():
    """When the second buffer does not fit, the display has one page and cannot pan."""
    card = FakeCard(vram=5120 * 800 + 4096)
    with open_fake(card) as fb:
        assert fb.drm.pages == 1 and not fb.can_pan
        with pytest.raises(ValueError):
            fb.pan(0, 800)


def test_flush_sends_dirty_rectangles(fb, card):
    """fb.flush(boxes) sends DIRTYFB with the rectangles, clipped to the screen."""
    fb.flush([(10, 20, 30, 40), (1270, 790, 1300, 900)])
    assert card.dirty_rects[-1] == [(10, 20, 30, 40), (1270, 790, 1280, 800)]
    fb.flush()
    assert card.dirty_rects[-1] == [(0, 0, 1280, 800)]


def test_flush_without_driver_support_is_silent():
    """A driver that scans out the buffer itself (ENOSYS) is asked once, then no more."""
    card = FakeCard(dirty=False)
    with open_fake(card) as fb:
        fb.flush()
        fb.flush()
        assert card.calls.count("dirty_fb") == 1


def test_wait_for_vsync_without_vblank(fb):
    """Without a flip in flight and no vblank support, wait_for_vsync reports False."""
    assert fb.wait_for_vsync() is False


# -- modes ---------------------------------------------------------------------------------------


def test_modes_are_the_connectors(fb):
    """fb.modes() lists the connector's modes with their refresh rates."""
    labels = [(m.width, m.height, m.refresh) for m in fb.modes()]
    assert labels[:3] == [(1280, 800, 60), (1920, 1080, 60), (1024, 768, 60)]


def test_set_mode_to_a_connector_mode(fb, card):
    """set_mode to a listed mode makes new buffers of that size and sets the CRTC."""
    old = set(fb.drm.fb_ids)
    fb.set_mode(1024, 768)
    assert fb.size == (1024, 768) and card.state.mode.hdisplay == 1024
    assert not old & set(card.fbs)  # the old framebuffers are gone
    fb.pixels[:] = 5
    assert card.scanout().shape == (768, 4096) and (card.scanout().view("<u4") == 5).all()


def test_set_mode_refused_lists_modes(fb, card):
    """A size the connector does not list is a ModeError naming its modes; nothing changes."""
    before = (card.state, set(card.fbs))
    with pytest.raises(fbgfx.ModeError, match="its modes: 1280x800@60") as info:
        fb.set_mode(1000, 700)
    assert info.value.errno == errno.EINVAL
    assert (card.state, set(card.fbs)) == before and fb.size == (1280, 800)


def test_set_mode_depth_16(fb, card):
    """set_mode(bpp=16) switches to RGB565 buffers where the plane offers them."""
    fb.set_mode(bpp=16)
    assert fb.format.name == "RGB565" and card.fourcc_on_screen() == "RG16"


# -- giving the display back -----------------------------------------------------------------------


def test_close_restores_the_crtc_and_frees_everything(card):
    """close() shows the console's framebuffer again, frees buffers, drops master; twice is fine."""
    fb = open_fake(card)
    fb.set_mode(800, 600)
    fb.close()
    fb.close()
    assert card.state.fb_id == CONSOLE_FB and card.state.mode == card.modes[0]
    assert set(card.fbs) == {CONSOLE_FB} and not card.dumbs
    assert card.calls[-2:] == ["drop_master", "close"]
    assert fb not in _restore.registered()


def test_close_turns_off_a_crtc_that_was_off():
    """A CRTC that was off before open is off again after close."""
    card = FakeCard(crtc_on=False)
    open_fake(card).close()
    assert card.state.fb_id == 0 and card.state.mode is None


def test_restore_registry_gives_the_display_back(card):
    """The fatal-signal/exit path (restore_all) puts the console's framebuffer back."""
    fb = open_fake(card)
    try:
        _restore.restore_all()
        assert card.state.fb_id == CONSOLE_FB
    finally:
        fb.close()


def test_open_prefers_fb0_then_a_drm_card(monkeypatch):
    """open() with no argument uses /dev/fb0 when present, else the first DRM display."""
    from fbgfx import _open, drm

    monkeypatch.delenv("FRAMEBUFFER", raising=False)
    opened = []
    real_exists = _open.os.path.exists
    monkeypatch.setattr(_open.os.path, "exists", lambda p: p != "/dev/fb0" and real_exists(p))
    monkeypatch.setattr(_open, "find_display", lambda: "/dev/dri/card1")
    monkeypatch.setattr(
        drm.DrmDevice,
        "open",
        classmethod(lambda cls, spec, **k: opened.append(spec) or DrmDevice(FakeCard(), spec, console=False)),
    )
    with fbgfx.open() as fb:
        assert fb.path == "drm:/dev/dri/card1" and fb.drm is not None
    assert opened == ["drm:/dev/dri/card1"]


def test_readonly_drm_open_is_refused():
    """open('drm:', readonly=True) says a drm: display cannot be looked at that way."""
    with pytest.raises(fbgfx.FramebufferError, match="read_scanout") as info:
        fbgfx.open("drm:", readonly=True)
    assert info.value.errno == errno.EINVAL


# -- Screen on drm: -------------------------------------------------------------------------------


def shown_rgb(card: FakeCard) -> np.ndarray:
    """What the fake CRTC shows, as (h, w, 3) RGB from XRGB8888."""
    px = card.scanout().view("<u4")
    return np.stack([(px >> 16) & 255, (px >> 8) & 255, px & 255], -1).astype(np.uint8)


def test_screen_flips_pages_with_one_event_per_frame(fb, card):
    """Screen 'auto' on drm: is a page flip; every frame is on screen, one event each."""
    with fb.screen(console=False) as screen:
        assert screen.buffering == "flip"
        colors = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
        for i, color in enumerate(colors):
            with screen.frame() as s:
                s.rectangle((10 * i, 0, 10 * i + 9, 9), fill=color)
            fb.wait_flip()
            shown = shown_rgb(card)
            for j in range(i + 1):  # this frame's square and the earlier ones
                assert (shown[0:10, 10 * j : 10 * j + 10] == colors[j]).all()
            assert not shown[10:].any()
        assert (fb.drm.flips, fb.drm.flip_events) == (3, 3)
        assert card.flips[0] != card.flips[1] and card.flips[0] == card.flips[2]


def test_screen_present_is_shown(fb, card):
    """present() of a full-size picture appears exactly on the fake monitor."""
    rgb = np.random.default_rng(5).integers(0, 256, (800, 1280, 3), dtype=np.uint8)
    with fb.screen(console=False) as screen:
        screen.present(rgb)
        fb.wait_flip()
        assert np.array_equal(shown_rgb(card), rgb)


def test_screen_copy_sends_changed_rectangles(fb, card):
    """'copy' writes into the buffer on screen and sends DIRTYFB for what changed."""
    with fb.screen("copy", console=False) as screen:
        assert screen.buffering == "copy"
        with screen.frame() as s:
            s.rectangle((100, 50, 199, 59), fill="white")
        assert card.dirty_rects[-1] == [(0, 0, 1280, 800)]  # the buffer's first frame: all of it
        with screen.frame() as s:
            s.rectangle((300, 70, 309, 79), fill="white")
        assert card.dirty_rects[-1] == [(300, 70, 310, 80)]
        assert (shown_rgb(card)[50:60, 100:200] == 255).all()
        assert not card.flips


def test_screen_single_flushes_on_flip(fb, card):
    """'single' draws into the buffer on screen; flip() sends DIRTYFB for the screen."""
    with fb.screen("single", console=False) as screen:
        with screen.frame() as s:
            s.point((5, 5), fill="white")
        assert card.dirty_rects[-1] == [(0, 0, 1280, 800)]
        assert (shown_rgb(card)[5, 5] == 255).all()


def test_screen_one_page_copies():
    """With one buffer 'auto' copies and 'flip' is refused with the reason."""
    card = FakeCard(vram=5120 * 800 + 4096)
    with open_fake(card) as fb:
        with fb.screen(console=False) as screen:
            assert screen.buffering == "copy"
        with pytest.raises(fbgfx.FramebufferError, match="no room for a second buffer"):
            fb.screen("flip", console=False)


def test_fbdev_pan_not_shown_copies(open_virtual):
    """On bochs' DRM fbdev emulation 'auto' copies (its pan is not shown); 'flip' says so."""
    vfb = open_virtual("320x200:XRGB8888:vh=400:id=bochs-drmdrmfb")
    assert vfb.can_pan
    with vfb.screen(console=False) as screen:
        assert screen.buffering == "copy"
    with pytest.raises(fbgfx.FramebufferError, match="drm:"):
        vfb.screen("flip", console=False)


def test_open_without_any_display_says_so(monkeypatch):
    """open() with no /dev/fb0 and no DRM display raises ENOENT for /dev/fb0."""
    import fbgfx._open as opener

    monkeypatch.delenv("FRAMEBUFFER", raising=False)
    monkeypatch.setattr(opener, "find_display", lambda: None)
    refuse_open(monkeypatch, "/dev/fb0", FileNotFoundError, errno.ENOENT, "gone")
    with pytest.raises(fbgfx.FramebufferError, match="no such framebuffer device") as info:
        fbgfx.open()
    assert info.value.errno == errno.ENOENT


def test_keep_mode_is_refused_on_drm(fb):
    """keep_mode() on drm: says the mode lasts only while the display is open."""
    fb.set_mode(1024, 768)
    with pytest.raises(fbgfx.FramebufferError, match="lasts only while") as info:
        fb.keep_mode()
    assert info.value.errno == errno.EINVAL


def test_blank_turns_the_crtc_off_and_back(fb, card):
    """blank() turns the CRTC off; unblank() shows the buffer that was on screen."""
    fb.pixels[:] = 9
    assert fb.blank() is True
    assert card.state.fb_id == 0 and card.state.mode is None
    assert fb.unblank() is True
    assert card.state.fb_id in fb.drm.fb_ids and (card.scanout().view("<u4") == 9).all()


def test_flush_on_cirrus_sends_whole_rows():
    """On cirrus at 32 bpp the rectangles sent span whole rows (its partial ones land
    at the wrong x); at 16 bpp they are sent as they are."""
    card = FakeCard(driver="cirrus")
    with open_fake(card) as fb:
        fb.flush([(100, 100, 140, 120)])
        assert card.dirty_rects[-1] == [(0, 100, 1280, 120)]
    card = FakeCard(driver="cirrus")
    with open_fake(card, format="RGB565") as fb:
        fb.flush([(100, 100, 140, 120)])
        assert card.dirty_rects[-1] == [(100, 100, 140, 120)]


def test_flush_of_many_boxes_sends_their_bounds(fb, card):
    """More rectangles than the kernel takes are sent as one that holds them all."""
    fb.flush([(i, 2 * i, i + 1, 2 * i + 1) for i in range(300)])
    assert card.dirty_rects[-1] == [(0, 0, 300, 599)]
