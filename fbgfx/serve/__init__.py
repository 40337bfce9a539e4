"""Show a display live in web browsers, and touch it from there: ``fbgfx serve`` and :class:`Server`.

::

    with fbgfx.open() as fb, fbgfx.serve.Server(fb, port=8080) as server:
        print("watch at", server.url)   # http://127.0.0.1:8080/
        ...                             # draw as usual: browsers follow

A server grabs what the display shows at up to ``fps`` times a second, finds the
rectangles that changed and sends only those to each browser, as fast as that browser
draws them (a slow one gets fewer, newer pictures; nothing queues up). The page is one
packaged file: a ``<canvas id="display">`` that equals ``fb.snapshot()`` pixel for pixel.

It binds 127.0.0.1 unless told otherwise, and any other address needs a ``token``,
which every request must then carry (``http://HOST:PORT/?token=TOKEN``). Pointer
input reaches the display's touchscreen only when ``touch`` is given.

Needs the ``serve`` extra (``pip install 'fbgfx[serve]'``: the ``websockets``
package), imported when a server starts: a program that only draws never loads it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import threading
import warnings
from collections.abc import Awaitable
from types import ModuleType
from typing import Any, Callable

from ..device import Framebuffer
from ._stream import DisplaySource, FramebufferSource, ScanoutSource, Stream

__all__ = ["DisplaySource", "ScanoutSource", "Server", "check_options"]

_TOKEN = re.compile(r"[A-Za-z0-9._~-]{8,256}")


def __getattr__(name: str) -> Any:
    if name == "Source":  # the old name, for one release (video.Source is another thing)
        warnings.warn("fbgfx.serve.Source is now fbgfx.serve.DisplaySource", DeprecationWarning, stacklevel=2)
        return DisplaySource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_options(bind: str, port: int, token: str | None, fps: float) -> None:
    """Refuse options a server must not start with.

    Raises:
        ValueError: ``bind`` is not a loopback address and there is no ``token``; the
            token is shorter than 8 characters or not URL-safe; ``port`` or ``fps``
            is out of range.
    """
    if token is not None and not _TOKEN.fullmatch(token):
        raise ValueError("--token must be 8 to 256 characters of A-Z a-z 0-9 . _ ~ - (it travels in the URL)")
    if token is None and not _is_loopback(bind):
        raise ValueError(
            f"--bind {bind} lets other machines connect: it needs --token TOKEN "
            "(every request must then carry it), or bind 127.0.0.1"
        )
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535, not {port}")
    if not 0 < fps <= 240:
        raise ValueError(f"--fps must be more than 0 and at most 240, not {fps:g}")


def _is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def _load_web() -> ModuleType:
    try:
        from . import _web  # noqa: PLC0415 (websockets is needed only once a server starts)
    except ImportError as e:
        if getattr(e, "name", None) and str(e.name).startswith("websockets"):
            raise ModuleNotFoundError(
                "serving needs the websockets package (13 or newer): pip install 'fbgfx[serve]'", name=e.name
            ) from e
        raise
    return _web


class Server:
    """A web server that shows one display live, in any number of browsers.

    Use it as a context manager (started in a background thread, stopped on exit), or
    call :meth:`serve_forever` to serve from the calling thread.

    Args:
        display: An open :class:`~fbgfx.Framebuffer` (its visible page is followed
            through pans and mode changes), or a :class:`DisplaySource` such as
            :class:`ScanoutSource` for what a ``drm:`` card scans out.
        bind: The address to listen on. Anything but a loopback address needs ``token``.
        port: The TCP port; 0 picks a free one (see :attr:`port` once started).
        token: A secret every request must carry (``?token=``); 8 or more URL-safe characters.
        fps: The most updates a second each browser gets.
        touch: Where pointer presses on the page go, as touches in panel coordinates
            (an object with ``press(x, y)``, ``move(x, y)`` and ``release()``); None:
            the page is for looking only.

    Raises:
        ValueError: Bad options (see :func:`check_options`).
    """

    def __init__(
        self,
        display: Framebuffer | DisplaySource,
        *,
        bind: str = "127.0.0.1",
        port: int = 8080,
        token: str | None = None,
        fps: float = 30,
        touch: Any = None,
    ) -> None:
        check_options(bind, port, token, fps)
        self.source: DisplaySource = FramebufferSource(display) if isinstance(display, Framebuffer) else display
        self.stream = Stream(self.source)
        self.bind = "127.0.0.1" if bind == "localhost" else bind.strip("[]")
        self.token = token
        self.fps = fps
        self.touch = touch
        #: The port listened on (the one asked for, or the one picked for 0).
        self.port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Future[None] | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """The page's address, with the token when there is one."""
        host = self.bind
        if host in ("", "0.0.0.0", "::"):
            host = socket.gethostname()
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Server:
        """Start serving from a background thread; returns once the port listens.

        Raises:
            OSError: The address cannot be bound (``EADDRINUSE``: the port is taken).
            ModuleNotFoundError: The ``websockets`` package is missing.
        """
        if self._thread is not None:
            raise RuntimeError("this server was started already")
        web = _load_web()
        ready = threading.Event()

        def target() -> None:
            try:
                asyncio.run(self._main(web, lambda: ready.set()))
            except BaseException as e:  # noqa: BLE001 - handed to start(), or kept for stop()
                self._error = e
            finally:
                ready.set()

        self._thread = threading.Thread(target=target, name="fbgfx-serve", daemon=True)
        self._thread.start()
        ready.wait()
        if self._error is not None:
            self._thread.join()
            error, self._error = self._error, None
            raise error
        return self

    def serve_forever(self, ready: Callable[[Server], None] | None = None) -> None:
        """Serve from this thread until :meth:`stop` is called from another (or Ctrl-C).

        Args:
            ready: Called once the port listens (to print :attr:`url`).
        """
        web = _load_web()
        asyncio.run(self._main(web, (lambda: ready(self)) if ready else (lambda: None)))

    def stop(self) -> None:
        """Stop serving and close every browser's connection; safe to call more than once."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:

            def end() -> None:
                if not stop.done():
                    stop.set_result(None)

            try:
                loop.call_soon_threadsafe(end)
            except RuntimeError:
                pass  # the loop has ended already
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    async def _main(self, web: ModuleType, ready: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        stop: asyncio.Future[None] = self._loop.create_future()
        self._stop = stop
        config = web.Config(bind=self.bind, port=self.port, token=self.token, fps=self.fps, touch=self.touch)

        def started(port: int) -> None:
            self.port = port
            ready()

        run: Callable[..., Awaitable[None]] = web.run
        try:
            await run(config, self.stream, started, stop)
        finally:
            self._loop = self._stop = None
