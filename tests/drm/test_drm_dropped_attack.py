"""drm: displays dropped without close() (fake cards) under the conditions a busy program
makes: other threads collecting garbage at the same moment, threads reopening their
connectors at once, a display-change callback reopening a connector, a display's last
reference going while another display closes.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable

import pytest
from support import TESTS
from support.dropped import RED, assert_given_back, collect, live_displays, open_fb, refers_to
from support.fake_drm import CONSOLE_FB, CRTC, FakeCard, make_mode
from support.heap import own_heap  # noqa: F401 (the fixture)

import fbgfx
from fbgfx import _closing, _restore
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, hotplug
from fbgfx.drm.shared import SharedCard

pytestmark = pytest.mark.usefixtures("own_heap")

SMALL = (make_mode(64, 48, preferred=True),)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(fbgfx.__file__)), TESTS])}


def test_connector_of_a_dropped_display_opens_while_another_thread_collects(monkeypatch):
    """A garbage collection under way in another thread (gc.collect() then returns at once)
    does not make reopening a dropped display's connector answer EBUSY."""
    card = FakeCard(heads=2)
    keeper = open_fb(card, connector="Virtual-1")
    inside, release = threading.Event(), threading.Event()
    collector = threading.current_thread()  # replaced by the collecting thread below

    def hold(phase: str, info: dict[str, int]) -> None:
        del info
        if phase == "stop" and threading.current_thread() is collector:
            inside.set()
            release.wait(30)  # the collection stays under way until the opener tried one

    real_collect = gc.collect

    def collect_then_release(generation: int = 2) -> int:
        try:
            return real_collect(generation)
        finally:
            if threading.current_thread() is threading.main_thread():
                release.set()

    collector = threading.Thread(target=gc.collect)
    gc.callbacks.append(hold)
    try:
        collector.start()
        assert inside.wait(30)
        # dropped after that collection looked: only a new one finds it
        fb = open_fb(card, connector="Virtual-2")
        fb.on_display_change(refers_to(fb))
        del fb
        monkeypatch.setattr(gc, "collect", collect_then_release)
        with open_fb(card, connector="Virtual-2") as again:
            assert release.is_set()  # the opener did meet the other thread's collection
            assert again.drm.connector == "Virtual-2"
    finally:
        release.set()
        collector.join(30)
        gc.callbacks.remove(hold)
        monkeypatch.undo()
    assert not collector.is_alive()
    keeper.close()
    del keeper, again
    collect()
    assert live_displays() == 0
    assert_given_back(card)


