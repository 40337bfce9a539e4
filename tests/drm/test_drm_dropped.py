"""drm: displays dropped without close() (fake cards): released as a closed one is, also
when a callback of their own refers to them; the card closes with the last one.

A display whose callback refers to it is a reference cycle: the garbage collector finds
it and hands it to fbgfx's closer thread; :func:`fbgfx._closing.settle` waits for that.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest
from support.dropped import RED, assert_given_back, collect, live_displays, open_fb, refers_to
from support.fake_drm import CONSOLE_FB, CRTC, FakeCard, make_mode
from support.forking import in_child
from support.heap import own_heap  # noqa: F401 (the fixture)
from support.memory import rss_mb

from fbgfx import _closing, _restore
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, hotplug
from fbgfx.drm.shared import SharedCard

pytestmark = pytest.mark.usefixtures("own_heap")

SMALL = (make_mode(640, 480, preferred=True),)


def test_display_whose_callback_refers_to_it_is_released_when_dropped():
    """fb.on_display_change(lambda e: fb...) then dropped unclosed: CRTC restored, buffers freed, card closed."""
    card = FakeCard()
    fb = open_fb(card)
    screen = fb.screen()
    with screen.frame() as s:
        s.clear("red")
    fb.on_display_change(refers_to(fb, screen))
    assert (card.scanout()[0, :4] == RED).all() and card.master
    ref = weakref.ref(fb._device)
    del fb, screen
    collect()
    assert ref() is None and live_displays() == 0
    assert_given_back(card)
    assert not hotplug.watching()
    assert not [o for o in _restore.registered() if isinstance(o, (DrmDevice, Framebuffer))]


def test_bare_display_dropped_is_released():
    """A DrmDevice (no Framebuffer) dropped unclosed gives the card back as close() does."""
    card = FakeCard()
    device = DrmDevice(card, "drm:card0", console=False)
    device.display_events.subscribe(refers_to(device))  # type: ignore[union-attr]
    assert card.states[CRTC].fb_id != CONSOLE_FB
    del device
    collect()
    assert live_displays() == 0
    assert_given_back(card)


def test_dropped_display_frees_its_crtc_while_the_other_keeps_the_card():
    """Of two displays on one card, the dropped one's CRTC goes dark and its connector can be
    opened again; the other keeps master and flipping; closing it closes the card."""
    card = FakeCard(heads=2)
    a = open_fb(card, connector="Virtual-1")
    b = open_fb(card, connector="Virtual-2")
    b.on_display_change(refers_to(b))
    assert card.states[CRTC + 1].fb_id in b.drm.fb_ids
    del b
    collect()
    assert card.states[CRTC + 1].fb_id == 0  # dark before: dark again
    assert card.fd >= 0 and card.master
    with a.screen().frame() as s:
        s.clear("red")
    assert (card.scanout(CRTC)[0, :4] == RED).all()
    with open_fb(card, connector="Virtual-2") as again:  # the connector and CRTC are free
        assert again.drm.crtc_id == CRTC + 1
    a.close()
    assert_given_back(card)


def test_connector_of_a_dropped_display_opens_again_at_once():
    """Opening the connector a dropped (uncollected) display still holds succeeds: fbgfx has
    the dropped one collected and closed first instead of answering EBUSY."""
    card = FakeCard(heads=2)
    keeper = open_fb(card, connector="Virtual-1")  # keeps the card open between the two
    fb = open_fb(card, connector="Virtual-2")
    fb.on_display_change(refers_to(fb))
    first = fb.drm.fb_ids
    del fb
    with open_fb(card, connector="Virtual-2") as again:
        assert again.drm.crtc_id == CRTC + 1 and not set(again.drm.fb_ids) & set(first)
        assert not set(first) & set(card.fbs)  # the dropped one's buffers are freed
        gc.collect()  # the dropped one, closed, is garbage without a finalizer now
        assert live_displays() == 2
    keeper.close()
    assert_given_back(card)


def test_callback_of_a_display_the_program_keeps_goes_on_working():
    """Weak watching drops no display still referenced: after collections its callback (which
    refers to it) hears an unplug and the card stays open."""
    card = FakeCard()
    heard: list[tuple[str, tuple[int, int]]] = []
    fb = open_fb(card)
    fb.on_display_change(lambda event: heard.append((event.kind, fb.size)))
    collect()
    collect()
    card.unplug()
    hotplug.rescan()
    assert heard == [("disconnected", (1280, 800))]
    assert card.fd >= 0 and not fb.closed
    fb.close()
    assert_given_back(card)


def test_200_open_drop_cycles_leave_no_display_memory_or_thread():
    """200 displays opened, drawn, given a callback referring to them and dropped: none stays
    alive, each card is given back, RSS and the thread count stay flat."""
    displays: weakref.WeakSet[object] = weakref.WeakSet()

    def cycle() -> FakeCard:
        card = FakeCard(SMALL)
        fb = open_fb(card)
        screen = fb.screen()
        with screen.frame() as s:  # touch the buffers, as a program does
            s.clear("navy")
        fb.on_display_change(refers_to(fb, screen))
        displays.add(fb)
        displays.add(fb._device)
        return card

    for _ in range(10):  # warm up (allocator pools, the closer thread)
        cycle()
    collect()
    before, threads = rss_mb(), threading.active_count()
    for _ in range(20):
        cards = [cycle() for _ in range(10)]
        collect()
        for card in cards:
            assert card.fd == -1 and card.dumbs == {} and card.states[CRTC].fb_id == CONSOLE_FB, card.calls
    grown = rss_mb() - before
    assert len(displays) == 0 and live_displays() == 0
    # a display kept alive holds its two 640x480 XRGB8888 buffers and the Screen's back
    # buffer (3.6 MB): 200 of them would be 720 MB
    assert grown < 40, f"RSS grew {grown:.0f} MB over 200 cycles"
    assert threading.active_count() == threads and not hotplug.watching()
    assert SharedCard.open_cards() == []


def test_displays_dropped_in_threads_while_another_flips_on_the_card():
    """Two threads open, draw and drop displays (callbacks referring to them) on a card where a
    third thread flips its own: no error, the flipper goes on, each dropped CRTC goes dark."""
    card = FakeCard(heads=3)
    keeper = open_fb(card, connector="Virtual-1")
    errors: list[BaseException] = []
    stop = threading.Event()
    frames = [0]

    def flipper() -> None:
        screen = keeper.screen()
        try:
            while not stop.is_set():
                with screen.frame() as s:
                    s.rectangle((0, 0, 20, 20), fill=("red", "blue")[frames[0] % 2])
                frames[0] += 1
        except BaseException as e:
            errors.append(e)

    def dropper(connector: str) -> None:
        try:
            for _ in range(40):
                fb = open_fb(card, connector=connector)
                screen = fb.screen()
                with screen.frame() as s:
                    s.clear("green")
                with screen.frame() as s:
                    s.clear("white")
                fb.on_display_change(refers_to(fb, screen))
                shared = fb._device.shared_card
                del fb, screen
                # the closer closes it while the others go on (the other dropper's collection
                # may be the one that finds it: wait until its connector is free, for as long
                # as a machine with every core busy needs, not for a count of tries)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    gc.collect()
                    assert _closing.settle(30)
                    if connector not in shared.connector_names():
                        break
                assert connector not in shared.connector_names()
        except BaseException as e:
            errors.append(e)

    flip = threading.Thread(target=flipper)
    drops = [threading.Thread(target=dropper, args=(f"Virtual-{i}",)) for i in (2, 3)]
    flip.start()
    for t in drops:
        t.start()
    for t in drops:
        t.join(120)
    stop.set()
    flip.join(30)
    assert not any(t.is_alive() for t in [flip, *drops])
    assert errors == []
    collect()
    assert frames[0] > 0 and card.fd >= 0 and card.master
    assert card.states[CRTC + 1].fb_id == 0 and card.states[CRTC + 2].fb_id == 0
    assert live_displays() == 1
    keeper.close()
    assert_given_back(card)
    assert not hotplug.watching()


def test_exit_closes_a_dropped_display_the_closer_has_not_reached():
    """restore_all (what exit and fatal signals run) closes a dropped display still waiting
    for the closer thread."""
    card = FakeCard()
    fb = open_fb(card)
    fb.on_display_change(refers_to(fb))
    release = threading.Event()

    class Busy:
        """Holds the closer thread until released."""

        def close(self) -> None:
            release.wait(30)

    _closing._queue.put(Busy())
    try:
        del fb
        gc.collect()
        assert card.fd >= 0  # queued behind Busy
        _restore.restore_all()
        assert_given_back(card)
    finally:
        release.set()
    collect()
    assert live_displays() == 0


def test_forked_child_dropping_a_display_leaves_it_to_the_parent():
    """A child that drops a display (its callback refers to it) touches nothing on the card;
    the parent keeps drawing, then its close gives the card back."""
    card = FakeCard()
    fb = open_fb(card)
    fb.on_display_change(refers_to(fb))

    def child():
        nonlocal fb
        card.calls.clear()
        del fb
        gc.collect()
        _closing.close_waiting()
        return card.calls

    assert in_child(child) == []
    with fb.screen().frame() as s:
        s.clear("red")
    assert (card.scanout()[0, :4] == RED).all()
    fb.close()
    assert_given_back(card)
