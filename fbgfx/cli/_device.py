"""Opening the device and the screen for an ``fbgfx`` command, and saving the screen
(``--out``) at its end.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
from collections.abc import Iterator
from typing import TYPE_CHECKING

import fbgfx

from .._open import resolve
from ..drm import find_display, is_drm_spec, parse_spec
from ..errors import FramebufferError
from ..screen import resolve_rotate
from ._pictures import save_image

if TYPE_CHECKING:
    from ._command import Context

__all__ = ["drm_target", "in_process_only", "open_device", "open_screen", "save_screen", "saved_screen", "screen_size"]


def screen_size(fb: fbgfx.Framebuffer, rotate: int | None) -> tuple[int, int]:
    """The (width, height) a Screen opened with ``rotate`` draws on (the panel's size,
    swapped when turned a quarter turn)."""
    return (fb.height, fb.width) if resolve_rotate(rotate) in (90, 270) else (fb.width, fb.height)


def drm_target(args: argparse.Namespace) -> tuple[str, dict[str, str]] | None:
    """(card path, options) when ``--device`` (or the default) is a ``drm:`` display,
    else None. ``info`` and ``grab`` read such a card without opening it as a
    Framebuffer, which would take the display over."""
    spec = resolve(args.device)
    if not is_drm_spec(spec):
        return None
    card, options = parse_spec(spec)
    if card is None:
        card = find_display()
        if card is None:
            raise FramebufferError(errno.ENOENT, "no DRM card with a connected display", spec)
    return card, options


def open_device(args: argparse.Namespace, readonly: bool = False) -> fbgfx.Framebuffer:
    """Open ``--device``; ``readonly`` for commands that only look (info, grab).

    A read-only open never creates or changes a file-backed virtual device.
    """
    return fbgfx.open(args.device, readonly=readonly)


def in_process_only(fb: fbgfx.Framebuffer) -> bool:
    """True for a virtual framebuffer that no other process can see (not file-backed)."""
    device = getattr(fb, "device", None)
    return fb.path.startswith("virtual:") and getattr(device, "path", "virtual") == "virtual"


def open_screen(fb: fbgfx.Framebuffer, out: str | None, context: Context, rotate: int | None = None) -> fbgfx.Screen:
    """The double-buffered screen the commands draw on, console kept quiet, the picture
    turned ``rotate`` degrees clockwise (None: ``$FBGFX_ROTATE``, else 0)."""
    if in_process_only(fb) and not out:
        context.note("nothing outside this process sees a virtual framebuffer; add --out FILE.png to keep the picture")
    screen: fbgfx.Screen = fb.screen(buffering="auto", console=True, rotate=rotate)
    return screen


def save_screen(fb: fbgfx.Framebuffer, path: str | None) -> None:
    """``--out``: save what the screen shows, when asked."""
    if path:
        save_image(fb.snapshot(), path)


@contextlib.contextmanager
def saved_screen(
    fb: fbgfx.Framebuffer, out: str | None, context: Context, rotate: int | None = None
) -> Iterator[fbgfx.Screen]:
    """:func:`open_screen` for a command's drawing: on the way out, also when the
    drawing fails or is interrupted, what the screen shows is saved to ``out`` (when
    given) before the screen closes and gives the console back."""
    screen = open_screen(fb, out, context, rotate)
    try:
        try:
            yield screen
        finally:
            save_screen(fb, out)
    finally:
        screen.close()
