"""``fbgfx play``: video files (through :mod:`fbgfx.video`), an animated GIF/APNG/WebP
at its own pace (through Pillow), or raw video frames from stdin."""

from __future__ import annotations

import argparse
import io
import itertools
import os
import stat
import sys
import threading
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np
from PIL import Image, ImageSequence

from ..convert import from_native, has_alpha
from ..pixelformat import FORMATS
from ..screen import Screen
from ._common import (
    TIMED_OUT,
    CliError,
    Command,
    Context,
    Prefetch,
    Status,
    add_fit,
    add_rotate,
    describe_error,
    earlier,
    image_format,
    next_before,
    now,
    open_device,
    parse_size,
    read_fifo,
    reading,
    saved_screen,
    seconds,
    wait_until,
)

__all__ = ["COMMAND", "RAW_PIX_FMTS", "play_frames"]

#: Raw pixel formats ``play -`` reads, by ffmpeg's ``-pix_fmt`` name:
#: (bytes per pixel, the fbgfx format of the same memory layout or None for plain RGB).
RAW_PIX_FMTS: dict[str, tuple[int, str | None]] = {
    "rgb24": (3, None),
    "bgra": (4, "XRGB8888"),
    "rgb565le": (2, "RGB565"),
}

#: A frame and how long it stays (seconds; 0: as fast as possible).
Frame = tuple[Any, float]

# How much decoded animation `play --loop` keeps in memory instead of decoding again.
_CACHE_BYTES = 512 << 20
_F_SETPIPE_SZ = 1031
# Frames `play` reads and decodes ahead of the one on screen.
_PREFETCH = 2
# Slowest frame rate --fps takes: a frame every 1000 s.
_MIN_FPS = 0.001


