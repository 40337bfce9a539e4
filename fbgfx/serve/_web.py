"""The network side of ``fbgfx serve``: one page, one WebSocket, and the rules that guard them.

Built on the ``websockets`` package (asyncio). Every HTTP request passes :func:`check`
before anything is answered: with a token, the token (compared in constant time);
without one, a ``Host`` that names this machine's loopback (so a page elsewhere cannot
reach the server through DNS rebinding). The WebSocket's ``Origin`` must be the page's
own. Only the packaged page is served, from memory: no path reaches the file system.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import hmac
import http
import json
import logging
import re
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Protocol
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from ._stream import Stream

__all__ = ["Config", "Touch", "check", "page", "run"]

log = logging.getLogger("fbgfx.serve")

#: Updates a viewer may have unacknowledged: one being drawn, one on its way.
IN_FLIGHT = 2
#: How far behind its beat the grab loop may fall before it starts the beat again from now (seconds).
CATCH_UP = 0.5
#: The largest message a viewer may send (acknowledgements and pointer events are small).
MAX_MESSAGE = 1024
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


class Touch(Protocol):
    """Where a viewer's pointer goes with ``--input``: touches in panel coordinates."""

    def press(self, x: int, y: int) -> object: ...
    def move(self, x: int, y: int) -> object: ...
    def release(self) -> object: ...


@dataclass(frozen=True)
class Config:
    """What the server was asked for (checked by :class:`fbgfx.serve.Server`)."""

    bind: str
    port: int
    token: str | None
    fps: float
    touch: Touch | None


