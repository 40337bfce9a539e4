"""Video files on the screen: decoded by FFmpeg (through PyAV) straight into the
display's pixel format, in time, with sound, overlays, loops and playlists.

Needs the ``video`` extra (``pip install 'fbgfx[video]'``, or Debian's / Raspberry Pi
OS's ``python3-av``). ``import fbgfx`` does not import this package, nor does this
package import PyAV until a video is opened.

Example:
    >>> import fbgfx, fbgfx.video
    >>> with fbgfx.open() as fb, fb.screen() as screen:
    ...     played = screen.play("movie.mp4", on_frame=lambda s, t: s.text((10, 10), f"{t:5.1f} s", fill="white"))

:func:`open` gives a :class:`Video` (size, rate, duration; iterable as RGB frames);
:meth:`fbgfx.Screen.play` plays paths or Videos (see :func:`play`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._frames import RAW_PIX_FMTS, AnimationSource, FileSource, Frame, FramePass, FrameSource, RawSource, is_picture
from ._player import SETTLE, Played, Player, PlayOptions, Source
from ._source import HWDEC, Video, import_av, is_url, open

if TYPE_CHECKING:
    from ..screen import Screen

__all__ = [
    "HWDEC",
    "RAW_PIX_FMTS",
    "SETTLE",
    "AnimationSource",
    "FileSource",
    "Frame",
    "FramePass",
    "FrameSource",
    "PlayOptions",
    "Played",
    "Player",
    "RawSource",
    "Source",
    "Video",
    "import_av",
    "is_picture",
    "is_url",
    "open",
    "play",
]


def play(screen: Screen, source: Source, options: PlayOptions | None = None) -> Played:
    """Play ``source`` on ``screen`` as ``options`` say (default: :class:`PlayOptions`'s);
    the same as :meth:`fbgfx.Screen.play`, which documents them."""
    return Player(screen, source, options or PlayOptions()).run()
