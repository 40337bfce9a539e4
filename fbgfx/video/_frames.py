"""Frame sources: what a play reads, as timestamped frames.

A :class:`FrameSource` gives a :class:`FramePass` each time it is opened: one read
from the start (a loop's next round opens it again). A pass yields :class:`Frame`
values in order, their times in seconds from the pass's first picture. Three sources:

- :class:`FileSource`: a video file through FFmpeg (PyAV): ``"video"`` frames
  (``av.VideoFrame``, converted by libswscale) and ``"audio"`` frames;
- :class:`AnimationSource`: an animated GIF/APNG/WebP through Pillow: ``"rgb"`` frames;
- :class:`RawSource`: raw frames from a pipe (``ffmpeg -f rawvideo ... |``): ``"rgb"``
  frames, read into a ring of buffers made once.

The present loop (:mod:`fbgfx.video._player`) shows them all the same way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import itertools
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Callable, Protocol

import numpy as np
from PIL import Image, ImageSequence

from ..convert import from_native, has_alpha
from ..pixelformat import FORMATS
from ._source import Video, is_url

__all__ = [
    "RAW_PIX_FMTS",
    "AnimationSource",
    "FileSource",
    "Frame",
    "FramePass",
    "FrameSource",
    "RawSource",
    "is_picture",
]

#: Raw pixel formats :class:`RawSource` reads, by ffmpeg's ``-pix_fmt`` name:
#: (bytes per pixel, the fbgfx format of the same memory layout or None for plain RGB).
RAW_PIX_FMTS: dict[str, tuple[int, str | None]] = {
    "rgb24": (3, None),
    "bgra": (4, "XRGB8888"),
    "rgb565le": (2, "RGB565"),
}

# How much decoded animation a looping AnimationSource keeps instead of decoding again.
_CACHE_BYTES = 512 << 20
# Raw frames read ahead of the one shown: the queue, the one read into, the one looked
# ahead at, the one shown and the one the Screen keeps as its last.
_RING = 13
_F_SETPIPE_SZ = 1031


@dataclass(frozen=True)
class Frame:
    """One decoded frame.

    Attributes:
        kind: ``"video"`` (``data`` an ``av.VideoFrame``), ``"rgb"`` (an (h, w, 3)
            uint8 array) or ``"audio"`` (an ``av.AudioFrame``).
        data: The frame.
        t: Seconds from the pass's first picture.
        duration: Seconds it stays (until the next picture), where the source knows.
    """

    kind: str
    data: Any
    t: float
    duration: float | None = None


class FramePass(Protocol):
    """One read of a source, from its start."""

    #: The file read, for ``"video"`` frames (their size and turn); None for the others.
    video: Video | None
    #: Whether the source is live (a pipe): after a stall, time restarts from the next
    #: frame instead of dropping every frame until the schedule is met.
    live: bool

    def frames(self) -> Iterator[Frame]:
        """The frames in order."""
        ...

    def close(self) -> None:
        """Stop reading; safe twice."""
        ...


class FrameSource(Protocol):
    """Something a play reads frames from (see the module's documentation)."""

    #: What the user calls it (a path, ``-``), for messages.
    name: str

    def open(self, cancel: threading.Event) -> FramePass:
        """A pass from the start; ``cancel`` ends a wait for a FIFO's writer.

        Raises:
            TimeoutError: ``cancel`` was set first.
        """
        ...


# -- video files --------------------------------------------------------------------------------


class FileSource:
    """A video file through FFmpeg, by path or as an open :class:`Video` (which stays
    open: each pass over it reads the file on its own)."""

    def __init__(self, item: str | os.PathLike[str] | Video, hwdec: str = "auto", threads: int | None = None) -> None:
        self.item, self.hwdec, self.threads = item, hwdec, threads
        self.name = item.path if isinstance(item, Video) else os.fspath(item)

    def open(self, cancel: threading.Event) -> _FilePass:
        if isinstance(self.item, Video):
            return _FilePass(self.item, owned=False)
        return _FilePass(Video(self.name, hwdec=self.hwdec, threads=self.threads, cancel=cancel), owned=True)


class _FilePass:
    live = False

    def __init__(self, video: Video, owned: bool) -> None:
        self.video: Video | None = video
        self._owned = owned
        self._frames: Any = None

    def frames(self) -> Iterator[Frame]:
        video = self.video
        assert video is not None
        period = 1 / video.fps if video.fps else 0.04
        self._frames = video.frames()
        for kind, frame, t in self._frames:
            yield Frame(kind, frame, t, period if kind == "video" else None)

    def close(self) -> None:
        if self._frames is not None:
            self._frames.close()  # the pass's reader closes now, in this thread
        if self._owned and self.video is not None:
            self.video.close()


# -- animations (Pillow) ----------------------------------------------------------------------------


def is_picture(path: str) -> bool:
    """True for a file Pillow reads as a picture or animation (GIF, APNG, WebP, PNG, ...):
    :class:`AnimationSource` plays it, frames lasting what the file says. False for what
    only FFmpeg reads, and for a FIFO or URL (probing would take the bytes the play needs).

    Raises:
        FileNotFoundError: No such file.
        IsADirectoryError: A folder.
    """
    if is_url(path):
        return False
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(mode):
        return False
    try:
        with Image.open(path) as im:
            return im.format != "MPEG"  # Pillow names MPEG files but cannot decode them
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
        return False


class AnimationSource:
    """An animated GIF/APNG/WebP (any picture Pillow reads: a still one is one frame).

    The file is opened (and its header checked) here, so a bad file fails before the
    screen changes. Frames last what the file says; browsers show GIF frames of 0..10 ms
    for 100 ms, and so does this. A source played in a loop keeps its decoded frames
    (up to 512 MB) instead of decoding them again.

    Args:
        path: The file (for messages; and read, unless ``data`` is given).
        data: The file's bytes, when already read (a FIFO).
        loop: Whether it will be played again (keep the frames).

    Raises:
        OSError, ValueError: Pillow cannot read it (its own errors, as :func:`PIL.Image.open`).
        PIL.Image.DecompressionBombError: an animation whose canvas is larger than
            :data:`PIL.Image.MAX_IMAGE_PIXELS`. Pillow composes every frame after the
            first on a canvas of that size in RGB (about 8 bytes a pixel: 1.2 GB for a
            12000x12000 GIF of a few bytes), so it is refused before anything is decoded.
            A still picture that large is read in bands, as :meth:`Screen.present`
            does; raise the limit to play such an animation anyway.
    """

    def __init__(self, path: str, data: bytes | None = None, loop: bool = False) -> None:
        self.name, self._data = path, data
        self._image: Image.Image | None = self._open_image()
        _check_canvas(self._image)
        self._cache: list[Frame] | None = [] if loop else None
        self._cached = False
        self._shown: tuple[int, int, str] | None = None

    def fit_to(self, width: int, height: int, fit: str) -> None:
        """The frames will be shown ``fit`` into ``width`` x ``height``: each is made no
        larger than that needs as it is decoded (a small file can declare a huge canvas)."""
        self._shown = (width, height, fit)

    def _open_image(self) -> Image.Image:
        return Image.open(self.name if self._data is None else io.BytesIO(self._data))

    def open(self, cancel: threading.Event) -> _AnimationPass:
        del cancel  # the file is read at once
        if self._cached and self._cache is not None:
            return _AnimationPass(None, self._cache, None)
        image, self._image = self._image or self._open_image(), None
        return _AnimationPass(image, None, self._keep, self._shown)

    def close(self) -> None:
        """Close the file, if no pass has taken it yet (a pass closes it when it ends); safe twice."""
        image, self._image = self._image, None
        if image is not None:
            image.close()

    def _keep(self, frames: list[Frame] | None) -> None:
        """A pass read the whole file: keep its frames (None: too large to keep)."""
        self._cache = frames
        self._cached = frames is not None


class _AnimationPass:
    video: Video | None = None
    live = False

    def __init__(
        self,
        image: Image.Image | None,
        cached: list[Frame] | None,
        keep: Callable[[list[Frame] | None], None] | None,
        shown: tuple[int, int, str] | None = None,
    ) -> None:
        self._image, self._cached, self._keep, self._shown = image, cached, keep, shown

    def frames(self) -> Iterator[Frame]:
        if self._cached is not None:
            yield from self._cached
            return
        assert self._image is not None
        kept: list[Frame] | None = [] if self._keep is not None else None
        size, t = 0, 0.0
        for picture in ImageSequence.Iterator(self._image):
            picture.load()  # WebP gives a frame's duration when the frame is decoded
            duration = picture.info.get("duration") or 0
            period = duration / 1000 if duration > 10 else 0.1
            frame = Frame("rgb", _rgb(_bounded(picture, self._shown)), t, period)
            t += period
            if kept is not None:
                size += frame.data.nbytes
                kept = kept if size <= _CACHE_BYTES else None
                if kept is not None:
                    kept.append(frame)
            yield frame
        if self._keep is not None:
            self._keep(kept)

    def close(self) -> None:
        if self._image is not None:
            self._image.close()
            self._image = None


def _check_canvas(image: Image.Image) -> None:
    """Refuse an animation whose canvas is larger than Pillow's MAX_IMAGE_PIXELS (see
    :class:`AnimationSource`); the file is closed first."""
    limit = Image.MAX_IMAGE_PIXELS
    w, h = image.size
    if limit is None or w * h <= limit or not getattr(image, "is_animated", False):
        return
    image.close()
    raise Image.DecompressionBombError(
        f"an animation of {w}x{h} ({w * h / 1e6:.0f} M pixels) is more than"
        f" PIL.Image.MAX_IMAGE_PIXELS ({limit / 1e6:.0f} M): Pillow would compose its frames"
        f" on a canvas of {w * h * 8 / 1e9:.1f} GB"
    )


def _bounded(frame: Image.Image, shown: tuple[int, int, str] | None) -> Image.Image:
    """``frame`` no larger than showing it ``fit`` into (width, height) needs: the middle
    for ``center``, else reduced by the largest whole factor that keeps the shown size,
    converted and reduced a band of rows at a time (memory: what is shown, not the
    canvas in RGB)."""
    if shown is None:
        return frame
    width, height, fit = shown
    w, h = frame.size
    if fit == "center":
        if w <= width and h <= height:
            return frame
        left, top = max(0, -((width - w) // 2)), max(0, -((height - h) // 2))  # as present() centres
        return frame.crop((left, top, left + min(w, width), top + min(h, height)))
    ratios = (w / width, h / height)
    factor = int(max(ratios) if fit == "fit" else min(ratios))
    if factor < 2:
        return frame
    mode = "RGBA" if has_alpha(frame) else "RGB"
    rows = max(1, (4 << 20) // (w * factor)) * factor  # about 4 M pixels a band
    bands = [frame.crop((0, y, w, min(y + rows, h))).convert(mode).reduce(factor) for y in range(0, h, rows)]
    out = Image.new(mode, (bands[0].width, sum(b.height for b in bands)))
    y = 0
    for band in bands:
        out.paste(band, (0, y))
        y += band.height
    return out


def _rgb(frame: Image.Image) -> np.ndarray:
    """One animation frame as an RGB array of its own (the next frame reuses ``frame``)."""
    if has_alpha(frame):
        rgba = frame.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
        return np.asarray(Image.alpha_composite(base, rgba).convert("RGB"))
    return np.asarray(frame.convert("RGB"))


# -- raw frames from a pipe -----------------------------------------------------------------------


class RawSource:
    """Raw frames of one size and pixel format from a pipe (or any binary stream),
    read straight into a ring of buffers made once. One pass only: a pipe cannot be
    rewound.

    Args:
        stream: Where the frames come from (e.g. ``sys.stdin.buffer``'s file descriptor
            wrapped in ``io.FileIO``).
        size: (width, height) of a frame.
        pix_fmt: One of :data:`RAW_PIX_FMTS`.
        fps: Frames per second they stand for (each frame lasts ``1/fps``; 0: none).
        name: What to call the stream in messages.

    Raises:
        ValueError: An unknown ``pix_fmt``.
    """

    def __init__(self, stream: IO[bytes], size: tuple[int, int], pix_fmt: str, fps: float, name: str = "-") -> None:
        if pix_fmt not in RAW_PIX_FMTS:
            raise ValueError(f"unknown --pix-fmt {pix_fmt!r}; use one of: {', '.join(RAW_PIX_FMTS)}")
        self.stream, self.size, self.pix_fmt, self.fps, self.name = stream, size, pix_fmt, fps, name
        self._opened = False
        with contextlib.suppress(OSError, ValueError, AttributeError):
            # a bigger pipe means fewer wake-ups per frame; not every stream is a pipe
            fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, 1 << 20)

    def open(self, cancel: threading.Event) -> _RawPass:
        del cancel  # reading a pipe is stopped by closing the play, not by an Event
        if self._opened:
            raise ValueError(f"{self.name}: raw frames from a pipe play once (it cannot be rewound)")
        self._opened = True
        return _RawPass(self)


class _RawPass:
    video: Video | None = None
    live = True

    def __init__(self, source: RawSource) -> None:
        self._source = source
        width, height = source.size
        bpp, fmt_name = RAW_PIX_FMTS[source.pix_fmt]
        self._frame_bytes = width * height * bpp
        self._ring = [np.empty(self._frame_bytes, np.uint8) for _ in range(_RING)]
        self._views = [_raw_view(buffer, width, height, fmt_name) for buffer in self._ring]

    def frames(self) -> Iterator[Frame]:
        source = self._source
        period = 1 / source.fps if source.fps else 0.0
        for index in itertools.count():
            slot = index % _RING
            got = _read_into(source.stream, self._ring[slot].data)
            if got == 0:
                if index == 0:
                    raise ValueError(f"{'stdin' if source.name == '-' else source.name} had no frames")
                return
            if got < self._frame_bytes:
                width, height = source.size
                raise ValueError(
                    f"stdin ended mid-frame: got {got} of {self._frame_bytes} bytes — check --size/--pix-fmt "
                    f"({width}x{height} {source.pix_fmt} is {self._frame_bytes} bytes a frame)"
                )
            yield Frame("rgb", self._views[slot](), index * period, period)

    def close(self) -> None:
        pass  # the stream is the caller's


def _read_into(stream: IO[bytes], view: memoryview) -> int:
    """Fill ``view`` from ``stream``; the bytes read (fewer at the end of the stream)."""
    got = 0
    while got < len(view):
        n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            break
        got += n
    return got


def _raw_view(buffer: np.ndarray, width: int, height: int, fmt_name: str | None) -> Callable[[], np.ndarray]:
    """A function giving the frame in ``buffer`` as RGB (a view for rgb24)."""
    if fmt_name is None:
        rgb = buffer.reshape(height, width, 3)
        return lambda: rgb
    fmt = FORMATS[fmt_name]
    native = buffer.view(fmt.dtype).reshape(height, width)
    return lambda: from_native(native, fmt)
