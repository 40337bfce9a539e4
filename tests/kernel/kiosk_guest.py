"""Guest side of tests/kernel/test_kiosk_vm.py: fbgfx mirror and fbgfx idle on real drivers.

Usage: python kiosk_guest.py RWDIR

Runs as root in the ``std`` boot: bochs (``/dev/fb0``, DRM fbdev emulation, card0),
vfb (``/dev/fb1``), qemu's virtio tablet and uinput. Another process (fbgfx, through a
Screen) holds a picture on ``/dev/fb0``; ``fbgfx mirror`` copies it onto vfb from
``/dev/fb0`` and from ``drm:card0`` (the CRTC's framebuffer through GETFB2); ``fbgfx
idle`` blanks bochs and is woken by a tap the host sends through QMP, which a second
reader of the tablet must not see, and with ``--any-input`` by a key of a uinput
keyboard, which a second reader of the keyboard must not see. A mirror from vfb onto
``drm:card0`` follows vfb's programs (``fbset``, ``cat``: mode changes, exits) and
bochs' monitor unplugged and back (its connector forced off and on). Each step records
what it measured in ``RWDIR/results.json``.
"""

from __future__ import annotations

import fcntl
import glob
import os
import queue
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from _forked import Child, cli, fork  # noqa: E402  (beside this file)
from _host_link import HostLink  # noqa: E402

import fbgfx  # noqa: E402
import fbgfx.touch  # noqa: E402
from fbgfx.kiosk.idle import DARK, LIT, Idle  # noqa: E402
from fbgfx.kiosk.mirror import Mirror  # noqa: E402
from fbgfx.touch import _evdev  # noqa: E402

LINK = HostLink(Path(sys.argv[1]))
TAP = (16384, 8192)  # raw tablet position the host taps
DEBUG_STATE = "/sys/kernel/debug/dri/0/state"


def _hold_picture(x: int, y: int) -> None:
    """Hold a picture on /dev/fb0 until SIGTERM (run in a forked child: another process):
    a navy screen with an orange square at X,Y and a white band, drawn by fbgfx (a Screen
    keeps the console quiet), and written again twice a second, as a program that animates
    would: qemu's bochs clears its video memory whenever a CRTC is turned on (VBE enable
    without NOCLEARMEM), so after a blank only a program that draws again shows its
    picture."""
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    with fbgfx.open("/dev/fb0") as fb, fb.screen(buffering="copy") as screen:
        for i in range(20):  # an animation first: the mirror follows it
            with screen.frame() as s:
                s.clear("navy")
                s.rectangle((20 * i, 100, 20 * i + 199, 299), fill="lime")
            time.sleep(0.05)
        with screen.frame() as s:
            s.clear("navy")
            s.rectangle((x, y, x + 399, y + 199), fill="orange")
            s.rectangle((0, 700, 1279, 739), fill="white")
        print("held", flush=True)
        while True:  # written again and again: qemu clears bochs' memory when a CRTC is lit
            time.sleep(0.5)
            screen.mark_dirty()
            screen.flip()


def _hold(x: int, y: int) -> Child:
    proc = fork(_hold_picture, x, y)
    line = proc.stdout.readline()
    if line.strip() != "held":
        proc.kill()
        raise RuntimeError(f"the picture holder did not start: {line!r} {proc.stderr.read()}")
    return proc


def _stop(proc: Child, timeout: float = 60) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err or ""


