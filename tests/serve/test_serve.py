"""`fbgfx serve` without a browser: what the stream sends, and the rules of the network service."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest
from support.serve_helpers import ROOT, CliServer, apply_update, wait_until

import fbgfx
from fbgfx.cli import main
from fbgfx.serve import Server
from fbgfx.serve._stream import FramebufferSource, Stream

websockets = pytest.importorskip("websockets", minversion="13", reason="fbgfx[serve] needs websockets >= 13")
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

from fbgfx.serve._web import CATCH_UP, _Hub  # noqa: E402  (it imports websockets)

TOKEN = "s3cret-token_123"


def _rng_fill(fb, seed=0):
    rng = np.random.default_rng(seed)
    px = fb.pixels
    px[...] = rng.integers(0, np.iinfo(px.dtype).max, px.shape, dtype=px.dtype, endpoint=True)


def _status(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _raw_get(port, target, host="127.0.0.1"):
    """An HTTP request line sent as is (urllib would normalise a traversal away)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]), data


# -- the stream ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["96x64:XRGB8888", "96x64:RGB565", "96x64:C8", "96x64:RGB888", "96x64:R1"])
def test_updates_rebuild_the_snapshot_exactly(open_virtual, spec):
    """A new viewer's update, then a change's update, drawn in turn equal fb.snapshot() in every format."""
    fb = open_virtual(spec)
    _rng_fill(fb)
    stream = Stream(FramebufferSource(fb))
    assert stream.grab()
    frame, message = stream.update_for(0, 0)
    canvas = np.zeros((frame.height, frame.width, 3), np.uint8)
    apply_update(canvas, message)
    assert np.array_equal(canvas, np.asarray(fb.snapshot()))
    with fb.screen().frame() as s:
        s.ellipse((10, 5, 40, 30), fill="orange")
    assert stream.grab()
    frame2, message2 = stream.update_for(frame.version, frame.epoch)
    assert apply_update(canvas, message2) == frame2.version == frame.version + 1
    assert np.array_equal(canvas, np.asarray(fb.snapshot()))


def test_a_small_change_sends_only_its_pixels(open_virtual):
    """A 32x32 change sends one 32x32 rectangle, well under 5% of the whole picture's bytes."""
    fb = open_virtual("800x480:XRGB8888")
    _rng_fill(fb)
    stream = Stream(FramebufferSource(fb))
    stream.grab()
    frame, full = stream.update_for(0, 0)
    fb.pixels[101:133, 203:235] ^= 0x00FFFFFF
    stream.grab()
    _, small = stream.update_for(frame.version, frame.epoch)
    assert small[2:4] == b"\x01\x00"  # one rectangle
    x, y, w, h = np.frombuffer(small[8:16], "<u2")
    assert (x, y, w, h) == (203, 101, 32, 32)
    assert len(small) <= 0.05 * len(full)


def test_nothing_changed_sends_nothing(open_virtual):
    """A grab of an unchanged picture makes no new version, and an up-to-date viewer gets nothing."""
    fb = open_virtual("64x48:RGB565")
    stream = Stream(FramebufferSource(fb))
    assert stream.grab()
    frame = stream.frame
    assert not stream.grab()
    assert stream.update_for(frame.version, frame.epoch) is None


def test_a_viewer_behind_gets_every_change_since_in_one_update(open_virtual):
    """A viewer several versions behind gets one update that brings it to the newest picture."""
    fb = open_virtual("128x96:RGB565")
    stream = Stream(FramebufferSource(fb))
    stream.grab()
    frame, message = stream.update_for(0, 0)
    canvas = np.zeros((96, 128, 3), np.uint8)
    apply_update(canvas, message)
    for i in range(5):
        fb.pixels[i * 15 : i * 15 + 10, i * 20 : i * 20 + 10] = 0xF800 >> i
        assert stream.grab()
    newest, message = stream.update_for(frame.version, frame.epoch)
    assert newest.version == frame.version + 5
    apply_update(canvas, message)
    assert np.array_equal(canvas, np.asarray(fb.snapshot()))


