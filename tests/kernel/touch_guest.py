"""Guest side of tests/kernel/test_touch_vm.py: runs as root inside the VM.

Usage: python touch_guest.py RWDIR

Asks the host for taps on qemu's virtio tablet and for screendumps by writing
``cmd-N`` (JSON) into RWDIR and waiting for ``done-N``; writes what it saw into
``RWDIR/results.json`` for the host's assertions. Each step records its own result
(or error), so one failure does not hide the others.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import _forked  # noqa: E402  (beside this file)
from _host_link import HostLink  # noqa: E402

import fbgfx  # noqa: E402
import fbgfx.touch  # noqa: E402

LINK = HostLink(Path(sys.argv[1]))

# Raw tablet positions (0..32767) the host taps; the host knows them too.
TAP_0 = (16384, 8192)  # rotate 0: panel (640, 200) on the 1280x800 bochs screen
TAP_90 = (8192, 24576)  # rotate 90: panel (320, 600)
TAP_PAINT = (8192, 24576)


def events_until_up(ts: fbgfx.touch.Touchscreen, limit: float = 60.0) -> list[list[Any]]:
    out: list[list[Any]] = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for ev in ts.read(timeout=max(0.0, deadline - time.monotonic())):
            out.append([ev.type, ev.x, ev.y, ev.slot, ev.time - time.monotonic()])
            if ev.type == "up":
                return out
    return out


def _discovery() -> dict[str, Any]:
    devices = fbgfx.touch.list_devices()
    chosen = fbgfx.touch.find_device()
    with fbgfx.touch.open() as ts:
        opened = {"name": ts.device.name, "summary": ts.device.summary(), "size": list(ts.size)}
    return {
        "devices": [[d.path, d.name, d.kind] for d in devices],
        "chosen": [chosen.path, chosen.name],
        "opened": opened,
    }


def tap_on(rotate: int, raw: tuple[int, int]) -> dict[str, Any]:
    with fbgfx.open("/dev/fb0") as fb:
        with fb.screen(rotate=rotate) as screen, fbgfx.touch.open(screen=screen) as ts:
            ts.read(timeout=0)  # nothing pending
            LINK.ask(do="tap", x=raw[0], y=raw[1])
            events = events_until_up(ts)
            return {"panel": [fb.width, fb.height], "size": [screen.width, screen.height], "events": events}


def _tap0() -> dict[str, Any]:
    return tap_on(0, TAP_0)


def _tap90() -> dict[str, Any] | None:
    return tap_on(90, TAP_90)


def _paint() -> dict[str, Any]:
    proc = _forked.script(
        str(REPO / "examples" / "paint.py"), "--device", "/dev/fb0", "--rotate", "90", "--seconds", "240"
    )
    try:
        first = proc.stdout.readline()
        if "ready" not in first:
            proc.kill()
            return {"error": f"paint.py did not start: {first!r} {proc.stderr.read()[-2000:]}"}
        LINK.ask(do="tap", x=TAP_PAINT[0], y=TAP_PAINT[1])
        shots = []
        for i in range(40):  # until paint has drawn the dot (TCG is slow)
            name = f"paint-{i}.ppm"
            LINK.ask(do="screendump", file=name)
            shots.append(name)
            if _ppm_pixel(LINK.rwdir / name, 320, 600) != (0, 0, 0):
                break
            time.sleep(0.5)
        return {"shots": shots, "first_line": first.strip()}
    finally:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        LINK.results["paint_output"] = {"rc": proc.returncode, "stdout": out[-2000:], "stderr": err[-2000:]}


def _cli_list() -> dict[str, Any]:
    """``fbgfx touch --list`` on the real input devices."""
    proc = _forked.cli("touch", "--list")
    out, err = proc.communicate(timeout=120)
    return {"rc": proc.returncode, "stdout": out, "stderr": err}


def _cli_events() -> dict[str, Any]:
    """``fbgfx touch --rotate 90 --count 2`` printing a tap on the bochs screen."""
    proc = _forked.cli("touch", "-d", "/dev/fb0", "--rotate", "90", "--count", "2", "--seconds", "120")
    header = proc.stderr.readline()  # printed once the device is open
    if "Ctrl-C" not in header:
        proc.kill()
        return {"error": f"fbgfx touch did not start: {header!r} {proc.stderr.read()[-2000:]}"}
    LINK.ask(do="tap", x=TAP_90[0], y=TAP_90[1])
    out, err = proc.communicate(timeout=150)
    return {"rc": proc.returncode, "header": header, "stdout": out, "stderr": err}


def _overflow() -> dict[str, Any]:
    """A press and 400 moves while nobody reads overflow the kernel's buffer
    (SYN_DROPPED); then the release, then a tap."""
    with fbgfx.touch.open() as ts:
        ts.read(timeout=0)
        LINK.ask(do="burst", moves=400)
        events = []
        while True:
            got = ts.read(timeout=3)
            if not got:
                break
            events += [[e.type, e.x, e.y] for e in got]
        LINK.ask(do="release")
        released = [[e.type, e.x, e.y] for e in ts.read(timeout=30)]
        LINK.ask(do="tap", x=TAP_0[0], y=TAP_0[1])
        after = [[t, x, y] for t, x, y, *_ in events_until_up(ts)]
    return {"events": events, "released": released, "after": after}


def _uinput() -> dict[str, Any]:
    """A uinput touchscreen made for /dev/fb0's panel (what the pytest plugin taps real
    displays through), found by touch.open() with no path and read on a Screen turned 90."""
    loaded = subprocess.run(["modprobe", "uinput"], capture_output=True, text=True)
    if not os.path.exists("/dev/uinput"):
        return {"error": f"no /dev/uinput after modprobe uinput: {loaded.stderr.strip()}"}
    from fbgfx.touch.uinput import UinputTouch

    with fbgfx.open("/dev/fb0") as fb, UinputTouch(fb) as finger:
        chosen = fbgfx.touch.find_device()
        with fb.screen(rotate=90) as screen, fbgfx.touch.open(finger.device.path, screen=screen) as ts:
            readers = finger.readers
            finger.tap(100, 600)  # panel pixels
            events = events_until_up(ts)
            summary = ts.device.summary()
        node = finger.device.path
    return {
        "node": node,
        "chosen": chosen.path,
        "readers": readers,
        "summary": summary,
        "events": [e[:4] for e in events],
        "gone": not os.path.exists(node),
    }


def _ppm_pixel(path: Path, x: int, y: int) -> tuple[int, int, int]:
    data = path.read_bytes()
    parts = data.split(maxsplit=4)  # P6 W H MAX pixels
    w = int(parts[1])
    header = len(data) - len(parts[4])
    at = header + (y * w + x) * 3
    return tuple(data[at : at + 3])  # type: ignore[return-value]


def _serve_uinput() -> dict[str, Any]:
    """What ``fbgfx serve --input`` does on /dev/fb0, in this process: a uinput touchscreen
    that fbgfx.touch.open() picks (INPUT_PROP_DIRECT), driven by a viewer's presses."""
    try:
        import asyncio
        import json

        from websockets.asyncio.client import connect
    except ImportError:
        return {"skipped": "websockets (fbgfx[serve]) is not installed"}
    from fbgfx.serve import Server
    from fbgfx.touch.uinput import UinputTouch

    progress = Path(sys.argv[1]) / "serve-progress.txt"

    def mark(what: str) -> None:  # a step that hangs shows where
        with progress.open("a") as f:
            f.write(f"{time.monotonic():.1f} {what}\n")

    before = {d.path for d in fbgfx.touch.list_devices()}
    with fbgfx.open("/dev/fb0", readonly=True) as fb, UinputTouch(fb) as finger:
        mark(f"made {finger.device.path}")
        made = [[d.path, d.name] for d in fbgfx.touch.list_devices() if d.path not in before]
        with fbgfx.touch.open(screen=fb) as ts, Server(fb, port=0, touch=finger) as server:
            mark(f"serving on {server.port}, reading {ts.path}")

            async def press() -> None:
                origin = f"http://127.0.0.1:{server.port}"
                async with connect(f"ws://127.0.0.1:{server.port}/ws", origin=origin) as ws:
                    await ws.recv()  # hello
                    for action in ("down", "up"):
                        await ws.send(json.dumps({"type": "pointer", "action": action, "x": 100, "y": 50}))

            asyncio.run(asyncio.wait_for(press(), 60))
            mark("pressed")
            events = [[t, x, y] for t, x, y, *_ in events_until_up(ts, 60)]
            name = ts.device.name
    left = sorted({d.path for d in fbgfx.touch.list_devices()} - before)
    mark("done")
    return {"made": made, "name": name, "events": events, "left": left}