@pytest.mark.parametrize("closing", [False, True])
def test_threads_reopening_the_connectors_of_their_dropped_displays_all_succeed(closing):
    """Four threads each open their connector, give the display a callback referring to it,
    drop it (or, every third time, close it) and open the connector again, 60 times, while
    three threads drop displays on cards of their own, threads switching often: none gets
    EBUSY, none hangs."""
    card = FakeCard(SMALL, heads=5)
    keeper = open_fb(card, connector="Virtual-5")  # the card stays open between the threads' displays
    errors: list[BaseException] = []

    def reopen(connector: str) -> None:
        try:
            for n in range(60):
                fb = open_fb(card, connector=connector)
                fb.on_display_change(refers_to(fb))
                if closing and n % 3 == 0:
                    fb.close()  # the others' displays are looked at as it unwatches
                del fb
        except BaseException as e:
            errors.append(e)

    def churn() -> None:
        # displays on cards of their own, dropped: the closer unwatches them meanwhile
        try:
            for n in range(60):
                fb = open_fb(FakeCard(SMALL))
                fb.on_display_change(refers_to(fb))
                del fb
                if n % 5 == 0:
                    gc.collect()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=reopen, args=(f"Virtual-{i}",)) for i in (1, 2, 3, 4)]
    threads += [threading.Thread(target=churn) for _ in range(3)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for t in threads:
            t.start()
        for t in threads:
            # A hang guard, not a pace: 60 s was too short once on arm64 under emulation.
            t.join(600)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    keeper.close()
    del keeper
    collect()
    assert live_displays() == 0
    assert card.fd == -1 and card.dumbs == {} and not card.master


def test_connector_of_a_dropped_display_opens_while_another_thread_closes_a_display(monkeypatch):
    """A display closing in another thread (stopping being watched, under the watcher's
    lock) keeps no other display alive: the opener's collection finds the dropped display
    that holds the connector it wants, and the open does not answer EBUSY."""
    card = FakeCard(heads=3)
    closing = open_fb(card, connector="Virtual-1")
    gc.disable()  # the dropped display is found by the opener's collection, not before
    try:
        fb = open_fb(card, connector="Virtual-2")
        fb.on_display_change(refers_to(fb))
        del fb
        inside, release = threading.Event(), threading.Event()
        released_by: list[str] = []
        closer = threading.current_thread()  # replaced by the closing thread below

        class HeldAtRelease:
            """The watcher's lock, held by the closing thread until the opener's collection ends."""

            def __init__(self, lock: threading.Lock) -> None:
                self.lock = lock

            def __enter__(self) -> None:
                self.lock.acquire()

            def __exit__(self, *exc: object) -> None:
                if threading.current_thread() is closer and not inside.is_set():
                    inside.set()
                    if not release.wait(30):
                        released_by.append("timeout")
                self.lock.release()

        def end_of_collection(phase: str, info: dict[str, int]) -> None:
            if phase == "stop" and info["generation"] == 2 and threading.current_thread() is threading.main_thread():
                if inside.is_set() and not release.is_set():
                    released_by.append("collection")
                    release.set()

        monkeypatch.setattr(hotplug, "_lock", HeldAtRelease(hotplug._lock))
        closer = threading.Thread(target=closing.close)
        gc.callbacks.append(end_of_collection)
        try:
            closer.start()
            assert inside.wait(30)
            with open_fb(card, connector="Virtual-2") as again:
                assert again.drm.connector == "Virtual-2"
        finally:
            release.set()
            closer.join(30)
            gc.callbacks.remove(end_of_collection)
    finally:
        gc.enable()
    assert released_by == ["collection"]  # the opener collected while the other thread was inside
    assert not closer.is_alive()
    del again, closing
    collect()
    assert live_displays() == 0
    assert_given_back(card)


def _watcher_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Have the hotplug watcher (started after this) poll the fake cards at once and often."""
    monkeypatch.setattr(hotplug, "_uevent_socket", lambda: None)
    monkeypatch.setattr(hotplug, "POLL_INTERVAL", 0.01)


def test_display_change_callback_opens_the_connector_of_a_dropped_display(monkeypatch):
    """A callback (on the watcher thread) that closes its display and opens the connector a
    dropped display still holds gets it: the watcher keeps no dropped display alive and the
    closer does not wait for the watcher."""
    _watcher_polls(monkeypatch)
    card = FakeCard(heads=2)
    gc.disable()  # the dropped display is found by the callback's open, not before
    try:
        first = open_fb(card, connector="Virtual-1")
        dropped = open_fb(card, connector="Virtual-2")
        dropped.on_display_change(refers_to(dropped))
        del dropped
        opened: list[Framebuffer | BaseException] = []
        done = threading.Event()

        def on_change(event: fbgfx.DisplayEvent) -> None:
            if event.kind != "disconnected" or done.is_set():
                return
            first.close()
            try:
                opened.append(open_fb(card, connector="Virtual-2"))
            except BaseException as e:
                opened.append(e)
            done.set()

        first.on_display_change(on_change)
        card.unplug(0)
        assert done.wait(60)
    finally:
        gc.enable()
    (again,) = opened
    assert isinstance(again, Framebuffer), again
    assert again.drm.connector == "Virtual-2"
    again.close()
    collect()
    assert_given_back(card)  # the dropped display was closed too


def _run(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a new interpreter that imports this tree and the fake cards."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        cwd=TESTS,
    )


def test_last_reference_going_while_another_display_closes_does_not_hang():
    """A display whose last reference goes as the watcher looks at it (another display
    closing, a rescan) is closed as it goes, with no deadlock."""
    out = _run(
        """
        import faulthandler, sys
        faulthandler.dump_traceback_later(30, exit=True)
        from support.fake_drm import FakeCard
        from fbgfx.drm import DrmDevice, hotplug

        keep = DrmDevice(FakeCard(), "drm:card0", console=False)
        other_card = FakeCard()
        other = DrmDevice(other_card, "drm:card0", console=False)
        closing = DrmDevice(FakeCard(), "drm:card0", console=False)

        class LastReference:
            # as the watcher's weak reference to `other`, but the program lets go of it (another
            # thread's `del`) just as the watcher looks at it: what it returns is the last one
            def __init__(self, obj):
                self.obj = obj

            def __call__(self):
                obj, self.obj = self.obj, None
                return obj

        hotplug._watched[id(other)] = LastReference(other)
        del other
        closing.close()  # the watcher forgets `closing`
        hotplug.rescan()  # and looks at `other`
        assert other_card.fd == -1, "the dropped display was not closed"
        keep.close()
        print("ok")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_child_forked_while_the_closer_closes_a_display_opens_its_own():
    """A process forked while the closer thread is inside a close (holding fbgfx's restore
    registry) gets a child that opens and closes a display of its own without hanging."""
    inside, release = threading.Event(), threading.Event()

    class Closing:
        """What the closer does in a dropped display's close: forget it in the registry."""

        def close(self) -> None:
            with _restore._lock:
                inside.set()
                release.wait(30)

    _closing.start_closer()
    _closing._queue.put(Closing())
    try:
        assert inside.wait(30)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(30)  # a child that hangs dies of it
            try:
                card = FakeCard()
                open_fb(card).close()
                code = 0 if card.fd == -1 and card.states[CRTC].fb_id == CONSOLE_FB else 1
            except BaseException:
                code = 2
            os._exit(code)
    finally:
        release.set()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _closing.settle(30)


EXIT_SCRIPT = """
import gc, os, signal, sys, threading
from support.fake_drm import CONSOLE_FB, FakeCard
from fbgfx import _closing
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice

how = sys.argv[1]
card = FakeCard()
set_crtc = card.set_crtc


def logged(crtc_id, fb_id, *rest):
    if fb_id == CONSOLE_FB:
        os.write(1, b"restored\\n")  # one write: the closer thread prints too
    return set_crtc(crtc_id, fb_id, *rest)


card.set_crtc = logged


def dropped():
    fb = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    screen = fb.screen()
    with screen.frame() as s:
        s.clear("red")
    fb.on_display_change(lambda event: (fb, screen))


dropped()
if how.endswith("-queued"):  # the closer is busy: the display waits in its queue
    release = threading.Event()

    class Busy:
        def close(self):
            release.wait(60)

    _closing._queue.put(Busy())
if how != "exit":
    gc.collect()
if how.startswith("sigterm"):
    os.kill(os.getpid(), signal.SIGTERM)
os.write(1, b"end\\n")
"""


@pytest.mark.parametrize("how", ["exit", "collected", "collected-queued", "sigterm", "sigterm-queued"])
def test_display_dropped_in_a_cycle_is_given_back_once_as_the_program_ends(how):
    """A program ending (exit, or killed by SIGTERM) with a display dropped in a cycle (found
    by the collector or not, waiting for a busy closer or not) gives its CRTC back exactly
    once, with no traceback and no hang."""
    out = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, how], capture_output=True, text=True, env=ENV, timeout=120, cwd=TESTS
    )
    killed = how.startswith("sigterm")
    assert out.returncode == (-signal.SIGTERM if killed else 0), out.stderr
    lines = sorted(out.stdout.split())
    assert lines == (["restored"] if killed else ["end", "restored"]), out.stdout + out.stderr
    assert out.stderr == ""


