"""Video files opened through PyAV: the streams, the decoders, the frames in order.

:class:`Video` opens a file, picks its first video stream (and first audio stream),
sets the decoder's threads on purpose (frame threads for software decoding: far faster
than FFmpeg's slice threads, a few frames more delay) or opens a hardware decoder, and
decodes the first frame at once, so a file that cannot be played fails when it is
opened, before anything on the screen changes, and the first frame of the next file of
a playlist is ready before the current one ends.

PyAV is imported here and nowhere else at module level: :mod:`fbgfx.video` imports
this module only when a video is opened.
"""

from __future__ import annotations

import builtins
import errno
import math
import os
import re
import select
import stat
import struct
import threading
import warnings
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np

from ..errors import VideoError
from . import _v4l2

__all__ = ["HWDEC", "Video", "choose_decoder", "import_av", "is_url", "open"]

#: What ``hwdec`` takes: ``"auto"`` (a hardware decoder where the platform has one) or ``"none"``.
HWDEC = ("auto", "none")

_INSTALL = "playing video needs PyAV: pip install 'fbgfx[video]' (Raspberry Pi OS: sudo apt install python3-av)"


def import_av() -> Any:
    """PyAV, imported on first use.

    Raises:
        ImportError: PyAV is not installed (the message says how to install it).
    """
    try:
        import av  # noqa: PLC0415 (PyAV, the video extra, only when a video opens)
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    _quiet(av)
    return av


_QUIETED = False


def _quiet(av: Any) -> None:
    """Keep FFmpeg's log lines out of Python, as PyAV >= 13 does by default.

    Older PyAV (Debian's 10) hands every FFmpeg log line to Python's logging, which
    needs the GIL in FFmpeg's decoder threads: a thread that logs while another holds
    the GIL and waits for the decoder deadlocks. There, FFmpeg's own logging is put
    back (no Python involved) at the level that prints nothing, which is what newer
    PyAV does.
    """
    global _QUIETED
    if _QUIETED:
        return
    _QUIETED = True
    try:
        if av.logging.get_level() is None:
            return  # PyAV >= 13: FFmpeg's lines are dropped without Python
    except (AttributeError, TypeError):
        return
    restore = getattr(av.logging, "restore_default_callback", None)
    if restore is None:
        return
    from ._scale import swscale  # noqa: PLC0415 (libswscale only when a conversion was changed)

    restore()
    swscale().util.av_log_set_level(-8)  # AV_LOG_QUIET


class _HardwareFailed(Exception):
    """A hardware decoder opened but gave no frame (its name is the message)."""


def _errors(av: Any) -> type[BaseException]:
    """PyAV's base class of FFmpeg's errors (``av.error.FFmpegError``; ``av.AVError``
    before PyAV 8)."""
    error: type[BaseException] = getattr(getattr(av, "error", None), "FFmpegError", None) or av.AVError
    return error


def open(  # mirrors builtins.open
    path: str | os.PathLike[str],
    *,
    hwdec: str = "auto",
    threads: int | None = None,
    cancel: threading.Event | None = None,
) -> Video:
    """Open a video file (any container and codec FFmpeg reads).

    Args:
        path: The file; a URL only when written as one (``scheme://...``).
        hwdec: ``"auto"``: decode in hardware where the platform has a decoder for the
            codec (Raspberry Pi's ``h264_v4l2m2m``), falling back to software with one
            warning; ``"none"``: software only.
        threads: Decoder threads (default: one per core and one more).
        cancel: For a FIFO (a named pipe), which is read as it comes: an Event that,
            once set, ends the wait for its writer with TimeoutError (Ctrl-C always
            does, with KeyboardInterrupt).

    Returns:
        The open :class:`Video`; close it (or use ``with``).

    Raises:
        ImportError: PyAV is missing.
        FileNotFoundError: No such file.
        TimeoutError: ``cancel`` was set while waiting for a FIFO's writer.
        TypeError: ``path`` is not a path (bytes, a number...).
        VideoError: FFmpeg cannot open it, it has no video stream, or no decoder.
    """
    return Video(path, hwdec=hwdec, threads=threads, cancel=cancel)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """True for ``scheme://...``: what FFmpeg may fetch over the network. Anything else is
    a local path, even one FFmpeg would read as a protocol (a folder named ``http:``)."""
    return _URL.match(path) is not None


