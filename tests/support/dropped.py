"""Helpers of the tests of displays dropped without close() on fake DRM cards: opening
one, a callback that refers to it, collecting what was dropped, counting what is left,
and the card as a display given back leaves it."""

from __future__ import annotations

import gc
from collections.abc import Callable

from fbgfx import _closing
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice
from fbgfx.drm.shared import SharedCard

from .fake_drm import CONSOLE_FB, CRTC, FakeCard

RED = [0, 0, 255, 0]  # XRGB8888 bytes, little-endian


def open_fb(card: FakeCard, **options: object) -> Framebuffer:
    """A Framebuffer on a DrmDevice of the fake card."""
    return Framebuffer(DrmDevice(card, "drm:card0", console=False, **options), "drm:card0")  # type: ignore[arg-type]


def refers_to(*held: object) -> Callable[[object], None]:
    """A display-change callback that refers to ``held`` (not through the test's own variables,
    which ``del`` empties)."""

    def callback(event: object) -> None:
        del event
        for obj in held:
            repr(obj)

    return callback


def collect() -> None:
    """Collect garbage and wait until the closer thread has closed what it found."""
    gc.collect()
    assert _closing.settle(30)
    gc.collect()


def live_displays() -> int:
    """DrmDevice objects alive in this process."""
    return sum(isinstance(o, DrmDevice) for o in gc.get_objects())


def assert_given_back(card: FakeCard) -> None:
    """The card shows the console again, its buffers are freed, master dropped, card closed."""
    assert card.states[CRTC].fb_id == CONSOLE_FB and card.states[CRTC].mode == card.modes[0]
    assert card.dumbs == {} and set(card.fbs) == {CONSOLE_FB}
    assert card.fd == -1 and not card.master
    assert not [s for s in SharedCard.open_cards() if s.card is card]
