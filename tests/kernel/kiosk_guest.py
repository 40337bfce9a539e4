"""Guest side of tests/kernel/test_kiosk_vm.py: fbgfx mirror and fbgfx idle on real drivers.

Usage: python kiosk_guest.py RWDIR

Runs as root in the ``std`` boot: bochs (``/dev/fb0``, DRM fbdev emulation, card0),
vfb (``/dev/fb1``) and qemu's virtio tablet. Another process (fbgfx, through a Screen)
holds a picture on ``/dev/fb0``; ``fbgfx mirror`` copies it onto vfb from ``/dev/fb0``
and from ``drm:card0`` (the CRTC's framebuffer through GETFB2); ``fbgfx idle`` blanks
bochs and is woken by a tap the host sends through QMP, which a second reader of the
tablet must not see. Each step records what it measured in ``RWDIR/results.json``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from _host_link import HostLink  # noqa: E402  (beside this file)

import fbgfx  # noqa: E402
import fbgfx.touch  # noqa: E402
from fbgfx.kiosk.idle import DARK, LIT, Idle  # noqa: E402

LINK = HostLink(Path(sys.argv[1]))
TAP = (16384, 8192)  # raw tablet position the host taps
DEBUG_STATE = "/sys/kernel/debug/dri/0/state"

# Holds a picture on /dev/fb0 until SIGTERM: a navy screen with an orange square at X,Y
# and a white band, drawn by fbgfx in its own process (a Screen keeps the console quiet),
# and written again twice a second, as a program that animates would: qemu's bochs clears
# its video memory whenever a CRTC is turned on (VBE enable without NOCLEARMEM), so
# after a blank only a program that draws again shows its picture.
HOLD = textwrap.dedent(
    """
    import signal, sys, time, fbgfx
    x, y = int(sys.argv[1]), int(sys.argv[2])
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
    """
)


def _python(*args: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], cwd=REPO, text=True, **kw)


def _hold(x: int, y: int) -> subprocess.Popen[str]:
    proc = _python("-c", HOLD, str(x), str(y), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "held":
        proc.kill()
        raise RuntimeError(f"the picture holder did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc


def _stop(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str]:
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


def _fork_cli(args: list[str], env: dict[str, str], log: Path) -> int:
    """Run ``fbgfx ARGS`` in a forked child (fbgfx is imported already: a new Python takes
    minutes to start under TCG on a busy machine), its stderr into ``log``."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 99
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            sys.stderr = open(2, "w", closefd=False)  # the child's stderr until _exit
            os.environ.update(env)
            from fbgfx.cli import main

            code = main(args)
        except BaseException:  # reported in the log, then the child ends
            import traceback

            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    return pid


def _exit_status(pid: int, timeout: float) -> int:
    """The child's exit status (-SIGNAL when killed), waiting up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    raise TimeoutError(f"fbgfx idle did not end within {timeout} s of SIGTERM")


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@LINK.step("idle_fbdev")
def _idle_fbdev() -> dict[str, Any]:
    subprocess.run("mount -t debugfs none /sys/kernel/debug 2>/dev/null", shell=True)
    tablet = _tablet()
    out: dict[str, Any] = {"tablet": tablet}
    with tempfile.TemporaryDirectory() as tmp:
        bl = _backlight(Path(tmp))
        level = lambda name: int((bl / name).read_text())  # noqa: E731
        log = Path(tmp) / "idle-stderr.txt"
        args = ["idle", "-d", "/dev/fb0", "--touch", tablet, "--dim-after", "3", "--off-after", "6"]
        pid = _fork_cli(args, {"FBGFX_SYSFS": tmp}, log)
        second = os.open(tablet, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not _wait(lambda: "fbgfx: idle: watching" in _text(log), 300):
                raise RuntimeError(f"fbgfx idle did not start: {_text(log)[-2000:]}")
            out["lit_before"] = _shown_when("idle-lit-before", True)
            out["went_dark"] = _wait(lambda: level("bl_power") == 4, 60)
            out["dim_level"] = level("brightness")
            out["dark"] = _shown_when("idle-dark", False)
            out["dark_active"] = _crtc_active()
            _drain(second)
            LINK.ask(do="tap", x=TAP[0], y=TAP[1])
            out["woke"] = _wait(lambda: level("bl_power") == 0, 30)
            out["woke_level"] = level("brightness")
            time.sleep(0.3)
            out["second_reader_while_dark"] = _drain(second)  # the waking tap: swallowed
            LINK.ask(do="tap", x=TAP[0], y=TAP[1])  # lit (for 6 s): this one reaches everybody
            time.sleep(0.5)
            out["second_reader_while_lit"] = _drain(second)
            out["lit"] = _shown_when("idle-lit", True)
            out["lit_active"] = _crtc_active()
            out["dark_again"] = _wait(lambda: level("bl_power") == 4, 60)
            os.kill(pid, signal.SIGTERM)
            out["rc"] = _exit_status(pid, 60)
            pid = 0
            out["stderr"] = _text(log)[-2000:]
            out["after_sigterm"] = {"bl_power": level("bl_power"), "brightness": level("brightness")}
            out["after_sigterm_shown"] = _shown_when("idle-after-sigterm", True)
        finally:
            os.close(second)
            if pid:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    return out


_stop(HOLDER)  # the drm: display takes the card over


@LINK.step("idle_drm")
def _idle_drm() -> dict[str, Any]:
    tablet = _tablet()
    out: dict[str, Any] = {}
    with fbgfx.open("drm:card0") as fb, fb.screen(buffering="copy") as screen:
        with screen.frame() as s:
            s.clear("navy")
            s.rectangle((440, 300, 839, 499), fill="orange")
        out["lit_before"] = _shown_when("idle-drm-lit-before", True)
        with Idle(fb, tablet, dim_after=0.5, off_after=1.0, backlight=False) as idle:
            out["went_dark"] = _wait(lambda: idle.state == DARK, 60)
            time.sleep(0.5)
            out["dark_active"] = _crtc_active()
            out["dark"] = _shown_when("idle-drm-dark", False)
            LINK.ask(do="tap", x=TAP[0], y=TAP[1])
            out["woke"] = _wait(lambda: idle.state == LIT, 30)
            screen.mark_dirty()  # drawn again: qemu cleared bochs' memory as the CRTC came on
            screen.flip()
            out["lit_active"] = _crtc_active()
            out["lit"] = _shown_when("idle-drm-lit", True)
            out["notes"] = list(idle.notes)
    return out