def test_a_palette_change_starts_over(open_virtual):
    """Changing a C8 display's palette changes no pixel byte, yet the viewer is sent the mode and everything."""
    fb = open_virtual("64x48:C8")
    fb.pixels[:] = 7
    stream = Stream(FramebufferSource(fb))
    stream.grab()
    frame, _ = stream.update_for(0, 0)
    fb.set_palette([(10, 200, 30)], start=7)
    assert stream.grab()
    newer, message = stream.update_for(frame.version, frame.epoch)
    assert newer.epoch != frame.epoch
    canvas = np.zeros((48, 64, 3), np.uint8)
    apply_update(canvas, message)
    assert (canvas == (10, 200, 30)).all()


# -- the rules of the service ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--bind", "0.0.0.0"], "needs --token"),
        (["--bind", "192.0.2.1"], "needs --token"),
        (["--token", "short"], "8 to 256"),
        (["--token", "has space in it"], "8 to 256"),
        (["--port", "70000"], "--port"),
        (["--fps", "0"], "--fps"),
    ],
)
def test_options_refused_with_one_error_line(argv, words, capsys, monkeypatch):
    """Another --bind without --token, a weak token, a bad port or fps: one `fbgfx: error:` line, status 2."""

    def served(*args, **kwargs):
        raise AssertionError(f"served despite {argv}")

    monkeypatch.setattr(Server, "serve_forever", served)
    code = main(["serve", "-d", "virtual:32x32", *argv])
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: ") and words in lines[0], (argv, err)


def test_an_option_refused_by_the_command_exits_2():
    """`python -m fbgfx serve` with a refused option: one `fbgfx: error:` line and exit status 2 from the process."""
    res = subprocess.run(
        [sys.executable, "-m", "fbgfx", "serve", "-d", "virtual:32x32", "--bind", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: ") and "needs --token" in lines[0], res.stderr


def test_with_a_token_every_path_needs_it(tmp_path):
    """With --token, every path answers 401 without it and 403 with a wrong one; the page needs it too."""
    spec = f"virtual:32x32:RGB565:file={tmp_path / 'fb'}"
    fbgfx.open(spec).close()
    with CliServer("-d", spec, "--port", "0", "--token", TOKEN) as server:
        assert server.url.endswith(f"/?token={TOKEN}")
        base = f"http://127.0.0.1:{server.port}"
        for path in ["/", "/index.html", "/ws", "/nothing", "/../etc/passwd"]:
            assert _status(base + path)[0] == 401, path
            assert _status(base + path + "?token=wrong-token-x")[0] == 403, path
        status, body = _status(server.url)
        assert status == 200 and b'<canvas id="display"' in body
        assert _status(base + "/nothing?token=" + TOKEN)[0] == 404


def test_without_a_token_only_localhost_names_are_answered(tmp_path):
    """With no token, a request naming another host (DNS rebinding) is refused with 403."""
    fb = fbgfx.open("virtual:32x32")
    with Server(fb, port=0) as server:
        assert _status(server.url)[0] == 200
        assert _status(server.url, {"Host": f"localhost:{server.port}"})[0] == 200
        assert _status(server.url, {"Host": f"evil.example:{server.port}"})[0] == 403
    fb.close()


def test_no_path_reaches_the_file_system():
    """Traversal attempts in every spelling get 404 (or 400), never a file's bytes."""
    fb = fbgfx.open("virtual:32x32")
    with Server(fb, port=0) as server:
        for target in [
            "/../../../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/..%2f..%2fetc%2fpasswd",
            "//etc/passwd",
            "/page.html",
            "/fbgfx/serve/page.html",
            "/__init__.py",
            "/static/../../etc/passwd",
            "/ws/../../etc/passwd",
        ]:
            status, data = _raw_get(server.port, target)
            assert status in (400, 404), (target, data[:200])
            assert b"root:" not in data and b"import" not in data, target
    fb.close()


def test_websocket_needs_the_page_origin():
    """The WebSocket is refused (403) without an Origin or with another site's; the page's own is let in."""
    fb = fbgfx.open("virtual:32x32:RGB565")

    async def main(url, port):
        ws_url = f"ws://127.0.0.1:{port}/ws"
        for origin in (None, "http://evil.example", f"http://127.0.0.1:{port + 1}"):
            with pytest.raises(InvalidStatus) as info:
                async with connect(ws_url, origin=origin):
                    pass
            assert info.value.response.status_code == 403, origin
        async with connect(ws_url, origin=f"http://127.0.0.1:{port}") as ws:
            assert json.loads(await ws.recv())["type"] == "hello"

    with Server(fb, port=0) as server:
        asyncio.run(main(server.url, server.port))
    fb.close()


class _Recorder:
    def __init__(self):
        self.calls = []

    def press(self, x, y):
        self.calls.append(("press", x, y))

    def move(self, x, y):
        self.calls.append(("move", x, y))

    def release(self):
        self.calls.append(("release",))


@pytest.mark.parametrize("with_touch", [False, True])
def test_pointer_messages_reach_touch_only_when_enabled(with_touch):
    """A viewer's pointer messages become press/move/release only on a server given a touch target."""
    fb = fbgfx.open("virtual:64x48:RGB565")
    recorder = _Recorder()

    async def main(port):
        async with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}") as ws:
            hello = json.loads(await ws.recv())
            assert hello["input"] is with_touch
            await ws.recv()  # mode
            await ws.recv()  # the picture
            for action, x, y in [("down", 5, 6), ("move", 70, -3), ("up", 9, 9)]:
                await ws.send(json.dumps({"type": "pointer", "action": action, "x": x, "y": y}))
            await ws.send(json.dumps({"type": "ack", "version": 1}))

    with Server(fb, port=0, touch=recorder if with_touch else None) as server:
        asyncio.run(main(server.port))
    fb.close()
    # The server stopped after the viewer left: every message it read has been handled.
    expected = [("press", 5, 6), ("move", 63, 0), ("release",)] if with_touch else []
    assert recorder.calls == expected


def test_a_slow_viewer_gets_fewer_newer_pictures():
    """A viewer that does not acknowledge gets at most two updates; its next one is the newest picture."""
    fb = fbgfx.open("virtual:64x48:RGB565")

    async def main(server):
        port = server.port
        async with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}") as ws:
            canvas = np.zeros((48, 64, 3), np.uint8)
            await ws.recv()  # hello
            await ws.recv()  # mode
            apply_update(canvas, await ws.recv())  # the first update

            async def change(rows: slice, color: int) -> None:
                before = server.stream.frame.version
                fb.pixels[rows, :] = color
                await asyncio.to_thread(wait_until, lambda: server.stream.frame.version > before)

            for i in range(12):  # twelve pictures, each grabbed, none acknowledged
                await change(slice(i * 4, i * 4 + 4), 0x001F)
            # the second update comes (two may be unacknowledged, and the picture changed):
            # waited for, whenever the server sends it, not given a quiet time to arrive in
            apply_update(canvas, await asyncio.wait_for(ws.recv(), 30))
            try:
                third = await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                third = None
            assert third is None  # at most two unacknowledged
            # one picture more: the second update may have been made after all twelve
            await change(slice(0, 4), 0xF800)
            await ws.send(json.dumps({"type": "ack"}))
            await ws.send(json.dumps({"type": "ack"}))
            version = apply_update(canvas, await asyncio.wait_for(ws.recv(), 30))
            assert version == server.stream.frame.version
            assert np.array_equal(canvas, np.asarray(fb.snapshot()))

    with Server(fb, port=0, fps=120) as server:
        asyncio.run(main(server))
    fb.close()


