"""VirtualOptions: a virtual device's options as one value, from a spec or from keywords."""

import json

import pytest

import fbgfx
from fbgfx import VirtualDevice, VirtualOptions
from fbgfx.virtual import parse_spec


def test_parse_spec_returns_the_options_it_read():
    """A spec's keys (aliases included) land in the VirtualOptions fields they name."""
    width, height, fmt, options = parse_spec("virtual:320x240:RGB565:vh=480:pan=0:modes=refuse:modelist=320x240-16")
    assert (width, height, fmt) == (320, 240, "RGB565")
    assert options == VirtualOptions(virtual_height=480, can_pan=False, modes="refuse", mode_list="320x240-16")


def test_options_and_keywords_make_the_same_device():
    """VirtualDevice(w, h, fmt, options) and the same fields as keywords give one device;
    keywords given with options override them."""
    options = VirtualOptions(virtual_height=96, stride_align=64, can_blank=True)
    a = VirtualDevice(40, 48, "XRGB8888", options)
    b = VirtualDevice(40, 48, "XRGB8888", virtual_height=96, stride_align=64, can_blank=True)
    assert a.options == b.options
    assert (a.get_var(), a.get_fix()) == (b.get_var(), b.get_fix())
    assert a.get_fix().line_length == 192  # 160 bytes rounded up to 64
    c = VirtualDevice(40, 48, "XRGB8888", options, can_blank=False)
    assert not c.options.can_blank and c.options.stride_align == 64
    with pytest.raises(TypeError):
        VirtualDevice(40, 48, "XRGB8888", colour_depth=3)


def test_device_options_are_worked_out_and_kept_in_the_state_file(tmp_path):
    """device.options fills in memory and the mode list, and is what the state file keeps
    and what a second opener takes."""
    path = tmp_path / "fb.raw"
    with fbgfx.open(f"virtual:64x48:RGB565:file={path}:align=32:blank=1") as fb:
        kept = fb.device.options
        assert kept.memory == 2 * 64 * 48 * 2 and kept.mode_list == ["64x48-16"]
        assert (kept.stride_align, kept.can_blank, kept.file, kept.virtual_height) == (32, True, None, None)
        state = json.loads((tmp_path / "fb.raw.state.json").read_text())["device"]
        assert state == {
            "memory": kept.memory,
            "stride_align": 32,
            "line_length": None,
            "can_pan": True,
            "modes": "allow",
            "can_vsync": False,
            "can_blank": True,
            "id": "fbgfx virtual",
            "mode_list": ["64x48-16"],
        }
        with fbgfx.open(f"virtual:8x8:file={path}") as other:  # an opener takes the device as it is
            assert other.device.options == kept
