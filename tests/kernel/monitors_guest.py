"""Guest side of tests/kernel/test_monitors_vm.py: several monitors and hotplug, as root.

Usage: python monitors_guest.py RWDIR

The boot has virtio-gpu with two outputs (two connectors, qemu device ``gpu0``, heads
0 and 1) and bochs-display (qemu device ``bochs0``), with
``drm_kms_helper.fbdev_emulation=0``. Which is card0 depends on which driver the kernel
bound first, and connector numbers count per type over all cards, so the guest finds
the virtio card and its connector names (Virtual-1 and Virtual-2 when virtio is first)
by asking. Monitors are unplugged and plugged by forcing a connector's status in sysfs
(``off``/``on``) and sending the card's ``change`` uevent, as a real hotplug does. Each
step records what it found in ``RWDIR/results.json``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import _forked  # noqa: E402  (beside this file)
import numpy as np  # noqa: E402
from _host_link import HostLink  # noqa: E402
from drm_guest import compare, frame_picture, random_picture  # noqa: E402

import fbgfx  # noqa: E402
import fbgfx.drm  # noqa: E402
from fbgfx.kiosk.mirror import Mirror  # noqa: E402

# Set by run(): the virtio card's node name (card0) and its two connectors' names.
CARD, V1, V2 = "card0", "Virtual-1", "Virtual-2"

LINK = HostLink(Path("."))  # main() points it at RWDIR
VIRTIO, BOCHS = "gpu0", "bochs0"  # qemu device ids (test_monitors_vm.py)


def settled(device: str, head: int, name: str, want: np.ndarray | None = None, tries: int = 10) -> np.ndarray:
    """A screendump once it equals ``want`` or two in a row agree (virtio copies late)."""
    last = LINK.screendump(name, device, head)
    for _ in range(tries):
        if want is not None and last.shape == want.shape and np.array_equal(last, want):
            return last
        time.sleep(0.3)
        shot = LINK.screendump(name, device, head)
        if want is None and np.array_equal(shot, last):
            return shot
        last = shot
    return last


def force(connector: str, state: str, card: str | None = None) -> None:
    """Force a connector on/off (or back to ``detect``) and send its card's uevent."""
    card = card or CARD
    Path(f"/sys/class/drm/{card}-{connector}/status").write_text(state)
    Path(f"/sys/class/drm/{card}/uevent").write_text("change")


def spec(connector: str, extra: str = "") -> str:
    """The virtio card's connector. The second output has no EDID when forced on: its
    preferred mode is 5120x2160, slow to draw under emulation; 1024x768 is one of its
    modes."""
    mode = ":mode=1024x768" if connector == V2 else ""
    return f"drm:{CARD}:connector={connector}{mode}{extra}"