def _location(path: str) -> str:
    """What FFmpeg is given for ``path``: a URL as it is, a local file as ``file:`` and
    its absolute path (so no part of a file name is taken for a protocol)."""
    return path if is_url(path) else "file:" + os.path.abspath(path)


def _check_path(path: object) -> str:
    """``path`` as a str, or a one-line TypeError naming what was given instead."""
    if isinstance(path, (bytes, bytearray, memoryview)):
        raise TypeError("a video is opened by its path (str or os.PathLike), not by bytes; write them to a file first")
    try:
        text = os.fspath(path)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"a video is opened by its path (str or os.PathLike), not {type(path).__name__}") from None
    if not isinstance(text, str):
        raise TypeError(f"a video is opened by its path (str or os.PathLike), not {type(text).__name__}")
    return text


def _is_fifo(path: str) -> bool:
    try:
        return not is_url(path) and stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _wait_for_writer(path: str, cancel: threading.Event | None) -> int:
    """Open the FIFO ``path`` and wait until a writer has written (or come and gone).

    FFmpeg opening a FIFO itself would wait for a writer in C, deaf to Ctrl-C and to
    any deadline; here the wait is a poll, a tenth of a second at a time, that Ctrl-C
    interrupts and ``cancel`` ends. The descriptor (blocking again) is returned for
    FFmpeg's ``pipe:`` protocol: a writer that already left has left its bytes in it.

    Raises:
        TimeoutError: ``cancel`` was set before anything was written.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        while not poll.poll(100):
            if cancel is not None and cancel.is_set():
                raise TimeoutError(errno.ETIMEDOUT, "nothing was written to the FIFO in time", path)
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_error(path: str, e: BaseException) -> BaseException:
    """What FFmpeg's failure to open ``path`` is for the user: Ctrl-C (FFmpeg turns the
    interrupted system call into an error of its own), or one VideoError line."""
    code = getattr(e, "errno", None)
    if code == errno.EINTR:
        return KeyboardInterrupt()
    if code == errno.EBUSY and not is_url(path):
        # FFmpeg's demuxers (y4m) answer EBUSY for a picture size they refuse
        return VideoError(path, f"not a video FFmpeg can read (its header is invalid{_y4m_size(path)})")
    return VideoError(path, f"not a video FFmpeg can read ({_reason(e)})")


def _y4m_size(path: str) -> str:
    """``: picture size WxH`` from a YUV4MPEG2 header, or nothing."""
    try:
        with builtins.open(path, "rb") as f:
            header = f.readline(256).split()
    except OSError:
        return ""
    if not header or header[0] != b"YUV4MPEG2":
        return ""
    size = {t[:1]: t[1:].decode("ascii", "replace") for t in header[1:] if t[:1] in (b"W", b"H")}
    return f": YUV4MPEG2 picture size {size.get(b'W', '?')}x{size.get(b'H', '?')}"


class _Reader:
    """One pass over a video file: its own container, decoders and position.

    Every step holds :attr:`lock`, and so does :meth:`close`: a reader closed from
    another thread (its Video's close()) never frees FFmpeg's state under a decode.
    """

    def __init__(self, av: Any, path: str, hwdec: str, threads: int | None, cancel: threading.Event | None) -> None:
        self.path, self.lock, self.closed, self.errors = path, threading.Lock(), False, 0
        # a FIFO is opened here and handed to FFmpeg as pipe:FD (see _wait_for_writer)
        self._fd = _wait_for_writer(path, cancel) if _is_fifo(path) else None
        location = f"pipe:{self._fd}" if self._fd is not None else _location(path)
        try:
            self.container = av.open(location)
        except _errors(av) as e:
            self._close_fd()
            raise _open_error(path, e) from None
        try:
            self._setup(av, hwdec, threads)
        except BaseException:
            self.close()
            raise

    def _setup(self, av: Any, hwdec: str, threads: int | None) -> None:
        container = self.container
        videos = list(container.streams.video)
        if not videos:
            raise VideoError(self.path, "has no video stream")
        self.stream = stream = videos[0]
        audios = list(container.streams.audio)
        self.audio = audios[0] if audios else None
        rate = stream.average_rate or getattr(stream, "guessed_rate", None)
        self.fps = float(rate) if rate else 0.0
        self._time_base = float(stream.time_base) if stream.time_base else 0.0
        self.decoder, self.why = _open_decoder(av, stream, hwdec, threads, self.path)
        self._packets = container.demux(*([stream] + ([self.audio] if self.audio is not None else [])))
        self._pending: list[tuple[str, Any, float]] = []
        self._start: float | None = None  # the first video frame's time
        self._last = -1.0

    def first(self) -> Any:
        """Decode the first video frame (kept for :meth:`items`) and return it.

        Raises:
            _HardwareFailed: A hardware decoder gave no frame.
            VideoError: No frame at all.
        """
        found = self._next_video()
        if found is None and self.decoder is not self.stream.codec_context:
            raise _HardwareFailed(self.decoder.name)
        if found is None:
            codec = self.stream.codec_context.name if self.stream.codec_context is not None else "unknown"
            raise VideoError(self.path, f"no video frame could be decoded ({codec})")
        return found[1]

    def close(self) -> None:
        """Close the file (waiting for a decode step under way); safe twice."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            container = getattr(self, "container", None)
            if container is not None:
                container.close()
            self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def items(self) -> Iterator[tuple[str, Any, float]]:
        """Decoded frames in decoding order (see :meth:`Video.frames`)."""
        while True:
            with self.lock:
                if self.closed:
                    raise ValueError(f"{self.path}: the video was closed while it was read")
                if not self._pending:
                    self._next_video()
                if not self._pending:
                    return
                item = self._pending.pop(0)
            yield item

    def _next_video(self) -> tuple[str, Any, float] | None:
        """Decode until the next video frame is in ``_pending``; return it, or None at the end."""
        av = import_av()
        while True:
            try:
                packet = next(self._packets)
            except StopIteration:
                packet = None
            except _errors(av):
                self.errors += 1
                packet = None
            if packet is None:
                # the end: what the decoders still hold comes out
                found = self._decode(self.decoder, None, video=True)
                if self.audio is not None:
                    self._decode(self.audio.codec_context, None, video=False)
                return found
            if packet.stream is self.stream:
                if packet.size == 0:
                    continue  # demux()'s end-of-stream marker: flushed above
                found = self._decode(self.decoder, packet, video=True)
                if found is not None:
                    return found
            elif packet.size:
                self._decode(self.audio.codec_context if self.audio is not None else None, packet, video=False)

    def _decode(self, ctx: Any, packet: Any, *, video: bool) -> tuple[str, Any, float] | None:
        av = import_av()
        if ctx is None:
            return None
        try:
            frames = ctx.decode(packet)
        except (_errors(av), ValueError) as e:
            if packet is None and isinstance(e, _errors(av)) and "End of file" in str(e):
                return None
            self.errors += 1
            return None
        first = None
        for frame in frames:
            t = self._time(frame, video)
            if t is None:
                continue
            item = ("video" if video else "audio", frame, t)
            self._pending.append(item)
            if video and first is None:
                first = item
        return first

    def _time(self, frame: Any, video: bool) -> float | None:
        """Seconds from the first video frame (None: an audio frame before it has a time)."""
        pts = frame.pts
        if video:
            base = self._time_base
            if pts is None or not base:
                t = self._last + (1 / self.fps if self.fps else 1 / 25) if self._last >= 0 else 0.0
                t += self._start or 0.0
            else:
                t = pts * base
            if self._start is None:
                self._start = t
            t -= self._start
            if t <= self._last:  # a timestamp out of order: keep the frames in order
                t = self._last + 1e-6
            self._last = t
            return t
        if pts is None or self.audio is None or not self.audio.time_base:
            return None
        t = float(pts * self.audio.time_base)
        return t - (self._start if self._start is not None else t)


def choose_decoder(codec: str, hwdec: str, available: Any) -> tuple[str | None, str]:
    """The hardware decoder to try for ``codec`` (None: software) and why, in one line."""
    if hwdec == "none":
        return None, "hwdec is none"
    return _v4l2.choose(codec, available)


def _open_decoder(av: Any, stream: Any, hwdec: str, threads: int | None, path: str) -> tuple[Any, str]:
    """The decoding context and why it was chosen: a hardware one where asked and a
    device decodes the codec, else the stream's own, with frame threads."""
    software = stream.codec_context
    if software is None:
        raise VideoError(path, "has a video codec FFmpeg cannot decode")
    name, why = choose_decoder(software.name, hwdec, av.codecs_available)
    if name is not None:
        try:
            ctx = av.CodecContext.create(name, "r")
            if software.extradata:
                ctx.extradata = software.extradata
            ctx.width, ctx.height = software.width, software.height
            ctx.open()
            return ctx, why
        except (_errors(av), ValueError, TypeError, AttributeError) as e:
            why = f"hardware decoder {name} unavailable ({_reason(e)})"
            warnings.warn(f"{path}: {why}; decoding in software", RuntimeWarning, stacklevel=5)
    try:
        software.thread_type = "AUTO"  # frame threads, and slice threads where frames cannot
        # one per core and one more, FFmpeg's own rule for frame threads: a frame
        # thread waiting for its reference keeps no core idle (measured fastest)
        software.thread_count = threads or min((os.cpu_count() or 1) + 1, 16)
    except (AttributeError, ValueError, TypeError):
        pass
    return software, why


class Video:
    """An open video file.

    Iterating gives ``(t, rgb)`` for every frame: its time in seconds from the first
    frame and the picture upright, at its display aspect, as a ``(height, width, 3)``
    uint8 array (a new one each frame: for programs that draw frames their own way;
    :meth:`fbgfx.Screen.play` converts straight into the display's format instead).

    A Video can be read any number of times, by several plays at once: each pass
    (an iteration, a play, a round of a loop) reads the file on its own; the first
    pass uses the decoding started by :func:`open`. Once closed, it raises ValueError.

    Attributes:
        path: The file.
        width: Width of the upright picture as it is shown (after the file's
            display-matrix rotation, as phones record, and its sample aspect ratio:
            a 720x576 16:9 DVD is 1024 wide).
        height: Height of the upright picture.
        fps: Frames per second (the stream's average; 0.0 when unknown).
        duration: Seconds, or None when the file does not say.
        has_audio: Whether the file has an audio stream.
        audio_rate: Its samples per second.
        rotation: Degrees the decoded picture is turned clockwise to stand upright.
        codec: FFmpeg's name of the video codec.
        decoder: The decoder in use (e.g. ``h264`` or ``h264_v4l2m2m``).
        decoder_reason: Why that one, in a line (``/dev/video10 (...) decodes H264``,
            ``no V4L2 memory-to-memory device decodes HEVC``...).
        errors: Damaged packets skipped by the last pass that ended.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        hwdec: str = "auto",
        threads: int | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        if hwdec not in HWDEC:
            raise ValueError(f"hwdec must be one of {', '.join(HWDEC)}, not {hwdec!r}")
        if threads is not None and not (isinstance(threads, int) and 0 < threads <= 64):
            raise ValueError(f"threads must be 1..64, not {threads!r}")
        self.path = _check_path(path)
        av = import_av()
        self._hwdec, self._threads, self._cancel = hwdec, threads, cancel
        self._closed = False
        self._lock = threading.Lock()
        self._fresh: _Reader | None = None  # the pass open() started, until a pass takes it
        self._readers: list[_Reader] = []  # passes under way
        self.errors = 0
        if not is_url(self.path):
            if os.path.isdir(self.path):
                raise VideoError(self.path, "is a directory, not a video")
            if not os.path.exists(self.path):
                raise FileNotFoundError(2, "No such file or directory", self.path)
        try:
            reader = _Reader(av, self.path, hwdec, threads, cancel)
            try:
                first = reader.first()
            except _HardwareFailed as e:  # opened, but decodes nothing: software instead
                reader.close()
                warnings.warn(
                    f"{self.path}: hardware decoder {e} decoded no frame; decoding in software",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._hwdec = "none"
                reader = _Reader(av, self.path, "none", threads, cancel)
                reader.why = f"hardware decoder {e} decoded no frame"
                first = reader.first()
        except _errors(av) as e:
            raise VideoError(self.path, _reason(e)) from None
        self._fresh = reader
        self._describe(reader, first)

    def _describe(self, reader: _Reader, first: Any) -> None:
        """The attributes, from the first pass and its first frame."""
        stream, container = reader.stream, reader.container
        self.has_audio = reader.audio is not None
        sample_rate = getattr(reader.audio.codec_context, "sample_rate", None) if reader.audio is not None else None
        self.audio_rate = int(sample_rate or 48000)
        self.codec = stream.codec_context.name if stream.codec_context is not None else "unknown"
        self.fps = reader.fps
        if container.duration:
            self.duration: float | None = container.duration / 1_000_000
        elif stream.duration and stream.time_base:
            self.duration = float(stream.duration * stream.time_base)
        else:
            self.duration = None
        self.decoder: str = reader.decoder.name
        self.decoder_reason = reader.why
        mp4 = self.path if "mp4" in container.format.name and os.path.isfile(self.path) else None
        self.rotation = _rotation(first, stream, mp4)
        # the picture as shown before it is turned: the coded size at the sample aspect
        self._shown = _display_size(first.width, first.height, _sample_aspect(stream))
        w, h = self._shown
        self.width, self.height = (h, w) if self.rotation // 90 % 2 else (w, h)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def close(self) -> None:
        """Close the file (every pass under way ends with ValueError); safe twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            readers = self._readers + ([self._fresh] if self._fresh is not None else [])
            self._readers, self._fresh = [], None
        for reader in readers:
            reader.close()

    def __enter__(self) -> Video:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.width}x{self.height} {self.fps:g} fps {self.decoder}"
        return f"<Video {self.path!r} {state}>"

    def reopen(self) -> Video:
        """The same file opened again as a Video of its own, with the same options."""
        return Video(self.path, hwdec=self._hwdec, threads=self._threads, cancel=self._cancel)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{self.path}: the Video is closed")

    def _claim(self) -> _Reader:
        """A pass of its own for the caller: open()'s while nobody has taken it, else the
        file read again."""
        with self._lock:
            self._check_open()
            reader, self._fresh = self._fresh, None
        if reader is None:
            reader = _Reader(import_av(), self.path, self._hwdec, self._threads, self._cancel)
        with self._lock:
            if self._closed:
                reader.close()
                self._check_open()
            self._readers.append(reader)
        return reader

    def _release(self, reader: _Reader) -> None:
        with self._lock:
            if reader in self._readers:
                self._readers.remove(reader)
        reader.close()
        self.errors = reader.errors

    # -- decoding ------------------------------------------------------------------------------

    def frames(self) -> Generator[tuple[str, Any, float], None, None]:
        """Decoded frames in decoding order: ``("video", av.VideoFrame, t)`` and
        ``("audio", av.AudioFrame, t)``, ``t`` in seconds from the first video frame.

        Each call is a pass of its own over the whole file. A damaged packet is
        skipped (counted in ``errors``); the file ends where its data ends.

        Raises:
            ValueError: The Video is closed (before or during the pass).
        """
        self._check_open()  # at the call, not at the first next()
        return self._pass()

    def _pass(self) -> Generator[tuple[str, Any, float], None, None]:
        reader = self._claim()
        try:
            yield from reader.items()
        finally:
            self._release(reader)

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        self._check_open()
        return self._rgb_frames()

    def _rgb_frames(self) -> Iterator[tuple[float, np.ndarray]]:
        turn = self.rotation // 90
        w, h = self._shown
        for kind, frame, t in self.frames():
            if kind != "video":
                continue
            if (frame.width, frame.height) != (w, h):
                frame = frame.reformat(width=w, height=h)
            rgb = frame.to_ndarray(format="rgb24")
            yield t, np.ascontiguousarray(np.rot90(rgb, -turn)) if turn else rgb


