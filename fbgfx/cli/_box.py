"""Where ``fbgfx play`` shows its picture: the whole screen, or the rectangle ``--box``
in a layer (on a display plane where the display has one free, else composed by fbgfx),
with one line on stderr saying which."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedFormatError
from ._command import CliError

if TYPE_CHECKING:
    from ..device import Framebuffer
    from ..screen import Screen

__all__ = ["in_layer", "on_screen", "parse_box"]


def parse_box(text: str, width: int, height: int) -> tuple[int, int, int, int]:
    """``--box X0,Y0,X1,Y1``: four integers, a non-empty rectangle inside the screen.

    Raises:
        CliError: Not four integers, empty, or not inside the ``width`` x ``height`` screen.
    """
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"--box must be X0,Y0,X1,Y1 (four integers, X1 and Y1 exclusive), not {text!r}") from None
    if x0 >= x1 or y0 >= y1:
        raise CliError(f"--box {text} is empty (X1 and Y1 are exclusive and must be larger than X0 and Y0)")
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise CliError(f"--box {text} is not inside the {width}x{height} screen")
    return x0, y0, x1, y1


@contextlib.contextmanager
def on_screen(video: Any, screen: Screen) -> Iterator[Callable[[Any, Any], Any]]:
    """The play on the whole screen: yields ``make(sources, options)`` -> its Player."""
    yield lambda sources, options: video.Player(screen, sources, options)


@contextlib.contextmanager
def in_layer(
    video: Any, fb: Framebuffer, screen: Screen, box: tuple[int, int, int, int]
) -> Iterator[Callable[[Any, Any], Any]]:
    """Where ``--box`` plays, as ``make(sources, options)`` -> its Player: in a layer at
    ``box`` (the whole of it), or in the Screen's ``box`` on a display that takes no
    layers; one line on stderr says which (on a plane, or composed by fbgfx and why).

    When the play ends the last frame goes into the Screen and the layer closes: the
    picture stays as a play without ``--box`` leaves it, and ``--out`` holds it.
    """
    try:
        layer = fb.layer(box)
    except UnsupportedFormatError as e:  # a palette or gray display: no layers, the Screen's box
        _tell_where(f"video composed by fbgfx ({e})")
        yield lambda sources, options: video.Player(screen, sources, dataclasses.replace(options, box=box))
        return
    with layer:
        if layer.hardware:
            kind = next((p.type for p in fb.planes if p.id == layer.plane_id), "overlay")
            _tell_where(f"video on plane {layer.plane_id} ({kind})")
        else:
            _tell_where(f"video composed by fbgfx ({_why(layer.reason)})")
        try:
            yield layer.player
        finally:
            if not layer.closed:
                with screen.frame() as s:
                    s.blit(layer.surface.to_image(), box[:2])


def _why(reason: str) -> str:
    """``layer.reason`` without its "composed by fbgfx" (the line says it)."""
    reason = reason.removeprefix("composed by fbgfx: ")
    return reason.removesuffix(": composed by fbgfx")


def _tell_where(text: str) -> None:
    print(f"fbgfx: play: {text}", file=sys.stderr, flush=True)