def test_grabs_keep_the_fps_beat_and_make_up_a_stall():
    """On the beat a grab follows the last one by one period; after a stall the missed
    beats are made up half a period apart (each may find a new picture), and at most
    CATCH_UP seconds of them; a display showing nothing is looked at once a second."""
    period = 1 / 30
    nxt = _Hub._next_grab
    assert nxt(10.0, 10.0, period, None) == pytest.approx(10.0 + period)
    # a grab 0.2 s late: the next one is half a period after it, not at once
    assert nxt(10.0, 10.2, period, None) == pytest.approx(10.2 + period / 2)
    # grabs at twice the rate until the loop is back on its beat: 0.2 s behind is made
    # up in about 0.2 s, by the 6 missed beats and 6 more
    t, due, grabs = 10.2, 10.0, 0
    while due + period < t:
        t, due, grabs = nxt(due, t, period, None), due + period, grabs + 1
    assert 11 <= grabs <= 13 and t == pytest.approx(10.4, abs=period)
    assert nxt(10.0, 10.0, period, "no picture") == pytest.approx(11.0)
    assert 0 < CATCH_UP <= 1


def test_port_in_use_is_one_error_line():
    """Serving on a port another program holds fails with one error line naming the problem."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-m", "fbgfx", "serve", "-d", "virtual:32x32", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: ") and "in use" in lines[0], res.stderr


def test_a_drm_display_is_served_from_its_scanout(monkeypatch):
    """On drm: the stream reads the buffer another program shows (GETFB2), and follows its changes."""
    from support.fake_drm import FakeCard

    import fbgfx.drm.discovery
    from fbgfx.device import Framebuffer
    from fbgfx.drm import DrmDevice
    from fbgfx.serve import ScanoutSource

    card = FakeCard()
    monkeypatch.setattr(fbgfx.drm.discovery, "Card", lambda path: card)
    holder = Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0")
    try:
        rgb = np.random.default_rng(3).integers(0, 256, (800, 1280, 3), dtype=np.uint8)
        holder.pixels[...] = holder.format.pack(rgb)
        stream = Stream(ScanoutSource("/dev/dri/card0"))
        assert stream.grab()
        frame, message = stream.update_for(0, 0)
        canvas = np.zeros((800, 1280, 3), np.uint8)
        apply_update(canvas, message)
        assert np.array_equal(canvas, rgb)
        card.fd = 3  # reading the scanout closed the fake card's handle; the holder still has it
        holder.pixels[10:20, 30:40] = 0
        assert stream.grab()
        _, message = stream.update_for(frame.version, frame.epoch)
        apply_update(canvas, message)
        rgb[10:20, 30:40] = 0
        assert np.array_equal(canvas, rgb)
        assert len(card.setcrtc) == 1  # serving changed nothing on the display
    finally:
        card.fd = 3
        holder.close()


def test_viewers_follow_a_drawing_thread_exactly():
    """Two viewers acknowledging everything, while another thread draws 200 frames as fast as it can,
    end with the last picture exactly."""
    import threading

    fb = fbgfx.open("virtual:160x120:RGB565")
    screen = fb.screen()
    done = threading.Event()

    def draw():
        rng = np.random.default_rng(5)
        for _ in range(200):
            with screen.frame() as s:
                x, y = (int(v) for v in rng.integers(0, 140, 2))
                s.rectangle((x, y % 100, x + 20, y % 100 + 20), fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
        done.set()

    async def viewer(port):
        canvas = np.zeros((120, 160, 3), np.uint8)
        last = None  # the last picture, once the drawing is over
        received = quiet = 0
        async with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}") as ws:
            # until the canvas shows the last picture and nothing comes after it for 0.5 s (not
            # until a quiet time alone: a busy machine's server can send the last one later), or
            # nothing came for a minute, or too many updates came
            while received < 2000 and quiet < 120:
                if last is None and done.is_set():
                    last = np.asarray(fb.snapshot())
                shows_last = last is not None and np.array_equal(canvas, last)
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.5)
                except asyncio.TimeoutError:
                    if shows_last:
                        break
                    quiet += 1
                    continue
                received, quiet = received + 1, 0
                if isinstance(message, bytes):
                    apply_update(canvas, message)
                    await ws.send(json.dumps({"type": "ack"}))
            return canvas

    async def main(port):
        drawer = threading.Thread(target=draw)
        drawer.start()
        try:
            return await asyncio.gather(viewer(port), viewer(port))
        finally:
            await asyncio.to_thread(drawer.join)

    with Server(fb, port=0, fps=120) as server:
        canvases = asyncio.run(main(server.port))
    want = np.asarray(fb.snapshot())
    assert all(np.array_equal(c, want) for c in canvases)
    assert want.any()
    fb.close()


def test_input_on_a_virtual_display_without_a_file_is_one_error_line():
    """--input on a virtual display no other program can read is refused with one error line."""
    res = subprocess.run(
        [sys.executable, "-m", "fbgfx", "serve", "-d", "virtual:32x32", "--input", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: ") and "file=" in lines[0], res.stderr


def test_a_press_before_the_first_picture_is_not_lost():
    """Presses that arrive while the first grab is still being made reach the touchscreen."""
    import threading

    fb = fbgfx.open("virtual:64x48:RGB565")
    source = FramebufferSource(fb)
    release = threading.Event()

    class SlowSource:
        def read(self):
            release.wait(30)  # a slow display: the first picture takes a while
            return source.read()

    recorder = _Recorder()

    async def main(port):
        async with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}") as ws:
            assert json.loads(await ws.recv())["input"] is True
            for action in ("down", "up"):
                await ws.send(json.dumps({"type": "pointer", "action": action, "x": 7, "y": 8}))
            await asyncio.to_thread(wait_until, lambda: len(recorder.calls) == 2, 20, "the presses")
            release.set()
            await ws.recv()  # then the picture's mode

    try:
        with Server(SlowSource(), port=0, touch=recorder) as server:
            asyncio.run(main(server.port))
    finally:
        release.set()
    assert recorder.calls == [("press", 7, 8), ("release",)]
    fb.close()


async def _recv_json(ws, kind, timeout=30):
    """The next JSON message of ``kind`` (binary updates and other kinds skipped), waited for up to ``timeout`` s."""

    async def find():
        while True:
            raw = await ws.recv()
            if isinstance(raw, str) and json.loads(raw)["type"] == kind:
                return json.loads(raw)

    return await asyncio.wait_for(find(), timeout)


async def _whole_picture(ws, timeout=30):
    """hello, mode and the first update a new viewer gets: the picture it rebuilds."""

    async def receive():
        assert json.loads(await ws.recv())["type"] == "hello"
        mode = json.loads(await ws.recv())
        assert mode["type"] == "mode"
        canvas = np.zeros((mode["height"], mode["width"], 3), np.uint8)
        apply_update(canvas, await ws.recv())
        return canvas

    return await asyncio.wait_for(receive(), timeout)


def test_every_new_viewer_gets_the_whole_still_picture():
    """A viewer connecting while the display is still (a second browser, a reload) gets the whole picture at once."""
    fb = fbgfx.open("virtual:64x48:RGB565")
    _rng_fill(fb, 3)
    expected = np.asarray(fb.snapshot())

    async def main(port):
        for _ in range(3):  # the first, a second, a reload: nothing changes on the display meanwhile
            async with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}") as ws:
                assert np.array_equal(await _whole_picture(ws), expected)

    with Server(fb, port=0) as server:
        asyncio.run(main(server.port))
    fb.close()


@pytest.mark.parametrize("header", ["Host", "Origin"])
def test_a_duplicate_host_or_origin_is_400_without_a_traceback(caplog, header):
    """Two Host (or Origin) headers: 400 and at most one log line, not a 500 and a traceback."""
    fb = fbgfx.open("virtual:32x32")
    with Server(fb, port=0) as server:
        port = server.port
        origin = f"Origin: http://127.0.0.1:{port}\r\n"
        lines = [f"Host: 127.0.0.1:{port}\r\n", origin, "Upgrade: websocket\r\nConnection: Upgrade\r\n"]
        lines.append("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
        lines.insert(0, f"Host: localhost:{port}\r\n" if header == "Host" else "Origin: http://evil.example\r\n")
        with caplog.at_level("DEBUG", logger="fbgfx.serve"):
            for target in ("/", "/ws"):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                    s.sendall(f"GET {target} HTTP/1.1\r\n{''.join(lines)}\r\n".encode())
                    data = b""
                    while chunk := s.recv(65536):
                        data += chunk
                assert data.split(b" ", 2)[1] == b"400", (target, data[:300])
    fb.close()
    logged = [r for r in caplog.records if r.levelno >= 30]
    assert len(logged) <= 2 and not any(r.exc_info for r in caplog.records), [r.getMessage() for r in logged]


def test_serve_reports_a_truncated_file_and_keeps_serving(tmp_path):
    """`fbgfx serve` of a framebuffer file another program truncates: viewers get an error, the server lives on."""
    path = tmp_path / "fb.raw"
    spec = f"virtual:64x48:XRGB8888:file={path}"
    with fbgfx.open(spec) as fb:
        _rng_fill(fb, 5)

    async def main(port):
        url, origin = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
        async with connect(url, origin=origin) as ws:
            await _whole_picture(ws)
            os.truncate(path, 0)  # this test process is the other program
            error = await _recv_json(ws, "error")
        async with connect(url, origin=origin) as ws:  # a viewer arriving later is told too
            later = await _recv_json(ws, "error")
        return error["message"], later["message"]

    with CliServer("-d", spec, "--port", "0") as server:
        messages = asyncio.run(main(server.port))
        assert server.proc.poll() is None  # still serving (it died of SIGBUS, -7)
    for message in messages:
        assert "truncated" in message and str(path) in message, message
