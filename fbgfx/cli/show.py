"""``fbgfx show``: one picture, or a slideshow of several."""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import threading
from typing import Callable

from PIL import Image

from ..screen import Screen
from ._args import add_duration, add_fit, add_rotate, parse_background, seconds
from ._clock import earlier, now, wait_until
from ._command import Command, Context
from ._device import open_device, saved_screen, screen_size
from ._pictures import check_image, load_image, read_fifo

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="any image file Pillow reads")
    add_fit(parser)
    add_rotate(parser)
    parser.add_argument("--delay", type=seconds, default=5.0, metavar="S", help="seconds per image (default 5)")
    parser.add_argument("--loop", action="store_true", help="start again after the last image")
    add_duration(parser, "exit after this many seconds")
    parser.add_argument(
        "--background", default="black", metavar="COLOR", help="colour around and behind the picture (default black)"
    )


def run(args: argparse.Namespace, context: Context) -> int:
    """Show the pictures in turn; the last stays until Ctrl-C or --duration."""
    background = parse_background(args.background)
    # A FIFO is read whole first, within --duration (opening one waits for a writer).
    limit = None if args.duration is None else now() + args.duration
    fifos = {path: data for path in args.images if (data := read_fifo(path, limit)) is not None}
    # Read the first picture and check the rest before touching the screen, so a typo
    # leaves the screen and console as they were.
    for path in args.images[1:]:
        check_image(path, fifos.get(path))
    with open_device(args) as fb:
        size = screen_size(fb, args.rotate)
        first = load_image(args.images[0], size, args.fit, fifos.get(args.images[0]))
        deadline = None if args.duration is None else now() + args.duration
        with saved_screen(fb, args.out, context, args.rotate) as screen:
            _slideshow(screen, args, first, background, size, deadline, fifos)
    return 0


def _slideshow(
    screen: Screen,
    args: argparse.Namespace,
    first: Image.Image,
    background: tuple[int, int, int],
    size: tuple[int, int],
    deadline: float | None,
    fifos: dict[str, bytes],
) -> None:
    paths: list[str] = args.images
    screen.present(first, fit=args.fit, background=background)
    if len(paths) == 1:
        wait_until(deadline)
        return

    # The pictures after the first, each decoded in a thread while the one before is up,
    # so a slow decode neither delays the picture change nor outlasts --duration.
    order = itertools.cycle(range(len(paths))) if args.loop else iter(range(len(paths)))
    next(order)

    def load_next() -> concurrent.futures.Future[Image.Image] | None:
        index = next(order, None)
        if index is None:
            return None
        return _load_ahead(lambda: load_image(paths[index], size, args.fit, fifos.get(paths[index])))

    upcoming = load_next()
    while True:
        wait_until(earlier(now() + args.delay, deadline))
        if deadline is not None and now() >= deadline:
            return
        if upcoming is None:  # the last picture was shown: it stays
            wait_until(deadline)
            return
        try:
            image = upcoming.result(timeout=None if deadline is None else max(deadline - now(), 0.0))
        except concurrent.futures.TimeoutError:
            return
        upcoming = load_next()
        screen.present(image, fit=args.fit, background=background)


def _load_ahead(load: Callable[[], Image.Image]) -> concurrent.futures.Future[Image.Image]:
    """``load()`` run in a daemon thread: a decode still running at exit does not hold the
    process (a thread pool's workers would)."""
    future: concurrent.futures.Future[Image.Image] = concurrent.futures.Future()

    def work() -> None:
        try:
            future.set_result(load())
        except BaseException as e:  # noqa: BLE001 - raised in the slideshow's thread by result()
            future.set_exception(e)

    threading.Thread(target=work, name="fbgfx-show-reader", daemon=True).start()
    return future


COMMAND = Command(
    name="show",
    help="show images, or a slideshow of them",
    description="Show one image, or several as a slideshow. Without --duration the last picture stays until "
    "Ctrl-C; then the console comes back.",
    add_arguments=_arguments,
    run=run,
    out=True,
)
