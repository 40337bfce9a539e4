"""What fbgfx reads about the device equals what sysfs, fbset and raw ioctls say."""

import numpy as np
import pytest

import fbgfx

pytestmark = pytest.mark.kernel

# The mode each driver setup boots into: (format name, width, height, bpp).
BOOT_MODES = {
    "vfb": ("C8", 640, 480, 8),
    "bochs": ("XRGB8888", 1280, 800, 32),
    "cirrus": ("RGB565", 1024, 768, 16),
    "cirrusfb": ("C8", 640, 480, 8),
}


def test_boot_mode_and_format(kernel):
    """fbgfx names the boot mode's pixel format as expected for this driver."""
    name, width, height, bpp = BOOT_MODES[kernel.setup]
    with fbgfx.open(kernel.device) as fb:
        assert (fb.format.name, fb.width, fb.height, fb.format.bpp) == (name, width, height, bpp)


def test_geometry_matches_sysfs(kernel):
    """Virtual size, depth, stride and name equal /sys/class/graphics/fb0."""
    with fbgfx.open(kernel.device) as fb:
        assert (fb.var.xres_virtual, fb.var.yres_virtual) == kernel.sysfs_pair("virtual_size")
        assert fb.var.bits_per_pixel == int(kernel.sysfs("bits_per_pixel"))
        assert fb.stride == fb.fix.line_length == int(kernel.sysfs("stride"))
        assert (fb.var.xoffset, fb.var.yoffset) == kernel.sysfs_pair("pan")
        assert fb.fix.id == kernel.sysfs("name")


def test_geometry_matches_fbset(kernel):
    """Geometry, bitfields, stride, pan steps and memory size equal `fbset -i`."""
    info = kernel.fbset()
    with fbgfx.open(kernel.device) as fb:
        v, f = fb.var, fb.fix
        assert info["geometry"] == (v.xres, v.yres, v.xres_virtual, v.yres_virtual, v.bits_per_pixel)
        if "rgba" in info:
            assert info["rgba"] == tuple((bf.length, bf.offset) for bf in (v.red, v.green, v.blue, v.transp))
        assert int(info["LineLength"]) == f.line_length == fb.stride
        assert int(info["XPanStep"]) == f.xpanstep and int(info["YPanStep"]) == f.ypanstep
        assert info["Name"] == f.id
        assert int(info["Size"]) == f.smem_len


def test_var_and_fix_match_raw_ioctls(kernel):
    """fb.var and fb.fix hold the same numbers as FBIOGET_VSCREENINFO/FSCREENINFO."""
    raw_var, raw_fix = kernel.var(), kernel.fix()
    with fbgfx.open(kernel.device) as fb:
        for name in (
            "xres",
            "yres",
            "xres_virtual",
            "yres_virtual",
            "xoffset",
            "yoffset",
            "bits_per_pixel",
            "grayscale",
            "nonstd",
            "pixclock",
        ):
            assert getattr(fb.var, name) == raw_var[name], name
        for chan in ("red", "green", "blue", "transp"):
            bf = getattr(fb.var, chan)
            assert (bf.offset, bf.length, bf.msb_right) == (
                raw_var[f"{chan}_offset"],
                raw_var[f"{chan}_length"],
                raw_var[f"{chan}_msb_right"],
            ), chan
        for name in ("id", "smem_len", "type", "visual", "xpanstep", "ypanstep", "ywrapstep", "line_length"):
            assert getattr(fb.fix, name) == raw_fix[name], name


def test_memory_spans_all_video_memory(kernel):
    """fb.memory maps all smem_len bytes: its last bytes equal a pread of the device."""
    with fbgfx.open(kernel.device) as fb:
        size = kernel.fix()["smem_len"]
        assert fb.memory.dtype == np.uint8 and fb.memory.size == size
        marker = np.arange(1, 65, dtype=np.uint8)
        fb.memory[-64:] = marker
        assert kernel.read(size - 64, 64) == marker.tobytes()


def test_wait_for_vsync_answers_promptly(kernel):
    """fb.wait_for_vsync() returns a bool within a second; vfb has no vsync to wait for."""
    import time

    with fbgfx.open(kernel.device) as fb:
        start = time.monotonic()
        waited = fb.wait_for_vsync()
        assert isinstance(waited, bool)
        assert time.monotonic() - start < 1.0
        if kernel.setup == "vfb":
            assert waited is False


def test_cli_info_json_matches_fbset(kernel, capsys):
    """`python -m fbgfx info --json` reports the geometry and stride that `fbset -i` shows."""
    import json

    from fbgfx.cli import main

    assert main(["info", "--json", "--device", kernel.device]) == 0
    info = json.loads(capsys.readouterr().out)
    v, fix = info["var"], info["fix"]
    assert kernel.fbset()["geometry"] == (
        v["xres"],
        v["yres"],
        v["xres_virtual"],
        v["yres_virtual"],
        v["bits_per_pixel"],
    )
    assert fix["line_length"] == int(kernel.sysfs("stride"))