def until(condition: Any, limit: float = 10.0) -> float | None:
    """Seconds until ``condition()`` held (polled), None when it did not within ``limit``."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if condition():
            return round(time.monotonic() - start, 2)
        time.sleep(0.05)
    return None


def show(fb: fbgfx.Framebuffer, screen: fbgfx.Screen, picture: np.ndarray) -> None:
    screen.present(picture)
    fb.wait_flip()


class Drawer(threading.Thread):
    """Draws frames on a display until told to stop; keeps any exception."""

    def __init__(self, fb: fbgfx.Framebuffer) -> None:
        super().__init__(daemon=True)
        self.fb, self.frames, self.errors = fb, 0, []  # type: ignore[var-annotated]
        self.stop = threading.Event()

    def run(self) -> None:
        screen = self.fb.screen()
        pictures = [frame_picture(i, self.fb.width, self.fb.height) for i in range(2)]
        try:
            while not self.stop.is_set():
                screen.present(pictures[self.frames % 2])
                self.frames += 1
        except Exception as e:
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            screen.close()

    def more_frames(self, n: int = 3, limit: float = 30.0) -> bool:
        start = self.frames
        return until(lambda: self.frames >= start + n, limit) is not None


def program(card: str, seed: int) -> None:
    """Another program on ``card`` (run forked). On a line from stdin it shows
    ``random_picture(seed)`` at 1024x768 and says "1" on stdout; on the next line it
    exits (fbgfx puts the CRTC back as it found it: off)."""
    sys.stdin.readline()
    with fbgfx.open(f"drm:{card}:mode=1024x768") as fb, fb.screen() as screen:
        show(fb, screen, random_picture(seed, fb.width, fb.height))
        print("1", flush=True)
        sys.stdin.readline()


def run() -> None:
    global CARD, V1, V2
    infos = {fbgfx.drm.probe(card).driver: fbgfx.drm.probe(card) for card in fbgfx.drm.find_cards()}
    LINK.results["cards"] = {driver: info.path for driver, info in infos.items()}
    virtio = infos["virtio_gpu"]
    CARD = virtio.path.rsplit("/", 1)[-1]
    V1, V2 = (c.name for c in virtio.connectors)
    LINK.results["virtio"] = {"card": CARD, "connectors": [V1, V2]}

    @LINK.step("displays")
    def _displays() -> dict[str, Any]:
        force(V2, "on")  # qemu without a window enables only the first output
        found = [d.asdict() for d in fbgfx.displays()]
        info = _forked.cli("info", "--all")
        out, err = info.communicate(timeout=120)
        return {"displays": found, "info_all": out, "info_rc": info.returncode, "info_err": err[-500:]}

    @LINK.step("two_heads")
    def _two() -> dict[str, Any]:
        force(V2, "on")
        one = fbgfx.open(spec(V1))
        two = fbgfx.open(spec(V2))
        out: dict[str, Any] = {"crtcs": [one.drm.crtc_id, two.drm.crtc_id]}  # type: ignore[union-attr]
        try:
            try:
                fbgfx.open(spec(V1)).close()
                out["again"] = "opened"
            except fbgfx.FramebufferError as e:
                out["again"], out["again_errno"] = str(e), e.errno
            s1, s2 = one.screen(), two.screen()
            a, b = random_picture(1, one.width, one.height), random_picture(2, two.width, two.height)
            show(one, s1, a)
            show(two, s2, b)
            out["head0"] = compare(settled(VIRTIO, 0, "two-0", a), a)
            out["head1"] = compare(settled(VIRTIO, 1, "two-1", b), b)
            frames = []
            for i in range(3):  # flips on head 0 leave head 1 showing b
                want = frame_picture(i, one.width, one.height)
                show(one, s1, want)
                frames.append(compare(settled(VIRTIO, 0, f"flip-{i}", want), want))
            out["frames"] = frames
            out["head1_after"] = compare(settled(VIRTIO, 1, "two-1-after", b), b)
            out["flips"] = [one.drm.flips, two.drm.flips]  # type: ignore[union-attr]
            s1.close()
            s2.close()
        finally:
            one.close()
            two.close()
        return out

    @LINK.step("mirror")
    def _mirror() -> dict[str, Any]:
        force(V2, "on")
        out: dict[str, Any] = {}
        try:
            fbgfx.open(f"drm:{CARD}:connector={V1},{V2}:mode=1000x700").close()
            out["refused"] = ""
        except fbgfx.ModeError as e:
            out["refused"] = str(e)
        with fbgfx.open(f"drm:{CARD}:connector={V1},{V2}:mode=1024x768") as fb, fb.screen() as screen:
            want = random_picture(3, fb.width, fb.height)
            show(fb, screen, want)
            out["size"] = list(fb.size)
            out["connectors"] = list(fb.drm.connectors)  # type: ignore[union-attr]
            out["head0"] = compare(settled(VIRTIO, 0, "mirror-0", want), want)
            out["head1"] = compare(settled(VIRTIO, 1, "mirror-1", want), want)
        return out

    @LINK.step("replug")
    def _replug() -> dict[str, Any]:
        force(V2, "on")
        out: dict[str, Any] = {}
        with fbgfx.open(spec(V2)) as fb:
            drawer = Drawer(fb)
            drawer.start()
            out["drawing"] = drawer.more_frames()
            force(V2, "off")
            out["seconds_to_disconnected"] = until(lambda: not fb.drm.connected)  # type: ignore[union-attr]
            out["drawing_unplugged"] = drawer.more_frames()
            force(V2, "on")
            out["seconds_to_connected"] = until(lambda: fb.drm.connected)  # type: ignore[union-attr]
            out["drawing_replugged"] = drawer.more_frames()
            drawer.stop.set()
            drawer.join(60)
            out["errors"], out["frames"] = drawer.errors, drawer.frames
            out["events"] = [[e.kind, e.connector, e.connected] for e in fb.display_events()]
            with fb.screen() as screen:
                want = random_picture(4, fb.width, fb.height)
                show(fb, screen, want)
                out["back"] = compare(settled(VIRTIO, 1, "replug", want), want)
        return out

    @LINK.step("plug_after_start")
    def _late() -> dict[str, Any]:
        force(V2, "off")
        out: dict[str, Any] = {}
        with fbgfx.open(spec(V1)) as first:
            try:
                fbgfx.open(spec(V2)).close()
                out["before"] = "opened"
            except fbgfx.FramebufferError as e:
                out["before"] = str(e)
            force(V2, "on")
            with fbgfx.open(spec(V2)) as fb, fb.screen() as screen:
                want = random_picture(5, fb.width, fb.height)
                show(fb, screen, want)
                out["shown"] = compare(settled(VIRTIO, 1, "late", want), want)
            out["first_open"] = not first.closed
        return out

    @LINK.step("kiosk_mirror_source_exit")
    def _mirror_source_exit() -> dict[str, Any]:
        """fbgfx mirror (issue 32) of bochs-display onto the virtio card's first head while
        programs on bochs come and go: bochs shows nothing before the first (skipped looks),
        the picture of one that exited (its CRTC off) stays, the next one's is shown."""
        bochs = infos["bochs-drm"].path.rsplit("/", 1)[-1]
        force(V1, "on")
        # both forked now, while this process has no thread (a watcher starts with a drm: display)
        programs = [_forked.fork(program, bochs, seed, stdin=True) for seed in (7, 8)]
        out: dict[str, Any] = {"source": bochs}
        try:
            with fbgfx.open(spec(V1, ":mode=1024x768")) as dest, Mirror(f"drm:{bochs}", dest) as m:
                out["before"] = m.step()
                for child, name, seed in zip(programs, ("first", "second"), (7, 8)):
                    assert child.stdin is not None
                    child.stdin.write("show\n")
                    if child.stdout.readline() != "1\n":
                        raise RuntimeError(f"the {name} program did not show its picture")
                    out[f"{name}_step"] = m.step()
                    want = random_picture(seed, 1024, 768)
                    out[name] = compare(settled(VIRTIO, 0, f"kiosk-{name}", want), want)
                    child.stdin.write("exit\n")
                    out[f"{name}_rc"] = child.wait(120)
                    out[f"{name}_exit_steps"] = [m.step() for _ in range(3)]
                    out[f"{name}_kept"] = compare(settled(VIRTIO, 0, f"kiosk-{name}-kept", want), want)
                out["stats"] = str(m.stats)
        finally:
            for child in programs:
                child.kill()  # when it did not end
                child.wait()
        return out

    @LINK.step("two_card_default")
    def _default() -> dict[str, Any]:
        # Every monitor of card0 unplugged: fbgfx.open() must find card1's.
        dark = infos["bochs-drm"] if infos["bochs-drm"].path.endswith("card0") else virtio
        for c in dark.connectors:
            force(c.name, "off", "card0")
        try:
            with fbgfx.open() as fb, fb.screen() as screen:
                want = random_picture(6, fb.width, fb.height)
                show(fb, screen, want)
                device, head = (BOCHS, 0) if fb.drm.driver == "bochs-drm" else (VIRTIO, 0)  # type: ignore[union-attr]
                return {
                    "card": fb.drm.card,  # type: ignore[union-attr]
                    "driver": fb.drm.driver,  # type: ignore[union-attr]
                    "path": fb.path,
                    "shown": compare(settled(device, head, "default", want), want),
                }
        finally:
            for c in dark.connectors:
                force(c.name, "detect", "card0")


def main() -> None:
    global LINK
    LINK = HostLink(Path(sys.argv[1]))
    try:
        run()
    except Exception as e:
        LINK.record_fatal(e)
    LINK.save()
    print(json.dumps(sorted(LINK.results)))


if __name__ == "__main__":
    main()
