"""``fbgfx serve``: show the display live in web browsers (and touch it with ``--input``)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from .._open import resolve
from ..touch.uinput import UinputTouch, finger_for
from ._command import CliError, Command, Context
from ._device import drm_target, in_process_only, open_device

if TYPE_CHECKING:
    from ..serve import Server

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0 picks a free one)")
    p.add_argument(
        "--bind",
        metavar="ADDR",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only); any other needs --token",
    )
    p.add_argument("--token", metavar="TOKEN", help="a secret every request must carry (8+ URL-safe characters)")
    p.add_argument(
        "--input",
        action="store_true",
        help="pointer presses on the page become touches on the display's touchscreen (default: look only)",
    )
    p.add_argument("--fps", type=float, default=30.0, help="most updates a second per browser (default 30)")


def run(args: argparse.Namespace, context: Context) -> int:
    """Serve until Ctrl-C; prints the page's URL (with the token) once it listens."""
    del context  # every command is run with one; this one shows no notes
    # Imported here: the other commands start without loading asyncio and the server.
    from ..serve import ScanoutSource, Server, check_options  # noqa: PLC0415 (see the comment above)

    check_options(args.bind, args.port, args.token, args.fps)  # before anything opens
    options = {"bind": args.bind, "port": args.port, "token": args.token, "fps": args.fps}
    target = drm_target(args)
    if target is not None:
        # What the card shows, whoever shows it, read-only: serving never takes the display over.
        source = ScanoutSource(target[0], target[1].get("connector"))
        _, native, _, width = source.read()  # a card showing nothing, or no permission: one error line now
        with contextlib.ExitStack() as stack:
            finger = stack.enter_context(UinputTouch((width, native.shape[0]))) if args.input else None
            _serve(Server(source, touch=finger, **options), args)
        return 0
    with contextlib.ExitStack() as stack:
        fb = stack.enter_context(open_device(args, readonly=True))
        touch = None
        if args.input:  # a file-backed virtual display's own touchscreen, else a uinput one
            touch = finger_for(fb)
            stack.enter_context(contextlib.closing(touch))  # type: ignore[type-var]  # both kinds close
        note = "nothing but this process sees a virtual display without file=" if in_process_only(fb) else None
        _serve(Server(fb, touch=touch, **options), args, note)
    return 0


def _serve(server: Server, args: argparse.Namespace, note: str | None = None) -> None:
    def ready(s: Server) -> None:
        print(f"fbgfx: serving {resolve(args.device)} at {s.url}  (Ctrl-C to stop)", flush=True)
        if note:
            print(f"fbgfx: note: {note}", file=sys.stderr, flush=True)

    try:
        server.serve_forever(ready)
    except ModuleNotFoundError as e:
        raise CliError(str(e)) from None


COMMAND = Command(
    name="serve",
    help="show the display live in web browsers",
    description="Serve a page that shows the display live (only changed rectangles are sent) to any "
    "number of browsers; with --input, pointer presses on it become touches. Binds 127.0.0.1 unless "
    "--bind says otherwise, which needs --token; the URL printed at start carries the token. Works on "
    "/dev/fbN, a file-backed virtual display another program draws on, and drm: (what the card scans "
    "out, read-only).",
    add_arguments=_arguments,
    run=run,
)
