"""Guest side of tests/kernel/test_drm_vm.py: runs as root inside the VM.

Usage: python drm_guest.py RWDIR drm|fbdev

``drm``: a boot with ``drm_kms_helper.fbdev_emulation=0`` and three display devices
(cirrus-vga, bochs-display, virtio-gpu-pci), one DRM card each and no /dev/fb*.
``fbdev``: bochs with fbdev emulation (``drm_fbdev_overalloc=200``) and text on the
console.

Asks the host for screendumps of one qemu display device by writing ``cmd-N`` (JSON)
into RWDIR and waiting for ``done-N``; compares them with what fbgfx drew here, and
writes each step's findings into ``RWDIR/results.json`` for the host's assertions.
Each step records its own result (or error), so one failure does not hide the others.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from _forked import Child, fork  # noqa: E402  (beside this file)
from _host_link import HostLink  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

import fbgfx  # noqa: E402
import fbgfx.drm  # noqa: E402

LINK = HostLink(Path("."))  # main() points it at RWDIR
# qemu device ids (test_drm_vm.py's -device ...,id=) by the DRM driver bound to them.
QEMU_IDS = {"cirrus": "cirrusvga", "bochs-drm": "bochsdisp", "virtio_gpu": "virtiogpu"}
KDGETMODE = 0x4B3B


# -- talking to the host ------------------------------------------------------------------------


def settled(device: str | None, name: str, tries: int = 8) -> np.ndarray:
    """A screendump once two in a row agree (fbdev emulation and virtio copy late)."""
    time.sleep(0.3)
    last = LINK.screendump(name, device)
    for _ in range(tries):
        time.sleep(0.3)
        shot = LINK.screendump(name, device)
        if np.array_equal(shot, last):
            return shot
        last = shot
    return last


def compare(shot: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    """How a screendump differs from the expected picture (``diff`` 0: identical)."""
    if shot.shape != want.shape:
        return {"diff": -1, "shown_shape": list(shot.shape), "want_shape": list(want.shape)}
    if np.array_equal(shot, want):  # the common case, 30x cheaper than counting pixels
        return {"diff": 0}
    bad = (shot != want).any(-1)
    out: dict[str, Any] = {"diff": int(bad.sum())}
    if bad.any():
        ys, xs = np.nonzero(bad)
        out["first"] = [int(xs[0]), int(ys[0]), shot[ys[0], xs[0]].tolist(), want[ys[0], xs[0]].tolist()]
    return out


# -- what is drawn --------------------------------------------------------------------------------


def scene(w: int, h: int) -> tuple[Callable[[Any], None], np.ndarray]:
    """Shapes to draw with fbgfx and the same drawn by Pillow."""

    def draw(d: Any) -> None:
        d.rectangle((10, 10, w // 2, h // 3), fill="red", outline="white", width=3)
        d.rectangle((w // 2 + 1, h // 2, w - 1, h - 1), fill=(0, 255, 0))
        d.line((0, h - 1, w - 1, h // 2), fill=(0, 0, 255), width=1)
        d.line((20, h // 2, 20, h - 20), fill="white", width=5)

    expected = Image.new("RGB", (w, h), "black")
    draw(ImageDraw.Draw(expected))
    return draw, np.asarray(expected)


FRAME_COLORS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)]


def frame_picture(i: int, w: int, h: int) -> np.ndarray:
    """Frame i: a colour of its own with a white square whose place says which frame."""
    rgb = np.zeros((h, w, 3), np.uint8)
    rgb[:] = FRAME_COLORS[i % len(FRAME_COLORS)]
    rgb[20:60, 20 + 60 * i : 60 + 60 * i] = 255
    return rgb


def random_picture(seed: int, w: int, h: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def crtc_states(card: str) -> list[list[Any]]:
    return [[c.id, c.fb_id, c.x, c.y, str(c.mode) if c.mode else None] for c in fbgfx.drm.probe(card).crtcs]


def kd_mode(tty: str = "/dev/tty1") -> int:
    with open(tty, "rb", buffering=0) as f:
        buf = bytearray(4)
        fcntl.ioctl(f, KDGETMODE, buf)
    return int.from_bytes(buf, "little")


def start_holder(cards: str, seed: int) -> Child:
    """Another process that opens each of ``cards`` (comma-separated), shows
    random_picture(seed) and waits."""
    proc = fork(hold, cards, seed)
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise RuntimeError(f"the holder did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc


def hold(cards: str, seed: int) -> None:
    """The holder process: show a picture on each card until a signal ends it."""
    screens = []
    for card in cards.split(","):
        fb = fbgfx.open(f"drm:{card}")
        screen = fb.screen()
        screen.present(random_picture(seed, fb.width, fb.height))
        fb.wait_flip()
        screens.append((fb, screen))
    print("ready", flush=True)
    while True:
        time.sleep(1)


# -- the drm boot ----------------------------------------------------------------------------------


def cards() -> dict[str, str]:
    """Card path by driver name."""
    return {fbgfx.drm.probe(card).driver: card for card in fbgfx.drm.find_cards()}


def run_drm() -> None:
    by_driver = cards()
    LINK.results["cards"] = by_driver

    @LINK.step("open_default")
    def _default() -> dict[str, Any]:
        with fbgfx.open() as fb:
            info = fb.drm
            assert info is not None
            return {"fb0": os.path.exists("/dev/fb0"), "card": info.card, "path": fb.path, "size": list(fb.size)}

    for driver, card in sorted(by_driver.items()):
        run_card(driver, card, QEMU_IDS.get(driver, ""))
    run_holder(by_driver)


def run_card(driver: str, card: str, qid: str) -> None:
    spec = f"drm:{card}"

    @LINK.step(f"scene:{driver}")
    def _scene() -> dict[str, Any]:
        before = crtc_states(card)
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            draw, want = scene(fb.width, fb.height)
            with screen.frame() as s:
                s.clear("black")
                draw(s)
            fb.wait_flip()
            shot = settled(qid, f"scene-{driver}")
            result = {
                "buffering": screen.buffering,
                "format": fb.format.name,
                "size": list(fb.size),
                "pages": fb.drm.pages if fb.drm else 0,
                **compare(shot, want),
            }
        result["restored"] = crtc_states(card) == before
        result["before"] = before
        return result

    @LINK.step(f"flips:{driver}")
    def _flips() -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            for i in range(3):
                want = frame_picture(i, fb.width, fb.height)
                with screen.frame() as s:
                    s.array[...] = fb.format.pack(want)
                    screen.mark_dirty()
                fb.wait_flip()
                out.append(compare(settled(qid, f"flip-{driver}-{i}"), want))
            info = fb.drm
            assert info is not None
            return {"buffering": screen.buffering, "frames": out, "flips": info.flips, "events": info.flip_events}

    @LINK.step(f"copy:{driver}")
    def _copy() -> dict[str, Any]:
        with fbgfx.open(spec) as fb, fb.screen("copy") as screen:
            want = frame_picture(1, fb.width, fb.height)
            with screen.frame() as s:
                s.array[...] = fb.format.pack(want)
                screen.mark_dirty()
            first = compare(settled(qid, f"copy-{driver}-0"), want)
            with screen.frame() as s:  # a small change: only its rectangle is sent
                s.rectangle((100, 100, 139, 119), fill="white")
            want[100:120, 100:140] = 255
            second = compare(settled(qid, f"copy-{driver}-1"), want)
            return {
                "buffering": screen.buffering,
                "first": first,
                "second": second,
                "flips": fb.drm.flips if fb.drm else -1,
            }

    @LINK.step(f"rgb565:{driver}")
    def _rgb565() -> dict[str, Any]:
        with fbgfx.open(spec) as fb:
            offered = fb.drm.plane_formats if fb.drm else ()
        if "RG16" not in offered:
            return {"offered": list(offered), "skipped": "the plane does not scan out RG16"}
        with fbgfx.open(f"{spec}:format=RGB565") as fb, fb.screen() as screen:
            want = random_picture(5, fb.width, fb.height)
            screen.present(want)
            fb.wait_flip()
            shot = settled(qid, f"rgb565-{driver}")
            bits = np.array([3, 2, 3], np.uint8)
            result = compare(shot >> bits, want >> bits)
            return {"format": fb.format.name, "buffering": screen.buffering, **result}

    @LINK.step(f"fork:{driver}")
    def _fork() -> dict[str, Any]:
        # A forked child closing what it inherited must leave the parent's display, its
        # buffers and DRM master alone; after close, an old view reaches nothing.
        before = crtc_states(card)
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            screen.present(frame_picture(4, fb.width, fb.height))
            fb.wait_flip()
            pid = os.fork()
            if pid == 0:
                try:
                    screen.close()
                    fb.close()
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
            want = frame_picture(5, fb.width, fb.height)
            screen.present(want)  # needs DRM master: EACCES if the child dropped it
            fb.wait_flip()
            after_child = compare(settled(qid, f"fork-{driver}"), want)
            old = fb.pixels
        closed = settled(qid, f"closed-{driver}")
        old[...] = 0xFFFFFF  # written after close: must not reach the display
        written = compare(settled(qid, f"closed-written-{driver}"), closed)
        return {"after_child": after_child, "old_view": written, "restored": crtc_states(card) == before}

    @LINK.step(f"mode:{driver}")
    def _mode() -> dict[str, Any]:
        with fbgfx.open(spec) as fb:
            first = (fb.width, fb.height)
            other = next(m for m in fb.modes() if (m.width, m.height) != first and m.width <= 1280 and m.height <= 1024)
            fb.set_mode(other.width, other.height)
            want = frame_picture(3, fb.width, fb.height)
            with fb.screen() as screen:
                screen.present(want)
                fb.wait_flip()
                shot = settled(qid, f"mode-{driver}")
            try:
                fb.set_mode(first[0] + 7, first[1])
                refused = ""
            except fbgfx.ModeError as e:
                refused = str(e)
            return {"from": list(first), "to": [other.width, other.height], "refused": refused, **compare(shot, want)}


def run_holder(by_driver: dict[str, str]) -> None:
    """One other process holds every card (a process start is slow under emulation):
    per card, a second opener's error, read_scanout against the screendump and the
    picture; then SIGTERM, after which every CRTC is as it was."""
    before = {card: crtc_states(card) for card in by_driver.values()}
    results: dict[str, dict[str, Any]] = {driver: {} for driver in by_driver}
    try:
        proc = start_holder(",".join(by_driver.values()), 7)
    except Exception as e:
        for driver in by_driver:
            LINK.results[f"holder:{driver}"] = {"error": f"{type(e).__name__}: {e}"}
        return
    try:
        for driver, card in sorted(by_driver.items()):

            @LINK.step(f"holder:{driver}")
            def _held(driver: str = driver, card: str = card) -> dict[str, Any]:
                result = results[driver]
                try:
                    fbgfx.open(f"drm:{card}").close()
                    result["second"] = "opened"
                except fbgfx.FramebufferError as e:
                    result["second"] = str(e)
                    result["second_errno"] = e.errno
                shot = settled(QEMU_IDS.get(driver, ""), f"held-{driver}")
                name, native = fbgfx.drm.read_scanout(card)
                grabbed = fbgfx.PixelFormat.from_name(name).unpack(native)
                want = random_picture(7, grabbed.shape[1], grabbed.shape[0])
                result["grab_vs_screendump"] = compare(shot, grabbed)
                result["grab_vs_drawn"] = compare(grabbed, want)
                return result

        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
        stderr = proc.stderr.read()[-2000:] if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
    for driver, card in by_driver.items():
        entry = LINK.results.get(f"holder:{driver}")
        if isinstance(entry, dict) and "error" not in entry:
            after = crtc_states(card)
            entry.update(
                returncode=rc, holder_stderr=stderr, restored=after == before[card], before=before[card], after=after
            )
    LINK.save()


# -- the fbdev boot ----------------------------------------------------------------------------------


def run_fbdev() -> None:
    # A still console: no blinking cursor, known text.
    try:
        Path("/sys/class/graphics/fbcon/cursor_blink").write_text("0")
    except OSError:
        pass
    with open("/dev/tty1", "w") as tty:
        tty.write("\033[?25l\033[2J\033[H" + "fbgfx: the console must come back exactly.\n" * 5)
    before = settled(None, "console-before")
    LINK.results["console_nonblank"] = bool(before.any())

    @LINK.step("close_restores_console")
    def _close() -> dict[str, Any]:
        with fbgfx.open("drm:/dev/dri/card0") as fb, fb.screen() as screen:
            want = random_picture(3, fb.width, fb.height)
            screen.present(want)
            fb.wait_flip()
            shown = compare(settled(None, "drm-on-console"), want)
            kd_while = kd_mode()
        after = settled(None, "console-after-close")
        return {"shown": shown, "kd_while": kd_while, "kd_after": kd_mode(), **compare(after, before)}

    @LINK.step("sigterm_restores_console")
    def _sigterm() -> dict[str, Any]:
        proc = start_holder("/dev/dri/card0", 11)
        try:
            shot = settled(None, "held-console")
            held = compare(shot, random_picture(11, shot.shape[1], shot.shape[0]))
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        after = settled(None, "console-after-sigterm")
        return {"held": held, "returncode": rc, "kd_after": kd_mode(), **compare(after, before)}

    @LINK.step("sigkill_then_next_opener")
    def _sigkill() -> dict[str, Any]:
        # SIGKILL leaves tty1 in graphics mode; the next fbgfx program must find the
        # holder dead in its record and put back the text mode it had found.
        proc = start_holder("/dev/dri/card0", 13)
        try:
            kd_held = kd_mode()
            proc.kill()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        kd_after_kill = kd_mode()
        with fbgfx.open("drm:/dev/dri/card0") as fb, fb.screen() as screen:
            screen.present(random_picture(14, fb.width, fb.height))
            fb.wait_flip()
            kd_while = kd_mode()
        after = settled(None, "console-after-sigkill-and-next")
        return {
            "kd_held": kd_held,
            "kd_after_kill": kd_after_kill,
            "kd_while": kd_while,
            "kd_after": kd_mode(),
            **compare(after, before),
        }

    @LINK.step("grab_console")
    def _grab() -> dict[str, Any]:
        name, native = fbgfx.drm.read_scanout("/dev/dri/card0")
        grabbed = fbgfx.PixelFormat.from_name(name).unpack(native)
        return {"format": name, **compare(grabbed, before)}

    @LINK.step("fbdev_flips")
    def _fbdev() -> dict[str, Any]:
        out = []
        with fbgfx.open("/dev/fb0") as fb:
            info = {"id": fb.fix.id, "virtual": [fb.var.xres_virtual, fb.var.yres_virtual], "ypanstep": fb.fix.ypanstep}
            with fb.screen() as screen:
                for i in range(3):
                    want = frame_picture(i, fb.width, fb.height)
                    screen.present(want)
                    out.append(compare(settled(None, f"fbdev-{i}"), want))
                buffering = screen.buffering
            # The truth behind the choice: a raw pan to page 2 is accepted, and not shown.
            fb.view(0, fb.height, fb.width, fb.height)[...] = fb.format.pack(frame_picture(1, fb.width, fb.height))
            fb.pixels[...] = fb.format.pack(frame_picture(0, fb.width, fb.height))
            fb.pan(0, fb.height)
            pan = compare(settled(None, "fbdev-pan"), frame_picture(1, fb.width, fb.height))
            fb.pan(0, 0)
        return {"buffering": buffering, "frames": out, "raw_pan_shown": pan["diff"] == 0, **info}


def main() -> None:
    global LINK
    LINK = HostLink(Path(sys.argv[1]))
    try:
        if sys.argv[2] == "drm":
            run_drm()
        else:
            run_fbdev()
    except Exception as e:
        LINK.record_fatal(e)
    LINK.save()


if __name__ == "__main__":
    main()
