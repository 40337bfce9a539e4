"""Framebuffer on the virtual device: memory layout, pan, palette, modes, restore, errors."""

import errno
import pathlib

import numpy as np
import pytest
from support.refuse import refuse_open

import fbgfx
from fbgfx import FramebufferError, ModeError

ALL_FORMATS = sorted(fbgfx.FORMATS)


def vfb_stride(width, bpp):
    """vfb's get_line_length(): bits rounded up to 32-bit words."""
    return ((width * bpp + 31) // 32) * 4


@pytest.mark.parametrize("width", [64, 37])
@pytest.mark.parametrize("name", ALL_FORMATS)
def test_pixels_land_at_kernel_offsets(name, width, open_virtual):
    """Writing fb.pixels puts each pixel at y*line_length + x*Bpp in video memory (even and odd widths)."""
    fb = open_virtual(f"{width}x5:{name}")
    fmt = fb.format
    assert fb.stride == vfb_stride(width, fmt.bpp)
    assert fb.pixels.shape == ((5, fmt.row_bytes(width)) if fmt.is_packed else fmt.array_shape(5, width))
    rgb = np.random.default_rng(width).integers(0, 256, (5, width, 3), dtype=np.uint8)
    native = fmt.pack(rgb, fb.palette)
    if fmt.is_packed:
        native = fmt.pack_bits(native)
    fb.pixels[...] = native
    rows = np.ascontiguousarray(native).view(np.uint8).reshape(5, -1)
    for y in range(5):
        start = y * fb.stride
        assert fb.memory[start : start + rows.shape[1]].tobytes() == rows[y].tobytes()
        assert not fb.memory[start + rows.shape[1] : (y + 1) * fb.stride].any()  # padding untouched
    assert np.array_equal(np.asarray(fb.snapshot()), fb.format.unpack(fmt.pack(rgb, fb.palette), fb.palette))


def test_configurable_stride_is_honoured(open_virtual):
    """A driver's padded line_length (not width*Bpp) separates rows."""
    fb = open_virtual("100x4:RGB565:stride=256")
    assert fb.stride == 256
    fb.pixels[2, 3] = 0xABCD
    assert fb.memory[2 * 256 + 6 : 2 * 256 + 8].tobytes() == b"\xcd\xab"


def test_view_and_pan_follow_the_offset():
    """After pan(0, y) fb.pixels starts at y*line_length; close() pans back."""
    fb = fbgfx.open("virtual:32x16:XRGB8888:vh=48")
    fb.view(0, 16, 32, 16)[0, 0] = 0x112233
    fb.pan(0, 16)
    assert fb.var.yoffset == 16
    assert fb.pixels[0, 0] == 0x112233
    assert fb.pixels.__array_interface__["data"][0] - fb.memory.__array_interface__["data"][0] == 16 * fb.stride
    device = fb.device
    fb.close()
    assert device.get_var().yoffset == 0


@pytest.mark.parametrize(
    "x, y, error",
    [(0, 33, ValueError), (-1, 0, ValueError), (1, 0, ValueError)],
)
def test_pan_outside_virtual_screen_is_refused(x, y, error, open_virtual):
    """Pan offsets that put the page outside the virtual screen raise without panning."""
    fb = open_virtual("32x16:XRGB8888:vh=48")
    with pytest.raises(error):
        fb.pan(x, y)
    assert (fb.var.xoffset, fb.var.yoffset) == (0, 0)


def test_pan_on_driver_that_cannot(open_virtual):
    """A driver with pan step 0 reports can_pan False and pan() raises EINVAL."""
    fb = open_virtual("32x16:XRGB8888:vh=48:pan=0")
    assert not fb.can_pan
    with pytest.raises(FramebufferError) as e:
        fb.pan(0, 16)
    assert e.value.errno == errno.EINVAL


def test_palette_round_trip_and_restore():
    """set_palette is read back by get_palette, used by snapshot, and restored on close."""
    fb = fbgfx.open("virtual:8x2:C8")
    original = fb.get_palette()
    colors = np.array([[10, 20, 30], [200, 100, 50]], np.uint8)
    fb.set_palette(colors, start=5)
    assert fb.get_palette(5, 2).tolist() == colors.tolist()
    fb.pixels[0, 0] = 6
    assert fb.snapshot().getpixel((0, 0)) == (200, 100, 50)
    device = fb.device
    fb.close()
    assert (device.get_cmap(0, 256)[:, :3] >> 8).tolist() == original.tolist()


@pytest.mark.parametrize(
    "colors, start, words",
    [
        (np.zeros((4,), np.uint8), 0, "shape"),
        (np.zeros((2, 3), int) + 300, 0, "0..255"),
        (np.zeros((2, 3)), 255, "outside"),
    ],
)
def test_bad_palettes_raise(colors, start, words, open_virtual):
    """Wrong shapes, values and ranges are ValueErrors and change nothing."""
    fb = open_virtual("8x2:C8")
    before = fb.get_palette()
    with pytest.raises(ValueError, match=words):
        fb.set_palette(colors, start)
    assert fb.get_palette().tolist() == before.tolist()


def test_set_mode_changes_geometry_and_close_restores():
    """set_mode applies depth and size, remaps pixels, and close() puts the original mode back."""
    fb = fbgfx.open("virtual:640x480:C8:memory=4000000")
    fb.set_mode(width=800, height=600, bpp=16, virtual_height=1200)
    assert (fb.width, fb.height, fb.var.yres_virtual, fb.format.name) == (800, 600, 1200, "RGB565")
    assert fb.stride == 1600 and fb.pixels.shape == (600, 800) and fb.pixels.dtype == np.uint16
    fb.pan(0, 600)
    device = fb.device
    fb.close()
    var = device.get_var()
    assert (var.xres, var.yres, var.bits_per_pixel, var.yres_virtual, var.yoffset) == (640, 480, 8, 480, 0)
    assert device.get_fix().line_length == 640


@pytest.mark.parametrize("name", ["XRGB8888", "RGB888", "RGB565", "C8", "R4"])
def test_set_mode_each_depth(name, open_virtual):
    """Every depth a driver offers can be set, at an odd width."""
    fmt = fbgfx.FORMATS[name]
    fb = open_virtual("64x64:XRGB8888:memory=100000")
    fb.set_mode(width=33, height=20, bpp=fmt.bpp)
    assert fb.format.bpp == fmt.bpp and fb.width == 33
    assert fb.stride == vfb_stride(33, fmt.bpp)


def test_pan_then_mode_change_restores_both():
    """A pan before a mode change is undone too: close() returns to the offset fbgfx found."""
    fb = fbgfx.open("virtual:32x16:XRGB8888:vh=32")
    fb.pan(0, 16)
    fb.set_mode(bpp=16)
    device = fb.device
    fb.close()
    var = device.get_var()
    assert (var.bits_per_pixel, var.yoffset, var.yres_virtual) == (32, 0, 32)


def test_pan_after_a_mode_change_shows_the_new_mode():
    """The var of each pan offset is made once per mode: after a mode change a pan to an
    offset used before reports (and gives the device) the new mode, not the old one."""
    fb = fbgfx.open("virtual:32x16:XRGB8888:vh=48")
    for y in (16, 0, 16, 0):
        fb.pan(0, y)
        assert fb.var == fb.device.get_var()
    fb.set_mode(bpp=16, virtual_height=48)
    for y in (16, 0, 16):
        fb.pan(0, y)
        assert (fb.var.bits_per_pixel, fb.var.yoffset) == (16, y)
        assert fb.var == fb.device.get_var()
    fb.set_mode(width=16, height=8, virtual_height=48)
    fb.pan(0, 16)
    assert (fb.var.xres, fb.var.yres, fb.var.bits_per_pixel, fb.var.yoffset) == (16, 8, 16, 16)
    assert fb.var == fb.device.get_var()
    fb.close()


@pytest.mark.parametrize("cls", [fbgfx.VarScreenInfo, fbgfx.FixScreenInfo])
def test_screeninfo_replace_is_dataclasses_replace(cls):
    """replace() (a pan makes one a frame) gives what dataclasses.replace gives, field by
    field, frozen and hashable alike, and refuses unknown fields the same way."""
    import dataclasses

    base = cls(**{f.name: (fbgfx.Bitfield(3, 5, 0) if f.type == "Bitfield" else ("fb" if f.name == "id" else i + 1))
                  for i, f in enumerate(dataclasses.fields(cls))})  # fmt: skip
    for i, f in enumerate(dataclasses.fields(cls)):
        value = fbgfx.Bitfield(1, 2, 0) if f.type == "Bitfield" else ("other" if f.name == "id" else 100 + i)
        got, want = base.replace(**{f.name: value}), dataclasses.replace(base, **{f.name: value})
        assert type(got) is cls and got == want and hash(got) == hash(want)
        assert dataclasses.asdict(got) == dataclasses.asdict(want)
        assert getattr(base, f.name) != value  # the original is unchanged
    assert base.replace() == base and base.replace() is not base
    name = dataclasses.fields(cls)[1].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(base.replace(**{name: 7}), name, 8)
    with pytest.raises(TypeError, match="no_such_field"):
        base.replace(no_such_field=1)


def test_kernel_device_pans_with_a_fresh_struct_of_each_var(monkeypatch):
    """/dev/fbN: the struct of a var is made once and a copy of it goes to each pan
    (FBIOPAN_DISPLAY writes its var back: what the kernel wrote never reaches the next
    pan); another var (another mode) gets its own struct."""
    from fbgfx import _fbdev

    sent = []

    class Lib:
        @staticmethod
        def fbgfx_pan(fd, c):
            sent.append((c.xoffset, c.yoffset, c.bits_per_pixel, c.red.offset, c.red.length, c.xres))
            c.xres = c.bits_per_pixel = c.red.length = 0  # as if the driver wrote it back changed
            return 0

    monkeypatch.setattr(_fbdev, "lib", Lib)
    device = _fbdev.KernelDevice.__new__(_fbdev.KernelDevice)
    device.path, device.fd = "/dev/fb-test", -1
    var = fbgfx.VarScreenInfo(xres=64, yres=48, xres_virtual=64, yres_virtual=96, bits_per_pixel=32,
                              red=fbgfx.Bitfield(16, 8, 0))  # fmt: skip
    pages = [var, var.replace(yoffset=48)]
    for page in pages * 3:
        device.pan(page)
    assert sent == [(0, 0, 32, 16, 8, 64), (0, 48, 32, 16, 8, 64)] * 3
    other = var.replace(bits_per_pixel=16, red=fbgfx.Bitfield(11, 5, 0), yoffset=48)
    sent.clear()
    device.pan(other)
    device.pan(pages[1])
    assert sent == [(0, 48, 16, 11, 5, 64), (0, 48, 32, 16, 8, 64)]


def test_refused_mode_changes_nothing(open_virtual):
    """A driver that refuses (DRM emulation) raises ModeError with errno; mode and picture stay."""
    fb = open_virtual("64x48:XRGB8888:modes=refuse")
    fb.pixels[...] = 0x00FF00
    before = (fb.var, fb.fix, fb.memory.tobytes())
    with pytest.raises(ModeError) as e:
        fb.set_mode(width=32, height=24)
    assert e.value.errno == errno.EINVAL
    assert e.value.requested["xres"] == 32
    assert "32x24" in str(e.value)
    assert (fb.var, fb.fix, fb.memory.tobytes()) == before


def test_mode_too_big_for_memory_is_enomem(open_virtual):
    """A mode that needs more video memory than the device has fails with ENOMEM."""
    fb = open_virtual("64x48:RGB565")
    with pytest.raises(ModeError) as e:
        fb.set_mode(width=640, height=480, bpp=32)
    assert e.value.errno == errno.ENOMEM
    assert fb.format.name == "RGB565" and fb.width == 64


def test_silently_ignored_mode_counts_as_refused(open_virtual):
    """A mode accepted into var but not shown (bochs DRM) raises ModeError and the original var is back."""
    fb = open_virtual("128x80:XRGB8888:modes=ignore")
    before = fb.var
    with pytest.raises(ModeError, match="100x60"):
        fb.set_mode(width=100, height=60)
    assert fb.var == before
    assert fb.device.get_var() == before


def test_same_mode_is_a_no_op(open_virtual):
    """Asking for the current mode touches nothing and leaves nothing to restore."""
    fb = open_virtual("64x48:RGB565:modes=refuse")
    fb.set_mode(width=64, height=48, bpp=16)
    assert fb.var.xres == 64


@pytest.mark.parametrize(
    "kwargs", [{"width": 0}, {"bpp": -16}, {"height": 1.5}, {"width": True}, {"width": 64, "virtual_width": 32}]
)
def test_bad_mode_arguments_raise_value_error(kwargs, open_virtual):
    """Non-positive, non-integer or inconsistent sizes are ValueErrors before any ioctl."""
    fb = open_virtual("64x48:RGB565")
    with pytest.raises(ValueError):
        fb.set_mode(**kwargs)


def test_refresh_picks_up_changes_made_elsewhere(open_virtual):
    """refresh() re-reads var/fix when another program changed the mode."""
    fb = open_virtual("64x48:XRGB8888")
    assert not fb.refresh()
    fb.device.put_var(fb.var.replace(bits_per_pixel=16))
    assert fb.refresh()
    assert fb.format.name == "RGB565" and fb.pixels.dtype == np.uint16


def test_blank_and_vsync_capabilities(open_virtual):
    """Drivers without blank or vsync answer False; with them, True, and close() unblanks."""
    plain = open_virtual("16x16")
    assert plain.blank() is False
    assert plain.wait_for_vsync() is False
    fb = fbgfx.open("virtual:16x16:blank=1:vsync=1")
    assert fb.blank("powerdown") is True
    assert fb.device.blanked == 4
    assert fb.wait_for_vsync() is True
    device = fb.device
    fb.close()
    assert device.blanked == 0
    with pytest.raises(ValueError):
        open_virtual("16x16:blank=1").blank("sideways")


def test_close_twice_and_use_after_close():
    """close() is safe twice; using a closed framebuffer raises EBADF."""
    fb = fbgfx.open("virtual:16x16")
    fb.close()
    fb.close()
    assert fb.closed
    with pytest.raises(FramebufferError) as e:
        fb.pixels
    assert e.value.errno == errno.EBADF


def test_file_backed_virtual_framebuffer_is_shared(tmp_path, open_virtual):
    """A file-backed virtual fb shows the same pixels to a second opener (another process's view)."""
    path = tmp_path / "fb.raw"
    fb = open_virtual(f"16x8:RGB565:file={path}")
    fb.pixels[3, 4] = 0x1234
    raw = np.fromfile(path, np.uint16)
    assert raw[3 * 16 + 4] == 0x1234


def test_file_backed_device_shares_mode_pan_and_palette(tmp_path):
    """A second opener of the same file-backed device sees the first one's mode, pan and palette."""
    spec = f"virtual:16x8:C8:vh=16:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as first:
        first.pan(0, 8)
        first.set_palette([[1, 2, 3]], start=7)
        first.view(0, 8, 16, 8)[0, 0] = 7
        with fbgfx.open(spec) as second:
            assert second.var.yoffset == 8
            assert second.snapshot().getpixel((0, 0)) == (1, 2, 3)
        first.set_mode(bpp=16)
        with fbgfx.open(spec) as third:
            assert third.format.name == "RGB565" and third.var.yoffset == 0
    with fbgfx.open(spec) as after:
        assert after.format.name == "C8" and after.var.yoffset == 0  # first restored on close
    with fbgfx.open(f"virtual:32x32:RGB565:file={tmp_path / 'fb.raw'}") as other:
        assert (other.size, other.format.name) == ((16, 8), "C8")  # the device as it is, whatever the spec says


def test_var_and_fix_use_kernel_names(open_virtual):
    """var and fix are frozen dataclasses with the kernel's field names."""
    fb = open_virtual("800x480:RGB565")
    assert (fb.var.xres, fb.var.yres, fb.var.bits_per_pixel) == (800, 480, 16)
    assert (fb.var.red.offset, fb.var.red.length) == (11, 5)
    assert fb.fix.line_length == 1600 and fb.fix.smem_len >= 1600 * 480
    with pytest.raises(AttributeError):
        fb.var.xres = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    "spec, words",
    [
        ("virtual:800", "WIDTHxHEIGHT"),
        ("virtual:80x60:RGB999", "unknown pixel format"),
        ("virtual:80x60:colour=1", "unknown virtual framebuffer option"),
    ],
)
def test_bad_virtual_specs(spec, words):
    """Malformed virtual specs are clear ValueErrors."""
    with pytest.raises(ValueError, match=words):
        fbgfx.open(spec)