def _read_fb(path: str) -> np.ndarray:
    """The visible page as RGB, read from the device node (not through fbgfx's mapping)."""
    with fbgfx.open(path, readonly=True) as fb:
        size = fb.fix.line_length * fb.height
        offset = fb.var.yoffset * fb.fix.line_length
        fmt, width, height, stride = fb.format, fb.width, fb.height, fb.fix.line_length
        palette = fb.palette
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.pread(fd, size, offset)
    finally:
        os.close(fd)
    rows = np.frombuffer(data, np.uint8).reshape(height, stride)[:, : width * fmt.bpp // 8]
    native = np.ascontiguousarray(rows).view(fmt.dtype) if fmt.bpp in (16, 32) else rows
    return fmt.unpack(native, palette)[..., :3]


def _compare_mirror(report: str) -> dict[str, Any]:
    """/dev/fb1 (320x240) against /dev/fb0 (1280x800) averaged in 4x4 blocks, letterboxed."""
    src = _read_fb("/dev/fb0").astype(np.float64)
    dst = _read_fb("/dev/fb1").astype(np.int32)
    ref = src.reshape(200, 4, 320, 4, 3).mean(axis=(1, 3))
    found = re.search(r"(\d+) frames mirrored, (\d+) skipped", report)
    return {
        "diff": float(np.abs(dst[20:220] - ref).max()),
        "letterbox": int(max(dst[:20].max(), dst[220:].max())),
        "distinct": int(len(np.unique(dst.reshape(-1, 3), axis=0))),
        "mirrored": int(found.group(1)) if found else -1,
        "still_looks": int(found.group(2)) if found else -1,
        "report": report.strip().splitlines()[-1] if report.strip() else "",
    }


def _mirror(source: str, seconds: float) -> dict[str, Any]:
    """Mirror ``source`` onto vfb (in this process: a Python start costs a minute under
    TCG on a busy machine; the command line is tested without hardware) while the holder
    holds its picture."""
    subprocess.run(["fbset", "-fb", "/dev/fb1", "-g", "320", "240", "320", "240", "16"], check=True)
    with fbgfx.open("/dev/fb1") as dest:
        stats = fbgfx.mirror(source, dest, fps=20, duration=seconds)
        result = _compare_mirror(str(stats))
    return result


HOLDER = _hold(440, 300)


@LINK.step("mirror_fbdev")
def _mirror_fbdev() -> dict[str, Any]:
    return _mirror("/dev/fb0", 4)


@LINK.step("mirror_drm")
def _mirror_drm() -> dict[str, Any]:
    return _mirror("drm:card0", 4)


def _tablet() -> str:
    for dev in fbgfx.touch.list_devices():
        if dev.name == "QEMU Virtio Tablet":
            return dev.path
    raise RuntimeError("no QEMU Virtio Tablet")


def _backlight(root: Path) -> Path:
    folder = root / "class" / "backlight" / "qemu_bl"
    folder.mkdir(parents=True)
    (folder / "brightness").write_text("200\n")
    (folder / "max_brightness").write_text("255\n")
    (folder / "bl_power").write_text("0\n")
    return folder


def _level(path: Path) -> int:
    """A number in the fake sysfs: fbgfx idle writes it by truncating the file and writing,
    so a read between the two finds it empty: read again once the write is done."""
    for _ in range(1000):
        text = path.read_text().strip()
        if text:
            return int(text)
        time.sleep(0.01)
    raise RuntimeError(f"{path} stayed empty")


def _wait(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _drain(fd: int) -> int:
    got = 0
    while True:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return got
        if not data:
            return got
        got += len(data)


# uinput's ioctls (linux/uinput.h) and the one key pressed
UI_SET_EVBIT, UI_SET_KEYBIT, UI_DEV_CREATE, UI_DEV_DESTROY = 0x40045564, 0x40045565, 0x5501, 0x5502
UI_GET_SYSNAME_64 = (2 << 30) | (64 << 16) | (ord("U") << 8) | 44
KEY_A = 30


class Keyboard:
    """A keyboard made through ``/dev/uinput``: an input device that is no touchscreen
    (what ``fbgfx idle --any-input`` watches too)."""

    def __init__(self) -> None:
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_CLOEXEC)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, _evdev.EV_KEY)
        for code in range(1, 128):  # a PC keyboard's main keys
            fcntl.ioctl(self.fd, UI_SET_KEYBIT, code)
        # struct uinput_user_dev: name, input_id (BUS_VIRTUAL), ff_effects_max, 4 x 64 abs values
        setup = struct.pack("=80sHHHHI", b"fbgfx kiosk test keyboard", 0x06, 0x1209, 0x0001, 1, 0)
        os.write(self.fd, setup + bytes(4 * 64 * 4))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        sysname = fcntl.ioctl(self.fd, UI_GET_SYSNAME_64, bytes(64)).split(b"\0")[0].decode()
        pattern = f"/sys/devices/virtual/input/{sysname}/event*"
        if not _wait(lambda: bool(glob.glob(pattern)), 10):
            raise RuntimeError(f"no event node for the uinput keyboard {sysname}")
        self.path = f"/dev/input/{os.path.basename(glob.glob(pattern)[0])}"
        if not _wait(lambda: os.path.exists(self.path), 10):
            raise RuntimeError(f"no {self.path}")

    def press(self, code: int = KEY_A) -> None:
        """Press and release a key: delivered at once, during this write, to every reader
        of the device (or to the one that grabbed it alone)."""
        key, syn = _evdev.EV_KEY, _evdev.EV_SYN
        down, up = [(0, 0, key, code, 1), (0, 0, syn, 0, 0)], [(0, 0, key, code, 0), (0, 0, syn, 0, 0)]
        os.write(self.fd, _evdev.encode(down + up))

    def close(self) -> None:
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)


