"""``fbgfx play``: video files (FFmpeg), an animated GIF/APNG/WebP (Pillow), or raw video
frames from stdin, all through one player (:class:`fbgfx.video.Player`)."""

from __future__ import annotations

import argparse
import io
import os
import stat
import sys
from typing import Any

from ..screen import Screen
from ._args import add_duration, add_fit, add_rotate, parse_size
from ._box import in_layer, on_screen, parse_box
from ._clock import now
from ._command import CliError, Command, Context
from ._device import open_device, saved_screen, screen_size
from ._pictures import image_format, read_fifo, reading
from ._playback import Status

__all__ = ["COMMAND", "play_on"]

# Slowest frame rate --fps takes: a frame every 1000 s.
_MIN_FPS = 0.001
_RAW_PIX_FMTS = ("rgb24", "bgra", "rgb565le")  # fbgfx.video.RAW_PIX_FMTS, without importing it


def _fps(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected frames per second, got {text!r}") from None
    # Below _MIN_FPS a frame would last longer than a platform sleep can count; 0: as fast as possible.
    if not (value == 0 or _MIN_FPS <= value <= 1000):
        raise argparse.ArgumentTypeError(f"--fps must be 0 or {_MIN_FPS:g}..1000, got {text!r}")
    return value


def _arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("files", nargs="+", metavar="FILE", help="video files (a playlist), animations, or - for raw frames on stdin")
    add("--fps", type=_fps, metavar="N", help="frames per second (default: the file's timing; 30 for stdin; 0: max)")
    add("--loop", action="store_true", help="play the file(s) again and again (not stdin)")
    add_fit(parser)
    add_rotate(parser)
    layer = "in a layer: on a display plane where the display has one free, else composed by fbgfx; says which"
    add("--box", metavar="X0,Y0,X1,Y1", help=f"play in this rectangle of the screen (X1, Y1 exclusive), {layer}")
    add("--size", metavar="WxH", help="frame size of raw frames on stdin")
    add("--pix-fmt", metavar="FMT", help=f"pixel format of raw frames: {', '.join(_RAW_PIX_FMTS)} (default rgb24)")
    add_duration(parser, "stop after this many seconds")
    add("--no-audio", dest="audio", action="store_false", help="play a video without its sound")
    add("--audio-device", default="default", metavar="NAME", help="ALSA device for the sound")
    hwdec = "auto: in hardware where a V4L2 decoder takes the codec, else software (default); none: software"
    add("--hwdec", choices=("auto", "none"), default="auto", help=hwdec)
    add("-v", "--verbose", action="store_true", help="say which decoder each video file gets and why")
    add("--stats", action="store_true", help="print the summary line (frames, fps, drops) also off a terminal")


def run(args: argparse.Namespace, context: Context) -> int:
    """Play video files, animations or raw frames from stdin, until they end or --duration."""
    from .. import video  # noqa: PLC0415 (the other commands never load the video layer)

    _check(args)
    stop = None if args.duration is None else now() + args.duration
    sources = [_raw_source(video, args)] if args.files == ["-"] else _file_sources(video, args, stop)
    fps = sources[0].fps if args.files == ["-"] else args.fps  # raw frames: at their rate
    names = ("fit", "loop", "duration", "audio", "hwdec", "audio_device")  # PlayOptions' names
    options = video.PlayOptions(fps=fps, **{name: getattr(args, name) for name in names})
    try:
        with open_device(args) as fb:
            box = None if args.box is None else parse_box(args.box, *screen_size(fb, args.rotate))
            with saved_screen(fb, args.out, context, args.rotate) as screen:
                where = on_screen(video, screen) if box is None else in_layer(video, fb, screen, box)
                with where as make_player:
                    player = make_player(sources, options)
                    play_on(player.screen, player, Status(context, args.stats), args.verbose)
    finally:
        _close(sources)
    return 0


def play_on(screen: Screen, player: Any, status: Status, verbose: bool) -> None:
    """Run ``player`` on ``screen`` with the live status line (``--verbose``: the decoders)."""
    del screen  # the player's; named for the tests that stand in for the drawing
    try:
        player.run(progress=status.frame, opened=_tell_decoder if verbose else None)
    finally:
        status.finish()


def _check(args: argparse.Namespace) -> None:
    """The options that do not fit together, refused before anything opens."""
    if "-" in args.files and len(args.files) > 1:
        raise CliError("- (raw frames on stdin) plays alone, not in a playlist")
    if args.pix_fmt is not None and args.files != ["-"]:
        raise CliError("--pix-fmt is for raw frames on stdin (FILE '-'); a video or animation file knows its format")
    if args.size and args.files != ["-"]:
        raise CliError("--size is for raw frames on stdin (FILE '-'); a video or animation file knows its size")
    if args.out:
        image_format(args.out)
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise CliError(f"--out {args.out}: the folder {folder} does not exist")


def _file_sources(video: Any, args: argparse.Namespace, stop: float | None) -> list[Any]:
    """The playlist: animations through Pillow, the rest through FFmpeg; each file checked
    before the screen changes (a FIFO or URL when its turn comes: probing takes its bytes)."""
    files: list[str] = args.files
    # A lone FIFO is read whole first, within --duration (a picture or an animation).
    fifo = read_fifo(files[0], stop, "an animation") if len(files) == 1 else None
    if fifo is not None:
        with reading(files[0], "an image or animation"):
            return [video.AnimationSource(files[0], fifo, loop=args.loop)]
    sources: list[Any] = []
    try:
        for path in files:
            if _read_once(video, path):
                sources.append(path)  # the player waits for a FIFO's writer no longer than --duration
            elif _is_picture(video, path):
                with reading(path, "an image or animation"):
                    sources.append(video.AnimationSource(path, loop=args.loop))
            else:
                _import_av(video, path)
                sources.append(video.Video(path, hwdec=args.hwdec))
    except BaseException:  # the files checked before the one refused
        _close(sources)
        raise
    return sources


def _close(sources: list[Any]) -> None:
    """Close the playlist's files now (Debian's PyAV 10 keeps a dropped Video's open until a collection)."""
    for source in sources:
        if hasattr(source, "close"):
            source.close()


def _import_av(video: Any, path: str) -> None:
    try:
        video.import_av()  # FFmpeg's own log lines stay quiet (they would break the one-line errors)
    except ImportError as e:
        raise CliError(f"{path}: {e}") from None


def _tell_decoder(video: Any) -> None:
    """--verbose: the decoder a file got, and why."""
    print(f"fbgfx: {video.path}: decoder {video.decoder} ({video.decoder_reason})", file=sys.stderr, flush=True)


def _read_once(video: Any, path: str) -> bool:
    """True for a FIFO or URL: probing it would take what the play needs."""
    try:
        return bool(video.is_url(path)) or stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _is_picture(video: Any, path: str) -> bool:
    """True for a file Pillow reads as a picture or animation (GIF, APNG, WebP, ...)."""
    try:
        return bool(video.is_picture(path))
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not a video or animation") from None


def _raw_source(video: Any, args: argparse.Namespace) -> Any:
    """Raw frames from stdin."""
    if not args.size:
        raise CliError("raw frames on stdin need --size WxH (and --pix-fmt, default rgb24)")
    size = parse_size(args.size)
    pix_fmt = args.pix_fmt or "rgb24"
    if pix_fmt not in _RAW_PIX_FMTS:
        raise CliError(f"unknown --pix-fmt {pix_fmt!r}; use one of: {', '.join(_RAW_PIX_FMTS)}")
    if args.loop:
        raise CliError("--loop cannot rewind stdin; loop the producer instead (e.g. ffmpeg -stream_loop -1)")
    if sys.stdin is None or sys.stdin.isatty():
        raise CliError(
            "stdin is a terminal: pipe raw frames in, "
            "e.g. ffmpeg ... -f rawvideo -pix_fmt rgb24 - | fbgfx play - --size WxH"
        )
    fps = 30.0 if args.fps is None else args.fps
    return video.RawSource(io.FileIO(sys.stdin.fileno(), "rb", closefd=False), size, pix_fmt, fps)


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
