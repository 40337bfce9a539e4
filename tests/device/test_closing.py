"""``with`` blocks close fbgfx's objects: the object itself is given, and it is closed
at the end of the block, also when the block raises (the exception goes on)."""

from __future__ import annotations

import pytest

import fbgfx
import fbgfx.touch
from fbgfx.touch.virtual import VirtualTouch


class _Boom(Exception):
    pass


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """A 64x48 file-backed virtual display (it has a virtual touchscreen) named by $FRAMEBUFFER."""
    spec = f"virtual:64x48:XRGB8888:file={tmp_path / 'fb.raw'}"
    monkeypatch.setenv("FRAMEBUFFER", spec)
    for name in ("FBGFX_TOUCH", "FBGFX_TOUCH_CALIBRATION", "FBGFX_ROTATE"):
        monkeypatch.delenv(name, raising=False)
    with fbgfx.open(spec):
        pass
    return spec


def test_framebuffer_and_screen_with_blocks_close_them_even_on_an_exception(spec):
    """Framebuffer and Screen: `with` gives the object and closes it when the block raises."""
    with pytest.raises(_Boom):
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            assert isinstance(fb, fbgfx.Framebuffer) and isinstance(screen, fbgfx.Screen)
            held = fb, screen
            raise _Boom
    assert held[0].closed
    assert "closed" in repr(held[1])
    with fbgfx.open(spec) as fb:  # nothing left held: it opens again
        assert not fb.closed


def test_touchscreen_and_finger_with_blocks_close_them_even_on_an_exception(spec):
    """Touchscreen and VirtualTouch: `with` gives the object and closes it when the block raises."""
    with pytest.raises(_Boom):
        with VirtualTouch(spec) as finger, fbgfx.touch.open() as ts:
            assert isinstance(finger, VirtualTouch) and isinstance(ts, fbgfx.touch.Touchscreen)
            assert ts.size == (64, 48)
            held = finger, ts
            raise _Boom
    assert held[1].closed
    with pytest.raises(Exception, match="closed"):
        held[0].tap(1, 1)