_KEYBOARD: list[Keyboard] = []


def _keyboard() -> Keyboard:
    """The guest's uinput keyboard, made once (before the idles that must see it start)."""
    if not _KEYBOARD:
        _KEYBOARD.append(Keyboard())
    return _KEYBOARD[0]


def _states(log: Path) -> list[str]:
    """The states ``fbgfx idle`` said in its log, in order (a record: none is missed)."""
    return re.findall(r"^fbgfx: idle: (lit|dim|dark)$", _text(log), re.M)


def _watching(log: Path) -> str:
    found = re.search(r"^fbgfx: idle: watching (.*)$", _text(log), re.M)
    return found.group(1) if found else ""


def _crtc_active() -> list[str]:
    """The CRTCs' ``active=`` values in the atomic state (``self_refresh_active`` left out)."""
    try:
        return re.findall(r"(?<![_a-z])active=(\d)", Path(DEBUG_STATE).read_text())
    except OSError as e:
        return [f"unreadable: {e}"]


def _shown(name: str) -> dict[str, Any]:
    shot = LINK.screendump(name)
    orange = np.all(shot == (255, 165, 0), axis=-1)
    return {"max": int(shot.max()), "orange": int(orange.sum()), "size": list(shot.shape[1::-1])}


def _shown_when(name: str, lit: bool, timeout: float = 20) -> dict[str, Any]:
    """The screendump once the monitor is lit (the orange shows) or black, or at the
    timeout (qemu redraws its monitor some time after a mode set, slower under TCG)."""
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        tries += 1
        shown = _shown(f"{name}-{tries}")
        if (shown["orange"] > 0) == lit and (lit or shown["max"] == 0) or time.monotonic() > deadline:
            shown["tries"] = tries
            return shown
        time.sleep(1)


def _shown_lit(name: str, limit: float = 120) -> dict[str, Any]:
    """The screendump once the held picture shows, the tablet tapped before each look: a
    tap is input, so fbgfx idle stays lit (its timers start again) however slow the looks
    are under load; the held picture is drawn again twice a second."""
    deadline = time.monotonic() + limit
    tries = 0
    while True:
        tries += 1
        LINK.ask(do="tap", x=TAP[0], y=TAP[1])
        shown = _shown(f"{name}-{tries}")
        if shown["orange"] > 0 or time.monotonic() > deadline:
            shown["tries"] = tries
            return shown
        time.sleep(0.2)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@LINK.step("idle_fbdev")