def _sample_aspect(stream: Any) -> float:
    """Width of a pixel over its height: the container's word first, then the codec's (as
    FFmpeg's ``av_guess_sample_aspect_ratio``); 1.0 when neither says."""
    for owner in (stream, stream.codec_context):
        ratio = getattr(owner, "sample_aspect_ratio", None)
        if ratio is not None and ratio.numerator > 0 and ratio.denominator > 0:
            return float(ratio)
    return 1.0


def _display_size(width: int, height: int, sar: float) -> tuple[int, int]:
    """The coded ``width`` x ``height`` at pixel aspect ``sar``: the width stretched (or
    the height, for pixels taller than wide), as players show it."""
    if not 0.01 <= sar <= 100 or abs(sar - 1.0) < 1e-6:
        return width, height
    if sar > 1:
        return max(1, round(width * sar)), height
    return width, max(1, round(height / sar))


def _rotation(frame: Any, stream: Any, mp4: str | None) -> int:
    """Degrees clockwise (0, 90, 180, 270) that stand the decoded picture upright, from
    the display matrix: PyAV >= 14 has ``frame.rotation``; with older ones (Debian's
    PyAV 10), the frame's side data, the track header of an MP4/MOV file ``mp4``, or
    the stream's ``rotate`` tag."""
    angle = getattr(frame, "rotation", None)  # counter-clockwise, as FFmpeg's display matrix
    if angle is None:
        angle = _side_data_angle(frame)
    if angle is None and mp4 is not None:
        angle = _mp4_angle(mp4)
    if angle is None:
        tag = (stream.metadata or {}).get("rotate")  # clockwise
        try:
            angle = -float(tag) if tag is not None else 0.0
        except ValueError:
            angle = 0.0
    return int(round(-float(angle) / 90)) % 4 * 90


