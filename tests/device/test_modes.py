"""Mode strings, the kernel's and fbset's mode lists, and set_mode with a mode string."""

import pytest

import fbgfx
from fbgfx.errors import ModeError
from fbgfx.modes import (
    Mode,
    list_modes,
    parse_fb_modes,
    parse_mode,
    read_fb_modes,
    read_sysfs_modes,
)

FB_MODES_TEXT = """
# a comment
mode "640x480-60"
    # D: 25.175 MHz, H: 31.469 kHz, V: 59.94 Hz
    geometry 640 480 640 480 8
    timings 39722 48 16 33 10 96 2
endmode

mode "800x600-16"
    geometry 800 600 800 1200 16
    timings 25000 88 40 23 1 128 4
    hsync high
    vsync high
endmode

mode "broken"
    timings 1 2 3
endmode

mode "1024x768i"
    geometry 1024 768 1024 768 32
    timings 22271 56 24 33 8 160 8
    laced true
endmode
"""


@pytest.mark.parametrize(
    "text, expected",
    [
        ("800x600", (800, 600, None, None)),
        ("800x600-16", (800, 600, 16, None)),
        ("800x600-32@1200", (800, 600, 32, 1200)),
        ("800x600@1200", (800, 600, None, 1200)),
        (" 1920X1080-24 ", (1920, 1080, 24, None)),
    ],
)
def test_parse_mode_strings(text, expected):
    """Mode strings give width, height, depth and virtual height (None when not given)."""
    m = parse_mode(text)
    assert (m.width, m.height, m.bpp, m.virtual_height) == expected


@pytest.mark.parametrize(
    "text", ["800", "800x", "x600", "800x600-", "800x600-16@", "0x600", "800x600-0", "800x600-13", "800x600@500", "abc"]
)
def test_parse_mode_rejects_bad_strings(text):
    """Malformed or impossible mode strings raise ValueError naming the expected form."""
    with pytest.raises(ValueError, match="mode"):
        parse_mode(text)


def test_parse_mode_rejects_non_strings():
    """A number is not a mode string."""
    with pytest.raises(TypeError):
        parse_mode(800)


@pytest.mark.parametrize("text", ["800x600", "800x600-16", "800x600-32@1200"])
def test_mode_string_round_trips(text):
    """str(Mode) is a mode string that parses back to the same mode."""
    assert str(parse_mode(text)) == text
    assert parse_mode(str(parse_mode(text))) == parse_mode(text)


def test_sysfs_modes_are_read_without_repeats(tmp_path):
    """The kernel's fbN/modes lines (U:1024x768p-60) become modes with refresh rates, once each."""
    (tmp_path / "fb1").mkdir()
    (tmp_path / "fb1" / "modes").write_text("U:1024x768p-60\nS:640x480p-75\nU:1024x768p-60\nD:720x576i-50\ngarbage\n")
    modes = read_sysfs_modes("/dev/fb1", root=str(tmp_path))
    assert [(m.width, m.height, m.refresh, m.interlaced) for m in modes] == [
        (1024, 768, 60, False),
        (640, 480, 75, False),
        (720, 576, 50, True),
    ]
    assert all(m.bpp is None and m.source == "sysfs" for m in modes)
    assert read_sysfs_modes(1, root=str(tmp_path)) == modes
    assert read_sysfs_modes("/dev/fb7", root=str(tmp_path)) == []


def test_fb_modes_database_is_parsed():
    """fbset's fb.modes blocks give geometry, depth, virtual size, timings and refresh; broken blocks are skipped."""
    modes = parse_fb_modes(FB_MODES_TEXT, source="test")
    assert [m.name for m in modes] == ["640x480-60", "800x600-16", "1024x768i"]
    vga, svga, laced = modes
    assert (vga.width, vga.height, vga.bpp, vga.refresh) == (640, 480, 8, 60)
    assert vga.timings.pixclock == 39722 and vga.timings.vsync_len == 2
    assert (svga.virtual_width, svga.virtual_height, svga.bpp) == (800, 1200, 16)
    assert str(svga) == "800x600-16@1200"
    assert laced.interlaced


def test_read_fb_modes_missing_file_is_empty(tmp_path):
    """A system without /etc/fb.modes lists nothing from it, without an error."""
    assert read_fb_modes(str(tmp_path / "nope")) == []


def test_list_modes_combines_sysfs_and_fb_modes(tmp_path):
    """For /dev/fbN the list holds sysfs modes then fb.modes entries; other devices read neither."""
    (tmp_path / "fb0").mkdir()
    (tmp_path / "fb0" / "modes").write_text("U:1024x768p-60\n")
    db = tmp_path / "fb.modes"
    db.write_text(FB_MODES_TEXT)
    modes = list_modes("/dev/fb0", sysfs_root=str(tmp_path), fb_modes=str(db))
    assert [m.label for m in modes][:2] == ["1024x768 (60 Hz, sysfs)", f'640x480-8 (60 Hz, "640x480-60", {db})']
    assert len(modes) == 4
    assert list_modes("virtual:64x48", ["320x240-16"], sysfs_root=str(tmp_path), fb_modes=str(db)) == [
        Mode(320, 240, 16, source="device")
    ]


def test_framebuffer_modes_of_virtual_device(open_virtual):
    """fb.modes() of a virtual device lists its modelist, or its starting mode by default."""
    listed = open_virtual("64x48:RGB565:modelist=640x480-8,800x600-16@1200")
    assert [str(m) for m in listed.modes()] == ["640x480-8", "800x600-16@1200"]
    plain = open_virtual("64x48:RGB565")
    assert [str(m) for m in plain.modes()] == ["64x48-16"]


def test_set_mode_takes_a_mode_string():
    """set_mode('WxH-BPP@VH') changes size, depth and virtual height; close restores all of it."""
    fb = fbgfx.open("virtual:64x48:XRGB8888:memory=65536")
    fb.set_mode("32x24-16@48")
    assert (fb.var.xres, fb.var.yres, fb.var.bits_per_pixel, fb.var.yres_virtual) == (32, 24, 16, 48)
    assert fb.format.name == "RGB565"
    fb.set_mode(parse_mode("40x30"))
    assert (fb.var.xres, fb.var.yres, fb.var.bits_per_pixel) == (40, 30, 16)
    device = fb.device
    fb.close()
    var = device.get_var()
    assert (var.xres, var.yres, var.bits_per_pixel, var.yres_virtual) == (64, 48, 32, 48)


def test_test_mode_takes_a_mode_string(open_virtual):
    """test_mode('WxH-BPP') answers without changing anything."""
    fb = open_virtual("64x48:XRGB8888:memory=65536")
    var = fb.test_mode("32x24-16")
    assert (var.xres, var.bits_per_pixel) == (32, 16)
    assert (fb.var.xres, fb.var.bits_per_pixel) == (64, 32)


def test_set_mode_string_refused(open_virtual):
    """A refused mode string raises ModeError and leaves the mode as it was."""
    fb = open_virtual("64x48:RGB565:modes=refuse")
    with pytest.raises(ModeError):
        fb.set_mode("32x24-16")
    assert (fb.width, fb.height) == (64, 48)


def test_set_mode_string_with_height_is_an_error(open_virtual):
    """A mode string and an explicit height together are ambiguous: ValueError."""
    fb = open_virtual("64x48")
    with pytest.raises(ValueError, match="either"):
        fb.set_mode("32x24", 24)
    with pytest.raises(ValueError, match="bad mode"):
        fb.set_mode("32by24")
