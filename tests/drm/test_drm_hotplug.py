"""Monitors that come and go on drm: displays (fake cards; real uevents are in tests/kernel)."""

from __future__ import annotations

import threading

import pytest
from support.fake_drm import CRTC, FakeCard, make_mode
from support.forking import in_child

import fbgfx
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, hotplug

SMALL = (make_mode(1024, 768, preferred=True), make_mode(800, 600))
RED, BLUE = [0, 0, 255, 0], [255, 0, 0, 0]  # XRGB8888 bytes, little-endian


def open_fb(card, **options):
    """A Framebuffer on a DrmDevice of the fake card."""
    return Framebuffer(DrmDevice(card, "drm:card0", console=False, **options), "drm:card0")


def draw(screen, color):
    """One whole frame of one colour."""
    with screen.frame() as s:
        s.clear(color)


def test_unplugged_monitor_is_noticed_and_drawing_goes_on():
    """After an unplug uevent fb.drm.connected is False, an event says so, frames raise nothing."""
    card = FakeCard(strict_unplug=True)
    with open_fb(card) as fb:
        screen = fb.screen()
        draw(screen, "red")
        card.unplug()
        hotplug.rescan()
        assert fb.drm.connected is False
        events = fb.display_events()
        assert [(e.kind, e.connector, e.connected) for e in events] == [("disconnected", "Virtual-1", False)]
        flips = len(card.flips)
        for color in ("green", "blue", "white", "blue"):
            draw(screen, color)  # the kernel refuses these flips: they are skipped
        assert len(card.flips) == flips
        assert fb.display_events() == []


def test_a_flip_refused_before_the_uevent_is_waited_out():
    """A flip the kernel refuses because the monitor just went raises nothing."""
    card = FakeCard(strict_unplug=True)
    with open_fb(card) as fb:
        screen = fb.screen()
        draw(screen, "red")
        card.unplug()  # no rescan yet: the flip finds out
        draw(screen, "blue")
        draw(screen, "green")
        assert fb.drm.connected is False


def test_monitor_back_shows_the_latest_frame_at_the_same_mode():
    """On replug the CRTC is set again to the front page, same mode; event 'connected'."""
    card = FakeCard(strict_unplug=True)
    with open_fb(card) as fb:
        screen = fb.screen()
        draw(screen, "red")
        card.unplug()
        hotplug.rescan()
        draw(screen, "blue")
        card.plug()
        hotplug.rescan()
        assert fb.drm.connected is True
        assert card.states[CRTC].fb_id == fb.drm.fb_ids[fb.drm.page]
        assert card.states[CRTC].mode == fb.drm.mode and fb.size == (1280, 800)
        assert (card.scanout()[0, :4] == BLUE).all() and (card.scanout()[-1, -4:] == BLUE).all()
        assert [e.kind for e in fb.display_events()] == ["disconnected", "connected"]
        draw(screen, "red")
        assert (card.scanout()[0, :4] == RED).all()


def test_monitor_back_at_another_size_is_heard_and_followed():
    """Back without the old size: preferred mode, the latest frame top-left, a 'resized' event;
    display_events() takes the new size on, and a new Screen fills it."""
    card = FakeCard()
    with open_fb(card) as fb:
        screen = fb.screen()
        draw(screen, "red")
        card.unplug()
        hotplug.rescan()
        card.plug(modes=SMALL)
        hotplug.rescan()
        assert card.states[CRTC].mode.hdisplay == 1024
        shown = card.scanout()
        assert shown.shape == (768, 1024 * 4) and (shown[0, :4] == RED).all() and (shown[-1, -4:] == RED).all()
        draw(screen, "blue")  # the old Screen still works: its frames are copied top-left
        assert (card.scanout()[0, :4] == BLUE).all() and fb.size == (1280, 800)
        events = fb.display_events()
        assert [(e.kind, e.size, e.mode) for e in events] == [
            ("disconnected", (1280, 800), "1280x800@60"),
            ("resized", (1024, 768), "1024x768@60"),
        ]
        assert fb.size == (1024, 768) and fb.drm.mode.hdisplay == 1024
        screen = fb.screen()
        draw(screen, "red")
        draw(screen, "blue")
        assert card.states[CRTC].fb_id in fb.drm.fb_ids
        assert (card.scanout()[-1, -4:] == BLUE).all()


def test_callback_hears_each_change():
    """on_display_change calls back with each event; the returned function stops it."""
    card = FakeCard()
    heard = []
    with open_fb(card) as fb:
        stop = fb.on_display_change(heard.append)
        card.unplug()
        hotplug.rescan()
        card.plug()
        hotplug.rescan()
        stop()
        card.unplug()
        hotplug.rescan()
        assert [e.kind for e in heard] == ["disconnected", "connected"]
        assert len(fb.display_events()) == 3


def test_monitor_plugged_after_start_can_be_opened():
    """A connector dark at start and plugged later opens beside the first display."""
    card = FakeCard(heads=2, head_connected=[True, False])
    with open_fb(card) as a:
        with pytest.raises(fbgfx.FramebufferError, match="has no display connected"):
            open_fb(card, connector="Virtual-2")
        card.plug(1, SMALL)
        hotplug.rescan()
        with open_fb(card, connector="Virtual-2") as b:
            assert b.size == (1024, 768) and a.size == (1280, 800)