def _fps(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected frames per second, got {text!r}") from None
    # Below _MIN_FPS a frame would last longer than a platform sleep can count; 0
    # means as fast as possible.
    if not (value == 0 or _MIN_FPS <= value <= 1000):
        raise argparse.ArgumentTypeError(f"--fps must be 0 or {_MIN_FPS:g}..1000, got {text!r}")
    return value


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="video files (several: a playlist), an animated GIF/APNG/WebP, or - for raw frames on stdin",
    )
    parser.add_argument(
        "--fps",
        type=_fps,
        metavar="N",
        help="frames per second (default: the file's own timing; 30 for stdin; 0: as fast as possible)",
    )
    parser.add_argument("--loop", action="store_true", help="play the file(s) again and again (not stdin)")
    add_fit(parser)
    add_rotate(parser)
    parser.add_argument("--size", metavar="WxH", help="frame size of raw frames on stdin")
    parser.add_argument(
        "--pix-fmt",
        metavar="FMT",
        help=f"pixel format of raw frames: {', '.join(RAW_PIX_FMTS)} (default rgb24)",
    )
    parser.add_argument("--duration", type=seconds, metavar="S", help="stop after this many seconds")
    parser.add_argument("--no-audio", dest="audio", action="store_false", help="play a video without its sound")
    parser.add_argument("--audio-device", default="default", metavar="NAME", help="ALSA device for the sound")
    parser.add_argument(
        "--hwdec",
        choices=("auto", "none"),
        default="auto",
        help="auto: decode video in hardware where the platform can (e.g. Raspberry Pi's h264_v4l2m2m), "
        "else software (default); none: software only",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="say which decoder each video file gets (hardware or software) and why",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="print the summary line (frames, fps, drops) even when stderr is not a terminal",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    """Play video files, an animation file or raw frames from stdin, until they end or --duration."""
    files: list[str] = args.files
    if "-" in files and len(files) > 1:
        raise CliError("- (raw frames on stdin) plays alone, not in a playlist")
    if args.pix_fmt is not None and files != ["-"]:
        raise CliError("--pix-fmt is for raw frames on stdin (FILE '-'); a video or animation file knows its format")
    _check_out(args.out)
    args.file = files[0]
    stop = None if args.duration is None else now() + args.duration
    # A FIFO is read whole first, within --duration (opening one waits for a writer,
    # and a probe would take bytes the player then misses): pictures and animations.
    fifo = read_fifo(args.file, stop, "an animation") if args.file != "-" and len(files) == 1 else None
    if fifo is None and args.file != "-" and (len(files) > 1 or not _is_picture(args.file)):
        if args.size:
            raise CliError("--size is for raw frames on stdin (FILE '-'); a video file knows its size")
        return _play_videos(args, context)
    if args.file == "-":
        source = _raw_source(args)
    else:
        if args.size:
            raise CliError("--size is for raw frames on stdin (FILE '-'); an animation file knows its size")
        source = _animation_source(args, fifo)
    # Read and decode in a thread (both release the GIL) while frames are shown.
    frames = Prefetch(source, _PREFETCH, name="fbgfx-play-reader")
    try:
        first = frames.get(stop)  # fail on bad input before the screen changes
        if first is TIMED_OUT:  # --duration ended before a frame came
            return 0
        if first is None:
            raise CliError("stdin had no frames" if args.file == "-" else f"{args.file}: no frames")
        with open_device(args) as fb:
            with saved_screen(fb, args.out, context, args.rotate) as screen:
                play_frames(screen, args, first, frames, stop, context)
    finally:
        frames.close()
    return 0


def _check_out(out: str | None) -> None:
    """--out into a folder that is not there is refused before anything plays."""
    if not out:
        return
    image_format(out)
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise CliError(f"--out {out}: the folder {folder} does not exist")


def _is_picture(path: str) -> bool:
    """True for a file Pillow reads as a picture or animation (GIF, APNG, WebP, ...)."""
    try:
        with Image.open(path) as im:
            return im.format != "MPEG"  # Pillow names MPEG files but cannot decode them
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not a video or animation") from None
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
        return False


_PLAY_OPTIONS = ("fit", "loop", "duration", "audio", "fps", "hwdec", "audio_device")


def _play_videos(args: argparse.Namespace, context: Context) -> int:
    """Video files through FFmpeg: opened (all checked) before the screen changes."""
    # Imported here: the other commands never load the video layer.
    from .. import video

    try:
        video.import_av()  # FFmpeg's own log lines stay quiet (they would break the one-line errors)
    except ImportError as e:
        raise CliError(f"{args.file}: {e}") from None
    first = _open_first(video, args)
    try:
        for path in args.files[1:]:
            if not _read_once(path):  # a FIFO or a URL is opened when its turn comes
                video.Video(path, hwdec="none").close()
        with open_device(args) as fb:
            with saved_screen(fb, args.out, context, args.rotate) as screen:
                status = Status(context, args.stats)
                try:
                    # the options of `fbgfx play` have PlayOptions' names
                    options = video.PlayOptions(**{name: getattr(args, name) for name in _PLAY_OPTIONS})
                    player = video.Player(screen, [first, *args.files[1:]], options)
                    player.run(progress=status.frame, opened=_tell_decoder if args.verbose else None)
                finally:
                    status.finish()
    finally:
        first.close()
    return 0


def _tell_decoder(video: Any) -> None:
    """--verbose: the decoder a file got, and why."""
    print(f"fbgfx: {video.path}: decoder {video.decoder} ({video.decoder_reason})", file=sys.stderr, flush=True)


def _read_once(path: str) -> bool:
    """True for a FIFO or URL: probing it would take what the play needs."""
    from ..video import is_url

    try:
        return is_url(path) or stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _open_first(video: Any, args: argparse.Namespace) -> Any:
    """The first video, opened before the screen changes; a FIFO waits for its writer
    no longer than --duration."""
    cancel = threading.Event()
    timer = None if args.duration is None else threading.Timer(args.duration, cancel.set)
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        return video.Video(args.file, hwdec=args.hwdec, cancel=cancel)
    except TimeoutError:
        raise CliError(f"{args.file}: nothing was written to the FIFO before --duration ended") from None
    finally:
        if timer is not None:
            timer.cancel()


def play_frames(
    screen: Screen,
    args: argparse.Namespace,
    first: Frame,
    frames: Iterator[Frame],
    stop: float | None = None,
    context: Context | None = None,
) -> None:
    """Show ``first`` and the rest of ``frames`` on time, until they end or ``stop``.

    A frame whose time is over is dropped to keep pace, but never the last one.
    ``stop`` (see :func:`~fbgfx.cli._common.now`) defaults to ``--duration`` from
    now; it also cuts short the wait for a slow frame, whether it is slow to come or
    long to show.
    """
    status = Status(context or Context(), args.stats)
    clock = now()  # when the current frame is due
    if stop is None and args.duration is not None:
        stop = clock + args.duration
    item: Frame | None = first
    unread = object()
    upcoming: Any = unread  # looked ahead at only for a late frame: the last one is never dropped
    try:
        while item is not None:
            frame, period = item
            current = now()
            if stop is not None and current >= stop:
                break
            late = bool(period) and current >= clock + period and status.shown > 0
            if late and upcoming is unread:
                upcoming = next_before(frames, stop)
                if upcoming is TIMED_OUT:
                    break
            if late and upcoming is not None:
                status.frame(dropped=True)  # its time is over: skip it to catch up
            else:
                if period and current < clock:
                    wait_until(earlier(clock, stop))
                    if stop is not None and now() >= stop:
                        break
                screen.present(frame, fit=args.fit)
                if not status.shown:
                    clock = status.start = now()  # time runs from the first picture
                status.frame(dropped=False)
            if period:
                clock += period
                # After a long stall (a paused pipe), start timing afresh instead of
                # dropping every frame until the schedule is met.
                if now() - clock > 1.0:
                    clock = now()
            following = next_before(frames, stop) if upcoming is unread else upcoming
            upcoming = unread
            if following is TIMED_OUT:
                break
            item = following
        else:
            # The last frame lasts its time too (so a 2 s animation takes 2 s).
            wait_until(earlier(clock, stop))
    finally:
        status.finish()


def _animation_source(args: argparse.Namespace, data: bytes | None = None) -> Iterator[Frame]:
    """(RGB array, seconds) for every frame of an image file (or of ``data``, its bytes
    read from a FIFO), looping when asked."""
    path: str = args.file
    with reading(path, "an image or animation"):
        im = Image.open(path if data is None else io.BytesIO(data))
    fixed = None if args.fps is None else (1.0 / args.fps if args.fps else 0.0)

    def decode() -> Iterator[Frame]:
        try:
            for frame in ImageSequence.Iterator(im):
                duration = frame.info.get("duration") or 0
                # Browsers show GIF frames of 0..10 ms for 100 ms; so do we.
                period = fixed if fixed is not None else (duration / 1000 if duration > 10 else 0.1)
                yield _frame_rgb(frame), period
        except (OSError, SyntaxError, ValueError, EOFError) as e:
            raise CliError(f"{path}: cannot decode the animation ({describe_error(e)})") from None

    def frames() -> Iterator[Frame]:
        cache: list[Frame] | None = [] if args.loop else None
        size = 0
        try:
            for item in decode():
                if cache is not None:
                    size += item[0].nbytes
                    cache = cache if size <= _CACHE_BYTES else None
                    if cache is not None:
                        cache.append(item)
                yield item
            while args.loop:
                yield from cache if cache is not None else decode()
        finally:
            im.close()

    return frames()


def _frame_rgb(frame: Image.Image) -> np.ndarray:
    """One animation frame as an RGB array of its own (the next frame reuses ``frame``)."""
    if has_alpha(frame):
        rgba = frame.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
        return np.asarray(Image.alpha_composite(base, rgba).convert("RGB"))
    return np.asarray(frame.convert("RGB"))


def _raw_source(args: argparse.Namespace) -> Iterator[Frame]:
    """Raw frames from stdin, read straight into preallocated buffers."""
    if not args.size:
        raise CliError("raw frames on stdin need --size WxH (and --pix-fmt, default rgb24)")
    width, height = parse_size(args.size)
    pix_fmt = args.pix_fmt or "rgb24"
    if pix_fmt not in RAW_PIX_FMTS:
        raise CliError(f"unknown --pix-fmt {pix_fmt!r}; use one of: {', '.join(RAW_PIX_FMTS)}")
    if args.loop:
        raise CliError("--loop cannot rewind stdin; loop the producer instead (e.g. ffmpeg -stream_loop -1)")
    if sys.stdin is None or sys.stdin.isatty():
        raise CliError(
            "stdin is a terminal: pipe raw frames in, "
            "e.g. ffmpeg ... -f rawvideo -pix_fmt rgb24 - | fbgfx play - --size WxH"
        )
    bpp, fmt_name = RAW_PIX_FMTS[pix_fmt]
    frame_bytes = width * height * bpp
    fps = 30.0 if args.fps is None else args.fps
    period = 1.0 / fps if fps else 0.0
    fd = sys.stdin.fileno()
    try:  # a bigger pipe means fewer wake-ups per frame; not every fd is a pipe
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
    except (OSError, ImportError):
        pass
    stream = io.FileIO(fd, "rb", closefd=False)
    # A ring of buffers, read into in turn: enough that none is overwritten while it is
    # queued (_PREFETCH), being read into, looked ahead at, shown, or kept by the Screen
    # as its last frame.
    ring = [np.empty(frame_bytes, np.uint8) for _ in range(_PREFETCH + 4)]
    converters = [_raw_converter(buffer, width, height, fmt_name) for buffer in ring]

    def frames() -> Iterator[Frame]:
        for index in itertools.cycle(range(len(ring))):
            view, convert = ring[index].data, converters[index]
            got = 0
            while got < frame_bytes:
                n = stream.readinto(view[got:])
                if not n:
                    break
                got += n
            if got == 0:
                return
            if got < frame_bytes:
                raise CliError(
                    f"stdin ended mid-frame: got {got} of {frame_bytes} bytes — check --size/--pix-fmt "
                    f"({width}x{height} {pix_fmt} is {frame_bytes} bytes a frame)"
                )
            yield convert(), period

    return frames()


def _raw_converter(buffer: np.ndarray, width: int, height: int, fmt_name: str | None) -> Callable[[], np.ndarray]:
    """A function giving the frame in ``buffer`` as RGB (a view for rgb24)."""
    if fmt_name is None:
        rgb = buffer.reshape(height, width, 3)
        return lambda: rgb
    fmt = FORMATS[fmt_name]
    native = buffer.view(fmt.dtype).reshape(height, width)
    return lambda: from_native(native, fmt)


COMMAND = Command(
    name="play",
    help="play video files, an animation, or raw video frames from stdin",
    description="Play video files (any container and codec FFmpeg reads; needs fbgfx[video]) with their "
    "sound, several as a playlist; an animated GIF/APNG/WebP at its own frame rate; or raw frames from stdin "
    "('-'), e.g. ffmpeg -i movie.mp4 -f rawvideo -pix_fmt rgb24 - | fbgfx play - --size 800x480 --fps 25. "
    "Late frames are dropped to keep time.",
    add_arguments=_arguments,
    run=run,
    out=True,
)