def _idle_fbdev() -> dict[str, Any]:
    subprocess.run("mount -t debugfs none /sys/kernel/debug 2>/dev/null", shell=True)
    tablet = _tablet()
    kbd = _keyboard()  # made before fbgfx idle starts: it could watch it, and must not
    out: dict[str, Any] = {"tablet": tablet, "keyboard": kbd.path}
    with tempfile.TemporaryDirectory() as tmp:
        bl = _backlight(Path(tmp))
        level = lambda name: _level(bl / name)  # noqa: E731
        log = Path(tmp) / "idle-stderr.txt"
        args = ["idle", "-d", "/dev/fb0", "--touch", tablet, "--dim-after", "3", "--off-after", "6"]
        idle = cli(*args, env={"FBGFX_SYSFS": tmp}, stderr=log)
        second = os.open(tablet, os.O_RDONLY | os.O_NONBLOCK)
        keys = os.open(kbd.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not _wait(lambda: "fbgfx: idle: watching" in _text(log), 300):
                raise RuntimeError(f"fbgfx idle did not start: {_text(log)[-2000:]}")
            out["watching"] = _watching(log)
            out["lit_before"] = _shown_lit("idle-lit-before")
            out["went_dark"] = _wait(lambda: level("bl_power") == 4, 60)
            out["dim_level"] = level("brightness")
            # Without --any-input a key is no wake: the keyboard is neither watched nor
            # grabbed (this reader gets the key), and the screen stays dark past the
            # screendump below (a host round trip) until the tap.
            _drain(keys)
            kbd.press()
            out["keys_while_dark"] = _drain(keys)
            out["dark"] = _shown_when("idle-dark", False)
            out["dark_active"] = _crtc_active()
            said = _states(log)
            out["dark_after_key"] = {"bl_power": level("bl_power"), "state": said[-1:]}
            _drain(second)
            LINK.ask(do="tap", x=TAP[0], y=TAP[1])
            # woken: said in the log (a record, not a window of the backlight's file)
            out["woke"] = _wait(lambda: "lit" in _states(log)[len(said) :], 60)
            out["woke_level"] = level("brightness")
            out["states_at_woke_level"] = _states(log)[len(said) :]  # no "dim" after "lit": read while lit
            # the waking tap, pressed and released while grabbed: it never reached this reader
            out["second_reader_while_dark"] = _drain(second)
            # Lit, the grab is let go once the Idle read the release: a tap after that reaches
            # everybody. Tapped until one does (each tap keeps it lit), never a timed wait.
            got = taps = 0
            while not got and taps < 10:
                LINK.ask(do="tap", x=TAP[0], y=TAP[1])
                taps += 1
                got = _drain(second)
            out["second_reader_while_lit"], out["taps_while_lit"] = got, taps
            out["lit"] = _shown_lit("idle-lit")
            out["lit_active"] = _crtc_active()
            out["dark_again"] = _wait(lambda: level("bl_power") == 4, 60)
            idle.terminate()
            out["rc"] = idle.wait(60)
            out["stderr"] = _text(log)[-2000:]
            out["after_sigterm"] = {"bl_power": level("bl_power"), "brightness": level("brightness")}
            out["after_sigterm_shown"] = _shown_when("idle-after-sigterm", True)
        finally:
            os.close(second)
            os.close(keys)
            idle.kill()  # when it did not end
            idle.wait()
    return out


@LINK.step("idle_any_input")
def _idle_any_input() -> dict[str, Any]:
    """fbgfx idle --any-input: a key of the uinput keyboard wakes the dark screen and is
    swallowed (a second reader of the keyboard does not get it). Waits on the states
    fbgfx idle logs (a record, nothing missed), never on a lit window."""
    kbd = _keyboard()
    out: dict[str, Any] = {"keyboard": kbd.path}
    with tempfile.TemporaryDirectory() as tmp:
        bl = _backlight(Path(tmp))
        level = lambda name: _level(bl / name)  # noqa: E731
        log = Path(tmp) / "idle-stderr.txt"
        keys = os.open(kbd.path, os.O_RDONLY | os.O_NONBLOCK)
        idle: Child | None = None
        try:
            kbd.press()
            out["keys_before"] = _drain(keys)  # this reader gets keys (nothing grabbed yet)
            args = ["idle", "-d", "/dev/fb0", "--any-input", "--dim-after", "1", "--off-after", "2"]
            idle = cli(*args, env={"FBGFX_SYSFS": tmp}, stderr=log)
            if not _wait(lambda: "fbgfx: idle: watching" in _text(log), 300):
                raise RuntimeError(f"fbgfx idle did not start: {_text(log)[-2000:]}")
            out["watching"] = _watching(log)
            # dark until an input: the grabs are taken before "dark" is said
            out["went_dark"] = _wait(lambda: "dark" in _states(log), 60)
            out["dark_bl_power"] = level("bl_power")
            out["dark_active"] = _crtc_active()
            kbd.press()  # delivered during the write: to the grab's holder alone
            out["keys_while_dark"] = _drain(keys)
            out["woke"] = _wait(lambda: "lit" in _states(log), 60)
            out["states"] = _states(log)
            idle.terminate()
            out["rc"] = idle.wait(60)
            out["stderr"] = _text(log)[-2000:]
            out["after_sigterm"] = {"bl_power": level("bl_power"), "brightness": level("brightness")}
        finally:
            os.close(keys)
            if idle is not None:
                idle.kill()  # when it did not end
                idle.wait()
    return out


_stop(HOLDER)  # the drm: display takes the card over


def _drm_program() -> None:
    """Another program on drm:card0 (run forked), its DRM master. It shows a picture at
    bochs' mode, then sets 640x480 and shows another, then exits (fbgfx puts the CRTC back
    on the console's framebuffer); it says "1" and "2" on stdout and waits for a line on
    stdin after each."""
    with fbgfx.open("drm:card0") as fb:
        with fb.screen(buffering="copy") as screen, screen.frame() as s:
            s.clear("navy")
            s.rectangle((440, 300, 839, 499), fill="orange")
            s.rectangle((0, 700, 1279, 739), fill="white")
        print("1", flush=True)
        sys.stdin.readline()
        fb.set_mode(width=640, height=480)
        with fb.screen(buffering="copy") as screen, screen.frame() as s:
            s.clear("maroon")
            s.rectangle((100, 60, 299, 259), fill="lime")
        print("2", flush=True)
        sys.stdin.readline()


def _vfb_follows(m: Mirror, name: str, limit: float = 120) -> dict[str, Any]:
    """Looks until vfb (320x240, read from the device) holds qemu's screendump of bochs
    averaged in whole blocks and letterboxed, or ``limit`` seconds passed."""
    deadline = time.monotonic() + limit
    tries = 0
    while True:
        m.step()
        tries += 1
        shot = LINK.screendump(f"{name}-{tries}").astype(np.float64)
        dst = _read_fb("/dev/fb1").astype(np.int32)
        height, width = shot.shape[:2]
        f = width // 320
        out_h = height // f
        top = (240 - out_h) // 2
        ref = shot[: out_h * f].reshape(out_h, f, 320, f, 3).mean(axis=(1, 3))
        err = np.abs(dst[top : top + out_h] - ref).max(axis=-1)
        box = np.ones(240, bool)
        box[top : top + out_h] = False
        result = {
            "source": [width, height],
            "diff": float(err.max()),
            "off": float((err > 9).mean()),  # the part more than RGB565's rounding off
            "letterbox": int(dst[box].max()) if box.any() else 0,
            "distinct": int(len(np.unique(dst.reshape(-1, 3), axis=0))),
            "tries": tries,
        }
        if (result["off"] == 0 and result["letterbox"] == 0) or time.monotonic() > deadline:
            return result


@LINK.step("mirror_drm_follows")
def _mirror_drm_follows() -> dict[str, Any]:
    """A mirror of drm:card0 onto vfb while another process (forked: fbgfx, as DRM master)
    shows a picture, sets another mode and shows another, then exits: each is followed
    (the CRTC's framebuffer and mode asked for again at every look)."""
    subprocess.run(["fbset", "-fb", "/dev/fb1", "-g", "320", "240", "320", "240", "16"], check=True)
    program = fork(_drm_program, stdin=True)
    assert program.stdin is not None
    out: dict[str, Any] = {}
    try:
        if program.stdout.readline() != "1\n":
            raise RuntimeError(f"the drm: program did not show its picture: {program.communicate(60)[1][-2000:]}")
        with fbgfx.open("/dev/fb1") as dest, Mirror("drm:card0", dest) as m:
            out["first"] = _vfb_follows(m, "drm-first")
            program.stdin.write("next\n")
            if program.stdout.readline() != "2\n":
                raise RuntimeError("the drm: program did not show its second picture")
            out["mode_set"] = _vfb_follows(m, "drm-mode-set")
            program.stdin.write("exit\n")
            out["rc"] = program.wait(120)
            out["after_exit"] = _vfb_follows(m, "drm-after-exit")
            out["stats"] = str(m.stats)
    finally:
        program.kill()  # when it did not end
        program.wait()
    return out


def _picture(width: int, height: int, back: tuple[int, int, int], box: tuple[int, int, int, int]) -> np.ndarray:
    """RGB: ``back`` with an orange box and a white band, edges on even pixels (so that a
    2x2 average is exact)."""
    pic = np.empty((height, width, 3), np.uint8)
    pic[:] = back
    x0, y0, x1, y1 = (v // 2 * 2 for v in box)
    pic[y0:y1, x0:x1] = (255, 165, 0)
    pic[height * 7 // 8 // 2 * 2 : height * 15 // 16 // 2 * 2] = (255, 255, 255)
    return pic


def _mirror_shows(m: Mirror, name: str, want: np.ndarray, limit: float = 120) -> dict[str, Any]:
    """Looks (``m.step()``) until qemu's screendump of bochs equals ``want`` within one
    level, or ``limit`` seconds passed: the monitor is redrawn some time after a write."""
    deadline = time.monotonic() + limit
    tries = 0
    while True:
        m.step()
        tries += 1
        shot = LINK.screendump(f"{name}-{tries}")
        same = shot.shape == want.shape
        diff = float(np.abs(shot.astype(np.int32) - want).max()) if same else -1.0
        if (same and diff <= 1) or time.monotonic() > deadline:
            return {"diff": diff, "size": list(shot.shape[1::-1]), "tries": tries}


def _force(connector: str, state: str) -> None:
    """Force bochs' connector ``on``/``off`` (or back to ``detect``) and send the card's
    uevent, as a monitor plugged or unplugged does."""
    Path(f"/sys/class/drm/card0-{connector}/status").write_text(state)
    Path("/sys/class/drm/card0/uevent").write_text("change")


def _program(script: str) -> int:
    """The source's program: ``sh -c SCRIPT`` (fbset, cat: neither fbgfx nor Python), run
    to its exit."""
    return subprocess.run(["sh", "-c", script], timeout=300, check=False).returncode


@LINK.step("mirror_follows")
def _mirror_follows() -> dict[str, Any]:
    """A mirror from vfb (/dev/fb1) onto bochs (drm:card0), looked at step by step while
    vfb's programs come and go: one draws and exits (the picture stays), the next sets
    another mode and draws (followed); bochs' monitor is unplugged while a third draws,
    and shows the source again once it is back."""
    out: dict[str, Any] = {}
    with fbgfx.open("/dev/fb1", readonly=True) as fb1:
        v = fb1.var
        before = (v.xres, v.yres, v.xres_virtual, v.yres_virtual, v.bits_per_pixel)
    try:
        dest = fbgfx.open("drm:card0:mode=640x480")
    except fbgfx.ModeError:
        dest = fbgfx.open("drm:card0:mode=1024x768")
    connector = dest.drm.connector  # type: ignore[union-attr]
    try:
        with dest, tempfile.TemporaryDirectory() as tmp:
            w, h = dest.size
            out["dest"] = [w, h, connector]
            _program(f"fbset -fb /dev/fb1 -g {w} {h} {w} {h} 32")
            with fbgfx.open("/dev/fb1", readonly=True) as fb1:
                fmt = fb1.format
                out["vfb"] = [fb1.width, fb1.height, fb1.fix.line_length, fmt.name]
            a = _picture(w, h, (0, 0, 128), (w // 4, h // 4, w // 2, h // 2))
            b = _picture(2 * w, 2 * h, (128, 0, 0), (w, h // 2, w * 3 // 2, h))
            c = _picture(2 * w, 2 * h, (0, 128, 128), (w // 2, h, w, h * 3 // 2))
            for name, pic in (("a", a), ("b", b), ("c", c)):
                (Path(tmp) / f"{name}.raw").write_bytes(fmt.pack(pic).tobytes())
            halved = lambda pic: pic.reshape(h, 2, w, 2, 3).mean(axis=(1, 3))  # noqa: E731
            with Mirror("/dev/fb1", dest) as m:
                out["a_rc"] = _program(f"cat {tmp}/a.raw > /dev/fb1")  # draws, exits
                out["a"] = _mirror_shows(m, "follow-a", a)  # 1:1: exact
                out["a_looks_after_exit"] = [m.step() for _ in range(3)]  # nothing new: skipped
                out["a_kept"] = _mirror_shows(m, "follow-a-kept", a, limit=0)
                out["b_rc"] = _program(
                    f"fbset -fb /dev/fb1 -g {2 * w} {2 * h} {2 * w} {2 * h} 32 && cat {tmp}/b.raw > /dev/fb1"
                )
                out["b"] = _mirror_shows(m, "follow-b", halved(b))  # 2x2 averages
                _force(connector, "off")
                out["unplugged"] = _wait(lambda: not dest.drm.connected, 60)  # type: ignore[union-attr]
                out["c_rc"] = _program(f"cat {tmp}/c.raw > /dev/fb1")
                out["looks_unplugged"] = [m.step() for _ in range(3)]  # no error, C written
                _force(connector, "on")
                out["replugged"] = _wait(lambda: dest.drm.connected, 60)  # type: ignore[union-attr]
                out["c"] = _mirror_shows(m, "follow-c", halved(c))
                out["stats"] = str(m.stats)
    finally:
        _force(connector, "detect")
        g = [str(n) for n in before]
        _program(f"fbset -fb /dev/fb1 -g {' '.join(g[:4])} {g[4]}")
    return out


@LINK.step("idle_drm")
def _idle_drm() -> dict[str, Any]:
    """fbgfx.Idle on drm:card0, each state change taken from ``on_change`` (a queue: none
    missed, whatever the load), and the display kept lit once the tap woke it (its
    timers cleared from ``on_change``, in the Idle's thread, before it could dim again)
    while the checks take their time."""
    tablet = _tablet()
    out: dict[str, Any] = {}
    changes: queue.Queue[str] = queue.Queue()
    idles: list[Idle] = []

    def on_change(state: str) -> None:
        if state == LIT and idles:
            idles[0].dim_after = idles[0].off_after = None  # lit until closed
        changes.put(state)

    def until(state: str, limit: float) -> list[str]:
        seen: list[str] = []
        while state not in seen:
            try:
                seen.append(changes.get(timeout=limit))
            except queue.Empty:
                break
        return seen

    with fbgfx.open("drm:card0") as fb, fb.screen(buffering="copy") as screen:
        with screen.frame() as s:
            s.clear("navy")
            s.rectangle((440, 300, 839, 499), fill="orange")
        out["lit_before"] = _shown_when("idle-drm-lit-before", True)
        with Idle(fb, tablet, dim_after=0.5, off_after=1.0, backlight=False, on_change=on_change) as idle:
            idles.append(idle)
            out["to_dark"] = until(DARK, 60)  # the CRTC is off before "dark" is said
            out["went_dark"] = idle.state == DARK
            out["dark_active"] = _crtc_active()
            out["dark"] = _shown_when("idle-drm-dark", False)
            LINK.ask(do="tap", x=TAP[0], y=TAP[1])
            out["to_lit"] = until(LIT, 60)  # the CRTC is on before "lit" is said
            out["woke"] = idle.state == LIT
            screen.mark_dirty()  # drawn again: qemu cleared bochs' memory as the CRTC came on
            screen.flip()
            out["lit_active"] = _crtc_active()
            out["lit"] = _shown_when("idle-drm-lit", True)
            out["still_lit"] = idle.state == LIT
            out["notes"] = list(idle.notes)
    return out


if _KEYBOARD:
    _KEYBOARD[0].close()