def test_mirror_keeps_showing_on_the_monitor_that_stays():
    """One monitor of a mirror gone: flips go on on the other; back: lit with the latest frame."""
    card = FakeCard(heads=2, strict_unplug=True)
    with open_fb(card, connector="Virtual-1,Virtual-2") as fb:
        screen = fb.screen()
        draw(screen, "red")
        card.unplug(1)
        hotplug.rescan()
        assert fb.drm.connected is True  # one of them still shows it
        before = len(card.flips_by_crtc[CRTC + 1])
        draw(screen, "blue")
        assert (card.scanout(CRTC)[0, :4] == BLUE).all() and len(card.flips_by_crtc[CRTC + 1]) == before
        card.plug(1)
        hotplug.rescan()
        assert (card.scanout(CRTC + 1)[0, :4] == BLUE).all()


def test_displays_without_monitors_to_lose_have_no_events(tmp_path):
    """display_events() on a virtual display is [] and a callback is never called."""
    with fbgfx.open("virtual:64x48") as fb:
        assert fb.display_events() == []
        fb.on_display_change(lambda e: pytest.fail("no events on a virtual display"))()
        assert fb.refresh() is False


def test_uevents_are_parsed_and_drm_changes_recognised():
    """A kernel DRM change uevent counts; another subsystem's or udev's own does not."""
    change = b"change@/devices/pci0000:00/0000:00:02.0/drm/card0\0ACTION=change\0DEVPATH=/x\0SUBSYSTEM=drm\0HOTPLUG=1\0"
    fields = hotplug.parse_uevent(change)
    assert fields["SUBSYSTEM"] == "drm" and fields["HOTPLUG"] == "1"
    assert hotplug.is_drm_change(fields)
    assert not hotplug.is_drm_change(hotplug.parse_uevent(b"add@/devices/x\0ACTION=add\0SUBSYSTEM=usb\0"))
    assert hotplug.parse_uevent(b"libudev\0\xfe\xed\xca\xfe") == {}


def test_the_watcher_runs_while_a_display_is_open():
    """The hotplug thread starts with the first drm: display and ends with the last."""
    card = FakeCard(heads=2)
    assert not hotplug.watching()
    a = open_fb(card, connector="Virtual-1")
    b = open_fb(card, connector="Virtual-2")
    assert hotplug.watching()
    a.close()
    assert hotplug.watching()
    b.close()
    assert not hotplug.watching()


def test_without_uevents_the_watcher_polls(monkeypatch):
    """Where no uevent socket can be opened, the watcher notices an unplug by polling."""
    monkeypatch.setattr(hotplug, "_uevent_socket", lambda: None)
    monkeypatch.setattr(hotplug, "POLL_INTERVAL", 0.01)
    card = FakeCard()
    with open_fb(card) as fb:
        card.unplug()
        events = fb.display_events(timeout=30)
        assert [(e.kind, e.connected) for e in events] == [("disconnected", False)]
        assert fb.drm.connected is False and card.probes >= 1


def test_callback_may_close_its_display():
    """A callback that closes the display (on the watcher thread) ends cleanly."""
    card = FakeCard()
    fb = open_fb(card)
    fb.on_display_change(lambda e: fb.close())
    card.unplug()
    hotplug.rescan()
    assert fb.closed and card.fd == -1 and not hotplug.watching()


def test_forked_child_leaves_both_displays_and_the_watcher_to_the_parent():
    """A child closing two displays of one card closes its descriptor once and nothing
    else; the parent's displays keep flipping and hearing hotplug."""
    card = FakeCard(heads=2)
    a, b = open_fb(card, connector="Virtual-1"), open_fb(card, connector="Virtual-2")
    draw(a.screen(), "red")

    def child():
        card.calls.clear()
        a.close()
        b.close()
        return {"calls": card.calls, "watching": hotplug.watching()}

    assert in_child(child) == {"calls": ["close"], "watching": False}
    assert hotplug.watching() and card.fd >= 0 and card.master
    draw(b.screen(), "blue")
    assert (card.scanout(CRTC + 1)[0, :4] == BLUE).all()
    card.unplug(0)
    hotplug.rescan()
    assert a.drm.connected is False
    a.close()
    b.close()
    assert not hotplug.watching()


def test_stress_flips_replugs_and_close_from_other_threads():
    """Two displays flipping in their threads while monitors come and go and a third thread
    closes them: no error but 'the display is closed', no deadlock, the card given back."""
    card = FakeCard(heads=2, strict_unplug=True)
    fbs = [open_fb(card, connector="Virtual-1"), open_fb(card, connector="Virtual-2")]
    errors: list[BaseException] = []
    frames = [0, 0]
    progress = threading.Condition()
    stop = threading.Event()

    def flipper(i: int) -> None:
        screen = fbs[i].screen()
        try:
            while not stop.is_set():
                with screen.frame() as s:
                    s.rectangle((0, 0, 20, 20), fill=("red", "blue")[frames[i] % 2])
                with progress:
                    frames[i] += 1
                    progress.notify_all()
        except fbgfx.FramebufferError as e:
            if "closed" not in str(e):
                errors.append(e)
        except BaseException as e:
            errors.append(e)

    def replugger() -> None:
        try:
            for n in range(300):
                (card.unplug if n % 2 == 0 else card.plug)(n % 4 // 2)
                hotplug.rescan()
                with progress:  # let both displays draw between changes
                    seen = list(frames)
                    if not progress.wait_for(lambda: all(f > s for f, s in zip(frames, seen)), 30):
                        raise AssertionError(f"no frames drawn after change {n}: {frames}")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=flipper, args=(i,)) for i in (0, 1)] + [threading.Thread(target=replugger)]
    for t in threads:
        t.start()
    threads[2].join(120)
    closer = threading.Thread(target=lambda: [fb.close() for fb in fbs])
    closer.start()
    closer.join(30)
    stop.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in [*threads, closer])
    assert errors == []
    assert min(frames) >= 300
    assert card.fd == -1 and not card.master and not hotplug.watching()
    assert all(fb.closed for fb in fbs)