SIGNAL_SCRIPT = """
import gc, os, signal, sys, threading
from support.fake_drm import CONSOLE_FB, FakeCard
from fbgfx import _closing
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, hotplug
from fbgfx.drm import shared as shared_module


def logging_card(name):
    card = FakeCard()
    set_crtc = card.set_crtc

    def logged(crtc_id, fb_id, *rest):
        if fb_id == CONSOLE_FB:
            os.write(1, f"restored {name}\\n".encode())  # one write: the closer thread prints too
        return set_crtc(crtc_id, fb_id, *rest)

    card.set_crtc = logged
    return card


def dropped():
    fb = Framebuffer(DrmDevice(logging_card("dropped"), "drm:card0", console=False), "drm:card0")
    fb.on_display_change(lambda event: fb)


class Busy:
    def close(self):
        threading.Event().wait(60)


dropped()
_closing._queue.put(Busy())
gc.collect()  # the dropped display waits for the (busy) closer


class Signalled(list):
    # SIGTERM arrives as fbgfx adds to this list, holding the lock that guards it
    def append(self, item):
        super().append(item)
        os.kill(os.getpid(), signal.SIGTERM)


class SignalledDict(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        os.kill(os.getpid(), signal.SIGTERM)


if sys.argv[1] == "watcher":
    hotplug._watched = SignalledDict(hotplug._watched)
else:
    shared_module._registry = Signalled(shared_module._registry)
Framebuffer(DrmDevice(logging_card("opening"), "drm:card0", console=False), "drm:card0")
os.write(1, b"end\\n")
"""