def _unplug() -> dict[str, Any]:
    """Unbind the tablet's driver while a read waits: the read must end with ENODEV."""
    with fbgfx.touch.open() as ts:
        sysdev = Path("/sys/class/input") / os.path.basename(ts.path) / "device" / "device"
        virtio = sysdev.resolve().name  # virtioN, the device of the input device
        unbind = sysdev / "driver" / "unbind"

        def pull() -> None:
            time.sleep(1.0)
            unbind.write_text(virtio)

        threading.Thread(target=pull, daemon=True).start()
        start = time.monotonic()
        try:
            ts.read(timeout=120)
        except fbgfx.TouchError as e:
            return {"errno": e.errno, "message": str(e), "seconds": time.monotonic() - start, "virtio": virtio}
        return {"errno": None, "message": "read returned", "seconds": time.monotonic() - start}


if __name__ == "__main__":
    for name, fn in [
        ("discovery", _discovery),
        ("tap_rotate_0", _tap0),
        ("tap_rotate_90", _tap90),
        ("paint_rotate_90", _paint),
        ("cli_list", _cli_list),
        ("cli_events", _cli_events),
        ("overflow", _overflow),
        ("uinput", _uinput),  # makes and removes its own touchscreen
        ("unplug", _unplug),  # the tablet is gone afterwards
        ("serve_uinput", _serve_uinput),
    ]:
        LINK.record(name, fn)