def test_open_resolves_paths(monkeypatch):
    """open() takes N, 'N', path-likes and $FRAMEBUFFER, defaulting to /dev/fb0."""
    seen = []

    class Stop(Exception):
        pass

    def fake(path):
        seen.append(path)
        raise Stop

    monkeypatch.setattr("fbgfx._open.KernelDevice", fake)
    monkeypatch.delenv("FRAMEBUFFER", raising=False)
    for arg in (None, 3, "4", pathlib.Path("/dev/fb5")):
        with pytest.raises(Stop):
            fbgfx.open(arg)
    monkeypatch.setenv("FRAMEBUFFER", "/dev/fb6")
    with pytest.raises(Stop):
        fbgfx.open()
    assert seen == ["/dev/fb0", "/dev/fb3", "/dev/fb4", "/dev/fb5", "/dev/fb6"]
    monkeypatch.setenv("FRAMEBUFFER", "virtual:10x10:RGB565")
    with fbgfx.open() as fb:
        assert fb.format.name == "RGB565"


def test_missing_device_lists_what_exists():
    """A missing device is ENOENT naming the path and the framebuffers that exist."""
    with pytest.raises(FramebufferError) as e:
        fbgfx.open("/dev/fb31")
    assert e.value.errno == errno.ENOENT
    assert "/dev/fb31" in str(e.value) and "available" in str(e.value)


def test_permission_denied_says_join_video(monkeypatch):
    """EACCES tells the user to join the video group."""
    refuse_open(monkeypatch, "/dev/fb0", PermissionError, errno.EACCES, "Permission denied")
    with pytest.raises(FramebufferError) as e:
        fbgfx.open("/dev/fb0")
    assert e.value.errno == errno.EACCES and "video" in str(e.value)


@pytest.mark.parametrize("path", ["/dev/null", __file__])
def test_not_a_framebuffer(path):
    """A regular file or another character device is refused with ENOTTY, not a crash."""
    with pytest.raises(FramebufferError) as e:
        fbgfx.open(path)
    assert e.value.errno == errno.ENOTTY and "not a framebuffer" in str(e.value)


def test_import_compiles_nothing():
    """import fbgfx uses the prebuilt native module and loads no compiler glue (cffi's recompiler, setuptools)."""
    import subprocess
    import sys

    # Counted after numpy and Pillow are in: Pillow < 10 itself imports cffi.api (for PyPy).
    code = (
        "import sys, numpy, PIL.Image, PIL.ImageDraw, PIL.ImageFont; before = set(sys.modules); import fbgfx; "
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(('cffi.', 'setuptools', 'distutils'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