@pytest.mark.parametrize("lock", ["watcher", "cards"])
def test_sigterm_while_fbgfx_holds_a_lock_closes_waiting_displays_and_dies(lock):
    """SIGTERM arriving while the main thread holds the hotplug watcher's or the card
    registry's lock, with a dropped display waiting for the closer: the displays are given
    back and the process dies of the signal instead of hanging."""
    out = subprocess.run(
        [sys.executable, "-c", SIGNAL_SCRIPT, lock], capture_output=True, text=True, env=ENV, timeout=60, cwd=TESTS
    )
    assert out.returncode == -signal.SIGTERM, out.stdout + out.stderr
    # the card registry is joined before the opening display sets its CRTC: nothing to give back
    shown = ["restored dropped", "restored opening"] if lock == "watcher" else ["restored dropped"]
    assert sorted(out.stdout.splitlines()) == shown, out.stdout + out.stderr


def test_opening_the_card_as_the_closer_closes_its_last_dropped_display_opens_it_anew(monkeypatch):
    """Opening a display on a card just as the closer thread closes the last display on it
    (dropped unclosed), and with it the card: the card is opened anew, no EBADF."""
    cards: list[FakeCard] = []

    def opener(path: str) -> FakeCard:
        del path
        cards.append(FakeCard())
        return cards[-1]

    spec = "drm:card0"
    first = Framebuffer(DrmDevice.open(spec, console=False, opener=opener), spec)
    first.on_display_change(refers_to(first))
    del first
    for_path = SharedCard.for_path

    def closer_runs_meanwhile(path: str, opener: Callable[[str], FakeCard]) -> SharedCard:
        shared = for_path(path, opener)
        collect()  # the closer closes the dropped display, the last on the card, now
        return shared

    monkeypatch.setattr(SharedCard, "for_path", closer_runs_meanwhile)
    with Framebuffer(DrmDevice.open(spec, console=False, opener=opener), spec) as fb:
        with fb.screen().frame() as s:
            s.clear("red")
        assert len(cards) == 2 and (cards[1].scanout()[0, :4] == RED).all()
    # the first: given back by the closer (the fake lets a closed card become master: not checked)
    assert cards[0].fd == -1 and cards[0].states[CRTC].fb_id == CONSOLE_FB and cards[0].dumbs == {}
    assert_given_back(cards[1])
