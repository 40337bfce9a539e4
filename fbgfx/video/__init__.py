"""Video files on the screen: decoded by FFmpeg (through PyAV) straight into the
display's pixel format, in time, with sound, overlays, loops and playlists.

Needs the ``video`` extra (``pip install 'fbgfx[video]'``, or Debian's / Raspberry Pi
OS's ``python3-av``). ``import fbgfx`` does not import this package, nor does this
package import PyAV until a video is opened.

Example:
    >>> import fbgfx, fbgfx.video
    >>> with fbgfx.open() as fb, fb.screen() as screen:
    ...     screen.play("movie.mp4", on_frame=lambda s, t: s.text((10, 10), f"{t:5.1f} s", fill="white"))

:func:`open` gives a :class:`Video` (size, rate, duration; iterable as RGB frames);
:meth:`fbgfx.Screen.play` plays paths or Videos (see :func:`play`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ._player import Played, Player, Source
from ._source import HWDEC, Video, import_av, open

if TYPE_CHECKING:
    from ..screen import Screen
    from ..surface import Surface

__all__ = ["HWDEC", "Played", "Player", "Source", "Video", "import_av", "open", "play"]


def play(
    screen: Screen,
    source: Source,
    *,
    box: Any = None,
    fit: str = "fit",
    loop: bool = False,
    duration: float | None = None,
    audio: bool = True,
    on_frame: Callable[[Surface, float], Any] | None = None,
    fps: float | None = None,
    hwdec: str = "auto",
    audio_device: str = "default",
    threads: int | None = None,
    background: Any = "black",
) -> Played:
    """Play ``source`` on ``screen``; the same as :meth:`fbgfx.Screen.play`, which
    documents the arguments."""
    player = Player(
        screen,
        source,
        box=box,
        fit=fit,
        loop=loop,
        duration=duration,
        audio=audio,
        on_frame=on_frame,
        fps=fps,
        hwdec=hwdec,
        audio_device=audio_device,
        threads=threads,
        background=background,
    )
    return player.run()
