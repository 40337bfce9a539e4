"""drm: displays dropped without close() (fake cards) under the conditions a busy program
makes: other threads collecting garbage at the same moment, threads reopening their
connectors at once, a display-change callback reopening a connector, a display's last
reference going while another display closes.
"""

from __future__ import annotations

import gc
import threading

from fake_drm import FakeCard, make_mode
from test_drm_dropped import assert_given_back, collect, live_displays, open_fb, refers_to

SMALL = (make_mode(64, 48, preferred=True),)


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


def test_threads_reopening_the_connectors_of_their_dropped_displays_all_succeed():
    """Four threads each open their connector, give the display a callback referring to it,
    drop it and open the connector again, 60 times: none gets EBUSY, none hangs."""
    card = FakeCard(SMALL, heads=4)
    errors: list[BaseException] = []

    def reopen(connector: str) -> None:
        try:
            for _ in range(60):
                fb = open_fb(card, connector=connector)
                fb.on_display_change(refers_to(fb))
                del fb
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=reopen, args=(f"Virtual-{i}",)) for i in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    collect()
    assert live_displays() == 0
    assert card.fd == -1 and card.dumbs == {} and not card.master
