"""Lifetimes: Screens that are freed, forked children that leave the parent's display
alone, and devices that nothing writes to once closed.

Fork cases run in child processes (``os.fork`` here, with the child reporting through a
pipe and ending with ``os._exit``; or a script that forks and exits through ``atexit``).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
from support.fake_drm import FakeCard
from support.forking import in_child
from support.memory import rss_mb

import fbgfx
from fbgfx import _restore
from fbgfx.device import Framebuffer
from fbgfx.drm import DrmDevice
from fbgfx.errors import FramebufferError

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}


# -- Screens are freed ---------------------------------------------------------------------------


def test_screens_never_closed_are_freed_over_200_cycles():
    """`with fbgfx.open(...) as fb: fb.screen()` 200 times: no Screen or Framebuffer stays alive, RSS stays flat."""
    screens: weakref.WeakSet[fbgfx.Screen] = weakref.WeakSet()
    devices: weakref.WeakSet[Framebuffer] = weakref.WeakSet()

    def cycle() -> None:
        with fbgfx.open("virtual:320x240:XRGB8888") as fb:
            screen = fb.screen()
            with screen.frame() as s:  # touch the back buffers, as a program does
                s.clear("navy")
            screens.add(screen)
            devices.add(fb)

    for _ in range(20):  # warm up (allocator pools, caches)
        cycle()
    gc.collect()
    before = rss_mb()
    for _ in range(200):
        cycle()
    gc.collect()
    grown = rss_mb() - before
    assert len(screens) == 0 and len(devices) == 0, (len(screens), len(devices))
    # a leaked cycle holds ~0.9 MB (back buffer and mirror): 200 of them would be 180 MB
    assert grown < 40, f"RSS grew {grown:.0f} MB over 200 cycles"
    assert not [o for o in _restore.registered() if "virtual:320x240" in repr(o)]


@pytest.mark.parametrize("kept", [False, True])
def test_screen_buffers_go_with_the_device_close_without_the_collector(tmp_path, kept):
    """200 x `with fbgfx.open(...) as fb: fb.screen()` with the garbage collector off: RSS grows under 15 MB.

    The buffers are freed by the device's close(), not by the collector: also for
    Screens the program still holds (``kept``), which then raise as closed (on a
    framebuffer file: an in-memory device held through its Screen keeps its video memory)."""
    held = []
    spec = f"virtual:800x480:XRGB8888:file={tmp_path / 'fb.raw'}" if kept else "virtual:800x480:XRGB8888"

    def cycle() -> None:
        with fbgfx.open(spec) as fb:
            screen = fb.screen()
            with screen.frame() as s:  # touch the back buffers, as a program does
                s.clear("navy")
            if kept:
                held.append(screen)

    for _ in range(10):  # warm up (allocator pools, caches)
        cycle()
    gc.collect()
    gc.disable()
    try:
        before = rss_mb()
        for _ in range(200):
            cycle()
        grown = rss_mb() - before
    finally:
        gc.enable()
    # a cycle that keeps its buffers holds ~3 MB (back buffer and mirror): 200 would be 600 MB
    assert grown < 15, f"RSS grew {grown:.0f} MB over 200 cycles"
    if kept:
        with pytest.raises(FramebufferError, match="closed"):
            held[-1].flip()


def test_dropped_screen_is_collected_and_its_changes_come_back_on_close():
    """A Screen dropped without close is collected; closing the framebuffer still puts back the pages it grew."""
    fb = fbgfx.open("virtual:32x24:RGB565")
    screen = fb.screen(buffering="flip", console=False)
    with screen.frame() as s:
        s.clear("white")
    assert (fb.var.yres_virtual, fb.var.yoffset) == (48, 24)
    ref = weakref.ref(screen)
    del screen, s
    gc.collect()
    assert ref() is None
    device = fb.device
    fb.close()
    var = device.get_var()
    assert (var.yres_virtual, var.yoffset) == (24, 0)


def test_closing_a_framebuffer_closes_its_screens():
    """fb.close() closes every Screen opened on it: they and the Surfaces kept from them raise FramebufferError."""
    fb = fbgfx.open("virtual:32x24:RGB565")
    copy = fb.screen(buffering="copy", console=False)
    single = fbgfx.Screen(fb, buffering="single", console=False)
    kept = [copy.surface, single.surface, copy.surface.subsurface((0, 0, 8, 8))]
    fb.close()
    assert copy.closed and single.closed
    for screen in (copy, single):
        with pytest.raises(FramebufferError, match="closed"):
            screen.present(np.zeros((24, 32, 3), np.uint8))
        with pytest.raises(FramebufferError, match="closed"):
            screen.flip()
    for surface in kept:
        with pytest.raises(FramebufferError, match="closed"):
            surface.rectangle((0, 0, 4, 4), fill="red")
    with pytest.raises(FramebufferError):
        fb.screen()


# -- nothing writes to a closed device -----------------------------------------------------------


def test_single_present_after_close_raises_and_writes_nothing(tmp_path):
    """A "single" Screen's present() after fb.close() raises FramebufferError; the file keeps its bytes."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}")
    screen = fb.screen(buffering="single", console=False)
    screen.present(np.full((24, 32, 3), 255, np.uint8))
    fb.close()
    before = path.read_bytes()
    with pytest.raises(FramebufferError):
        screen.present(np.zeros((24, 32, 3), np.uint8))
    assert path.read_bytes() == before