def page() -> tuple[bytes, str]:
    """The packaged page and the Content-Security-Policy that allows only its own script and style."""
    body = resources.files(__package__).joinpath("page.html").read_bytes()
    text = body.decode()

    def digest(tag: str) -> str:
        found = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S)
        inner = found.group(1) if found else ""
        return "'sha256-" + base64.b64encode(hashlib.sha256(inner.encode()).digest()).decode() + "'"

    policy = (
        f"default-src 'none'; script-src {digest('script')}; style-src {digest('style')}; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return body, policy


def check(config: Config, path: str, headers: Headers, websocket: bool) -> tuple[int, str] | None:
    """Why a request is refused, as (HTTP status, reason), or None when it may go on."""
    for name in ("Host", "Origin"):
        if len(headers.get_all(name)) > 1:  # which one would count is anyone's guess: refuse
            return 400, f"more than one {name} header"
    query = parse_qs(urlsplit(path).query)
    host = headers.get("Host", "")
    if config.token is not None:
        given = query.get("token", [""])[-1]
        if not given:
            return 401, "this server needs its token: open the URL it printed (http://HOST:PORT/?token=...)"
        if not hmac.compare_digest(given.encode(), config.token.encode()):
            return 403, "wrong token"
    elif host.rsplit(":", 1)[0].lower() not in _LOOPBACK_NAMES and host.lower() not in _LOOPBACK_NAMES:
        return 403, "without a token this server answers only to localhost / 127.0.0.1 / [::1]"
    if websocket:
        origin = headers.get("Origin")
        if origin is None or origin.lower() not in (f"http://{host}".lower(), f"https://{host}".lower()):
            return 403, "the WebSocket must come from the page this server serves (Origin)"
    return None


def _response(status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> Response:
    headers = Headers()
    headers["Content-Type"] = content_type
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = "no-store"
    headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL
    headers["X-Content-Type-Options"] = "nosniff"
    for key, value in (extra or {}).items():
        headers[key] = value
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


class _Hub:
    """The viewers of one server and the grab loop that feeds them."""

    def __init__(self, config: Config, stream: Stream) -> None:
        self.config = config
        self.stream = stream
        self.viewers: dict[ServerConnection, asyncio.Event] = {}
        self.present = asyncio.Event()
        self.error: str | None = None
        self.toucher: ServerConnection | None = None  # the viewer whose finger is down
        self._grabber = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="fbgfx-grab")

    def close(self) -> None:
        self._grabber.shutdown(wait=True)

    async def grab_loop(self) -> None:
        loop = asyncio.get_running_loop()
        period = 1.0 / self.config.fps
        due = loop.time()
        while True:
            if not self.viewers:
                self.present.clear()
                await self.present.wait()
                due = loop.time()
            started = loop.time()
            try:
                changed = await loop.run_in_executor(self._grabber, self.stream.grab)
                error = None
            except OSError as e:  # a drm: card showing nothing, a device unplugged: say so, retry
                changed, error = False, str(e)
            if error != self.error:
                self.error = error
                changed = True
            if changed:
                for wake in self.viewers.values():
                    wake.set()
            await asyncio.sleep(max(0.0, self._next_grab(due, started, period, error) - loop.time()))
            due = max(due + (period if error is None else 1.0), loop.time() - CATCH_UP)

    @staticmethod
    def _next_grab(due: float, started: float, period: float, error: str | None) -> float:
        """When the grab after one due at ``due`` (begun at ``started``) runs.

        Grabs keep to a fixed beat, so that a display drawn faster than ``--fps`` is shown
        at ``--fps`` on average: beats a busy machine delayed are made up, up to
        :data:`CATCH_UP` seconds of them, by grabs half a period apart (a grab straight
        after another would find nothing new on a display drawn at a steady rate).
        """
        if error is not None:
            return started + 1.0  # a display showing nothing: look again each second
        return max(due + period, started + period / 2)

    async def viewer(self, ws: ServerConnection) -> None:
        wake = asyncio.Event()
        wake.set()  # a new viewer gets the whole current picture now, changed or not
        self.viewers[ws] = wake
        self.present.set()
        log.info("viewer %s connected (%d watching)", ws.remote_address, len(self.viewers))
        state = {"acked": 0}
        reader = asyncio.ensure_future(self._read(ws, state, wake))
        try:
            await ws.send(json.dumps({"type": "hello", "input": self.config.touch is not None}))
            await self._send_loop(ws, state, wake, reader)
        except ConnectionClosed:
            pass
        finally:
            reader.cancel()
            del self.viewers[ws]
            if self.toucher is ws:
                self._touch(ws, "up", 0, 0)
            log.info("viewer %s left (%d watching)", ws.remote_address, len(self.viewers))

    async def _send_loop(self, ws: ServerConnection, state: dict[str, int], wake: asyncio.Event, reader: Any) -> None:
        version = epoch = sent = 0
        told_error: str | None = None
        while not reader.done():
            await wake.wait()
            wake.clear()
            if self.error != told_error:
                told_error = self.error
                if told_error is not None:
                    await ws.send(json.dumps({"type": "error", "message": told_error}))
            if sent - state["acked"] >= IN_FLIGHT:
                continue  # the viewer is still drawing: it gets the newest picture when it acks
            update = await asyncio.to_thread(self.stream.update_for, version, epoch)
            if update is None:
                continue
            frame, message = update
            if frame.epoch != epoch:
                await ws.send(json.dumps(frame.mode))
            await ws.send(message)
            version, epoch = frame.version, frame.epoch
            sent += 1
            wake.set()  # more may have changed while this one was encoded and sent

    async def _read(self, ws: ServerConnection, state: dict[str, int], wake: asyncio.Event) -> None:
        try:
            await self._read_messages(ws, state, wake)
        finally:
            wake.set()  # the send loop sees the reader end

    async def _read_messages(self, ws: ServerConnection, state: dict[str, int], wake: asyncio.Event) -> None:
        async for raw in ws:
            try:
                msg = json.loads(raw)
                kind = msg["type"]
            except (ValueError, TypeError, KeyError):
                continue
            if kind == "ack":
                state["acked"] += 1
                wake.set()
            elif kind == "pointer":
                action, x, y = msg.get("action"), msg.get("x"), msg.get("y")
                if action in ("down", "move", "up") and type(x) is int and type(y) is int:
                    self._touch(ws, action, x, y)

    def _touch(self, ws: ServerConnection, action: str, x: int, y: int) -> None:
        touch = self.config.touch
        if touch is None:
            return  # no input unless the server was started with it
        if self.toucher is not None and self.toucher is not ws:
            return  # one finger at a time: another viewer's is down
        frame = self.stream.frame
        if frame is not None:  # else the touchscreen checks the position itself
            x, y = min(max(x, 0), frame.width - 1), min(max(y, 0), frame.height - 1)
        try:
            if action == "down":
                if self.toucher is ws:
                    touch.release()
                touch.press(x, y)
                self.toucher = ws
            elif action == "move" and self.toucher is ws:
                touch.move(x, y)
            elif action == "up" and self.toucher is ws:
                touch.release()
                self.toucher = None
        except (OSError, ValueError) as e:  # the touchscreen went away, the panel shrank
            log.warning("touch %s at (%d, %d) failed: %s", action, x, y, e)
            self.toucher = None


async def run(config: Config, stream: Stream, started: Callable[[int], None], stop: Awaitable[Any]) -> None:
    """Serve until ``stop`` completes; ``started(port)`` is called once the port listens."""
    body, policy = page()
    hub = _Hub(config, stream)

    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        del connection  # websockets' hook signature; the request says it all
        route = urlsplit(request.path).path
        websocket = route == "/ws"
        refused = check(config, request.path, request.headers, websocket)
        if refused is not None:
            status, reason = refused
            return _response(status, (reason + "\n").encode(), "text/plain; charset=utf-8")
        if websocket:
            if "upgrade" not in ", ".join(request.headers.get_all("Connection")).lower():
                return _response(426, b"a WebSocket endpoint\n", "text/plain; charset=utf-8")
            return None
        if route in ("/", "/index.html"):
            return _response(
                200,
                body,
                "text/html; charset=utf-8",
                {"Content-Security-Policy": policy, "X-Frame-Options": "DENY"},
            )
        return _response(404, b"not found\n", "text/plain; charset=utf-8")

    connections: weakref.WeakSet[ServerConnection] = weakref.WeakSet()

    class Connection(ServerConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            connections.add(self)

    grabbing = asyncio.ensure_future(hub.grab_loop())
    try:
        async with serve(
            hub.viewer,
            config.bind,
            config.port,
            process_request=process_request,
            compression=None,  # the pictures are compressed already
            max_size=MAX_MESSAGE,
            server_header=None,
            open_timeout=5,  # a connection that sends no request in time is dropped
            logger=log,
            create_connection=Connection,
        ) as server:
            started(server.sockets[0].getsockname()[1])
            await stop
            # A browser opens spare connections it may never send a request on; closing
            # would wait for their handshake to time out. They have nothing to lose.
            for connection in list(connections):
                if connection.protocol.state is State.CONNECTING and getattr(connection, "transport", None):
                    connection.transport.abort()
    finally:
        grabbing.cancel()
        try:
            await grabbing
        except asyncio.CancelledError:
            pass
        hub.close()
