"""drm: specs and drivers that say odd things: repeated keys, connected connectors
without modes, modes of no size."""

from __future__ import annotations

import pytest
from support.fake_drm import FakeCard, make_mode

from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice, parse_spec
from fbgfx.errors import FramebufferError, ModeError


@pytest.mark.parametrize("key", ["connector=HDMI-A-1", "mode=800x600", "format=RGB565"])
def test_repeated_key_is_refused(key):
    """A drm: option given twice is refused (it was silently overridden), as virtual: refuses."""
    name = key.split("=")[0]
    with pytest.raises(ValueError, match=f"option '{name}' given twice"):
        parse_spec(f"drm:card0:{key}:{key.replace('HDMI-A-1', 'DP-1').replace('800x600', '640x480')}")


def test_connected_connector_without_modes_says_so():
    """A connector that is connected but lists no modes: the error says that, not "no connected display"."""
    card = FakeCard(modes=(), crtc_on=False)
    with pytest.raises(FramebufferError) as e:
        DrmDevice(card, "drm:card0", console=False)
    text = str(e.value)
    assert "(connected, no modes)" in text and "lists a mode" in text
    assert "no connected display;" not in text


def test_mode_of_no_size_is_a_mode_error():
    """A driver listing only a 0x0 mode: ModeError naming the connector, not ZeroDivisionError."""
    card = FakeCard(modes=(make_mode(0, 0, preferred=True),))
    with pytest.raises(ModeError, match="modes of no size"):
        DrmDevice(card, "drm:card0", console=False)
    assert card.fd == -1  # closed, master dropped


def test_modes_of_no_size_are_left_out():
    """A 0x0 mode beside real ones is not offered; the real preferred one is shown."""
    card = FakeCard(modes=(make_mode(0, 0, preferred=True), make_mode(640, 480)))
    fb = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    try:
        assert fb.size == (640, 480)
        assert [str(m) for m in fb.modes()] == [str(m) for m in fb.modes() if "0x0" not in str(m)]
        assert len(fb.modes()) == 1
    finally:
        fb.close()