@pytest.mark.parametrize("spec", ["file", "memory"])
def test_old_pixel_views_no_longer_reach_the_device(tmp_path, spec):
    """Writing through fb.pixels kept past close() changes nothing another opener sees; the view stays valid."""
    path = tmp_path / "fb.raw"
    if spec == "file":
        fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}")
    else:
        fb = fbgfx.VirtualFramebuffer(32, 24, "RGB565")
    fb.pixels[:] = 0x1234
    old, page = fb.pixels, fb.memory
    fb.close()
    old[:] = 0xFFFF
    page[:100] = 7
    assert old.shape == (24, 32)  # still a valid array
    if spec == "file":
        with fbgfx.open(f"virtual:32x24:RGB565:file={path}", readonly=True) as other:
            assert (other.pixels == 0x1234).all()
    else:
        again = Framebuffer(fb.device, "virtual")
        assert (again.pixels == 0x1234).all()
        again.close()


def test_fbdev_mapping_views_stop_reaching_the_device_after_close(tmp_path):
    """/dev/fbN's mapping (KernelDevice, a file standing in for the device): a view kept past close writes nowhere."""
    from fbgfx._fbdev import KernelDevice

    mem = tmp_path / "fbmem"
    mem.write_bytes(bytes(8192))
    device = KernelDevice.__new__(KernelDevice)  # the device check wants a /dev/fbN
    device.path, device.fd = str(mem), os.open(mem, os.O_RDWR)
    mapping = device.map(8192)
    view = np.frombuffer(mapping, np.uint8)
    view[:16] = 1
    device.unmap(mapping)
    device.close()
    view[:] = 0xAB  # still valid memory
    assert mem.read_bytes() == bytes([1] * 16) + bytes(8192 - 16)


def test_drm_views_and_screens_after_close():
    """On drm: a Screen's present() after fb.close() raises and frees nothing twice."""
    card = FakeCard()
    fb = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    screen = fb.screen(buffering="single")
    fb.close()
    calls = list(card.calls)
    with pytest.raises(FramebufferError):
        screen.present(np.zeros((800, 1280, 3), np.uint8))
    assert card.calls == calls


# -- fork ---------------------------------------------------------------------------------------------


def test_forked_child_closing_leaves_file_device_to_parent(tmp_path):
    """A child's screen.close() and fb.close() leave the mode, virtual size and pan offset the parent set."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=65536")
    fb.set_mode("16x12-16")
    screen = fb.screen(buffering="flip", console=False)
    with screen.frame() as s:
        s.clear("red")

    def child():
        screen.close()
        fb.close()
        return True

    assert in_child(child)
    var = fb.device.get_var()
    assert (var.xres, var.yres, var.yres_virtual, var.yoffset) == (16, 12, 24, 12)
    with screen.frame() as s:  # the parent carries on
        s.clear("blue")
    screen.close()
    fb.close()
    with fbgfx.open(f"virtual:32x24:RGB565:file={path}", readonly=True) as after:
        assert (after.var.xres, after.var.yres_virtual, after.var.yoffset) == (32, 24, 0)


@pytest.mark.parametrize("frames", [1, 2, 3])
@pytest.mark.parametrize("how", ["fb-close", "screen-close", "exit"])
def test_closing_after_page_flips_leaves_the_last_picture_shown(tmp_path, frames, how):
    """A flipping app on a shared display (a file a test holds open) closes: the display shows its last frame."""
    path = tmp_path / "fb.raw"
    spec = f"virtual:32x24:RGB565:file={path}"
    fbgfx.open(spec).close()
    held = fbgfx.open(spec, readonly=True)  # what a test fixture holds while the app runs
    colours = ["red", "lime", "blue"][:frames]
    app = textwrap.dedent(
        f"""
        import sys, fbgfx
        fb = fbgfx.open({spec!r})
        screen = fb.screen(buffering="flip", console=False)
        for colour in {colours!r}:
            with screen.frame() as s:
                s.clear(colour)
        if {how!r} == "screen-close":
            screen.close()
        if {how!r} != "exit":
            fb.close()
        """
    )
    out = subprocess.run([sys.executable, "-c", app], capture_output=True, text=True, env=ENV, timeout=120)
    assert out.returncode == 0, out.stderr
    held.refresh()
    assert (held.var.yoffset, held.var.yres_virtual) == (0, 24)  # pan offset and virtual size put back
    expected = {"red": (255, 0, 0), "lime": (0, 255, 0), "blue": (0, 0, 255)}[colours[-1]]
    assert held.snapshot().getextrema() == tuple((c, c) for c in expected)
    held.close()


@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
def test_forked_child_cannot_draw_on_the_parents_screen(tmp_path, buffering):
    """A child drawing a frame on an inherited Screen is refused; the parent's page and picture stay."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}")
    screen = fb.screen(buffering=buffering, console=False)
    with screen.frame() as s:
        s.clear("red")
    before = (fb.device.get_var().yoffset, fb.snapshot().tobytes())

    def child():
        refused = []
        for step in (
            lambda: screen.frame().__enter__(),
            lambda: screen.surface,
            screen.flip,
            lambda: screen.present(np.zeros((24, 32, 3), np.uint8)),
        ):
            try:
                step()
                refused.append("drew")
            except FramebufferError as e:
                refused.append("forked child" in str(e))
        return refused

    assert in_child(child) == [True] * 4
    assert (fb.device.get_var().yoffset, fb.snapshot().tobytes()) == before
    with screen.frame() as s:  # the parent carries on
        s.clear("blue")
    screen.close()
    fb.close()