def _side_data_angle(frame: Any) -> float | None:
    """The counter-clockwise angle of a frame's display matrix side data, if any."""
    try:
        for data in frame.side_data:
            if "DISPLAYMATRIX" in str(getattr(data, "type", "")).upper():
                m = np.frombuffer(bytes(data), np.int32)[:9].astype(np.float64)
                return _matrix_angle(m[0], m[1], m[3], m[4])
    except (AttributeError, TypeError, ValueError):
        return None
    return None


def _matrix_angle(a: float, b: float, c: float, d: float) -> float | None:
    """The counter-clockwise angle of a display matrix's first two rows (as FFmpeg's
    ``av_display_rotation_get``)."""
    scale0, scale1 = math.hypot(a, c), math.hypot(b, d)
    if not scale0 or not scale1:
        return None
    return -math.degrees(math.atan2(b / scale1, a / scale0))


def _mp4_angle(path: str) -> float | None:
    """The display matrix angle of an MP4/MOV file's first video track, read from its
    track header (``moov/trak/tkhd``, where phones record it); None when absent."""
    try:
        with builtins.open(path, "rb") as f:
            end = os.fstat(f.fileno()).st_size
            for moov in _boxes(f, 0, end, b"moov"):
                for trak in _boxes(f, *moov, b"trak"):
                    handler = None
                    for mdia in _boxes(f, *trak, b"mdia"):
                        for hdlr in _boxes(f, *mdia, b"hdlr"):
                            f.seek(hdlr[0] + 8)
                            handler = f.read(4)
                    if handler != b"vide":
                        continue
                    for tkhd in _boxes(f, *trak, b"tkhd"):
                        f.seek(tkhd[0])
                        version = f.read(1)[0]
                        f.seek(tkhd[0] + 4 + (32 if version == 1 else 20) + 16)
                        m = struct.unpack(">9i", f.read(36))
                        return _matrix_angle(m[0], m[1], m[3], m[4])
    except (OSError, IndexError, struct.error):
        return None
    return None


def _boxes(f: Any, start: int, end: int, kind: bytes) -> Iterator[tuple[int, int]]:
    """(payload start, end) of each ISO-BMFF box of type ``kind`` in ``[start, end)``."""
    at = start
    while at + 8 <= end:
        f.seek(at)
        size, name = struct.unpack(">I4s", f.read(8))
        header = 8
        if size == 1:
            size = struct.unpack(">Q", f.read(8))[0]
            header = 16
        elif size == 0:
            size = end - at
        if size < header or at + size > end:
            return
        if name == kind:
            yield at + header, at + size
        at += size


def _reason(e: BaseException) -> str:
    """FFmpeg's words for an error, without PyAV's call details."""
    text = getattr(e, "strerror", None) or str(e)
    return " ".join(str(text).split())