CHILD_EXITS = textwrap.dedent(
    r"""
    import json, os, sys
    import fbgfx
    path = sys.argv[1]
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=65536")
    fb.set_mode("16x12-16")
    screen = fb.screen(buffering="flip", console=False)
    with screen.frame() as s:
        s.clear("red")
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # atexit, finalizers and the restore registry run in the child
    os.waitpid(pid, 0)
    var = fb.device.get_var()
    print(json.dumps([var.xres, var.yres_virtual, var.yoffset]))
    """
)


def test_forked_child_exiting_through_atexit_leaves_parent_alone(tmp_path):
    """A child that exits normally (atexit, finalizers) leaves the parent's file device as the parent set it."""
    script = tmp_path / "child.py"
    script.write_text(CHILD_EXITS)
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "fb.raw")], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [16, 24, 12]


def test_forked_child_leaves_drm_display_to_parent():
    """On drm: a child's close() restores no CRTC, frees no buffer, drops no master; the parent keeps flipping."""
    card = FakeCard()
    fb = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    screen = fb.screen()
    with screen.frame() as s:
        s.clear("red")

    def child():
        card.calls.clear()
        screen.close()
        fb.close()
        return card.calls

    assert in_child(child) == ["close"]
    with screen.frame() as s:
        s.clear("blue")
    assert (card.scanout().view("<u4") & 0xFFFFFF == 0x0000FF).all()
    screen.close()
    fb.close()


def test_forked_child_leaves_console_to_parent(tmp_path):
    """A child's Console.restore() does not put the VT back into text mode under the parent."""
    log = tmp_path / "kd"

    class VT:
        mode = 0

        def get_mode(self):
            return self.mode

        def set_mode(self, mode):
            self.mode = mode
            with open(log, "a") as f:
                f.write(f"{os.getpid()} {mode}\n")

    fb = fbgfx.open("virtual:16x8:RGB565")
    screen = fb.screen(console=VT())
    in_child(lambda: (screen.close(), fb.close(), True)[-1])
    assert [line.split()[1] for line in log.read_text().splitlines()] == ["1"]
    fb.close()
    assert [line.split()[1] for line in log.read_text().splitlines()] == ["1", "0"]


def test_forked_child_closing_touch_leaves_parent_reading():
    """A child closing a Touchscreen it inherited leaves the parent's reading intact."""
    from fbgfx.touch import AbsInfo, InputDevice, Touchscreen, _evdev

    info = InputDevice(
        "pipe",
        "test",
        axes=frozenset({_evdev.ABS_X, _evdev.ABS_Y}),
        keys=frozenset({_evdev.BTN_TOUCH}),
        absinfo={_evdev.ABS_X: AbsInfo(0, 0, 99), _evdev.ABS_Y: AbsInfo(0, 0, 99)},
    )
    r, w = os.pipe()
    ts = Touchscreen(r, info)
    in_child(lambda: (ts.close(), True)[-1])
    os.write(
        w,
        _evdev.encode(
            [(1, 0, _evdev.EV_ABS, _evdev.ABS_X, 10), (1, 0, _evdev.EV_KEY, _evdev.BTN_TOUCH, 1), (1, 0, 0, 0, 0)]
        ),
    )
    assert [e.type for e in ts.read(timeout=5)] == ["down"]
    ts.close()
    os.close(w)
