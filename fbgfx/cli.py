"""``fbgfx``: everyday framebuffer tools (info, show, play, grab, mode, demo).

Run ``python -m fbgfx --help`` or ``fbgfx COMMAND --help``. Every command takes
``-d/--device`` (``/dev/fbN``, ``N`` or ``virtual:WxH[:FORMAT]``; default
``$FRAMEBUFFER``, else ``/dev/fb0``). Bad input gives one ``fbgfx: error: ...`` line on
stderr and exit status 2; Ctrl-C restores the screen and exits with 130.
"""

from __future__ import annotations

import argparse
import errno
import io
import itertools
import json
import os
import re
import sys
import tempfile
import time
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Raw pixel formats ``play -`` reads, by ffmpeg's ``-pix_fmt`` name:
#: (bytes per pixel, the fbgfx format of the same memory layout or None for plain RGB).
RAW_PIX_FMTS = {"rgb24": (3, None), "bgra": (4, "XRGB8888"), "rgb565le": (2, "RGB565")}

# Most a caller would give as a screen or frame size; guards huge allocations from typos.
_MAX_SIDE = 16384
# How much decoded animation `play --loop` keeps in memory instead of decoding again.
_CACHE_BYTES = 512 << 20
_F_SETPIPE_SZ = 1031
# Frames `play` reads and decodes ahead of the one on screen.
_PREFETCH = 2
# Slowest frame rate `play --fps` takes: a frame every 1000 s.
_MIN_FPS = 0.001
# Longest single sleep: waits are cut into pieces so a deadline far away (or none)
# never reaches the platform's limit for one sleep.
_MAX_SLEEP = 3600.0


# Remarks for the user, printed when a command has succeeded.
_NOTES: List[str] = []


class CliError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{message} (see: {self.prog} --help)")


# -- entry point -------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``fbgfx`` command line.

    Args:
        argv: The arguments after the program name; default ``sys.argv[1:]``.

    Returns:
        The exit status: 0 on success, 2 on bad input, 130 after Ctrl-C.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as e:
        return _fail(e)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    del _NOTES[:]
    try:
        with warnings.catch_warnings():
            # A warning (Pillow's DecompressionBombWarning for a huge image) is one
            # line too, not Python's two-line form with a source location.
            warnings.showwarning = _show_warning
            if getattr(args, "out", None):
                _image_format(args.out)  # a typo in --out fails before the screen changes
            status = args.run(args) or 0
        for note in _NOTES:  # after success only: an error stays one line
            print(f"fbgfx: note: {note}", file=sys.stderr)
        return status
    except KeyboardInterrupt:
        _status_end()
        return EXIT_INTERRUPTED
    except (CliError, OSError, ValueError, EOFError, MemoryError, OverflowError, RecursionError) as e:
        # OverflowError, RecursionError and MemoryError are the last line of defence:
        # a number too large for the platform or input nested too deeply (a damaged
        # state file), wherever it was met, is bad input and gets one line.
        _status_end()
        return _fail(e)
    except Exception as e:
        # Pillow raises its own (DecompressionBombError, SyntaxError from some
        # decoders) for files it cannot read; still one line, not a traceback.
        if type(e).__module__.startswith("PIL") or isinstance(e, SyntaxError):
            _status_end()
            return _fail(e)
        raise


def _fail(error: BaseException) -> int:
    print(f"fbgfx: error: {_describe_error(error)}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def _show_warning(message: Any, category: Any, filename: str, lineno: int,
                  file: Any = None, line: Optional[str] = None) -> None:
    print(f"fbgfx: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def _describe_error(e: BaseException) -> str:
    from .errors import FramebufferError

    if isinstance(e, FramebufferError):
        text = str(e)
    elif isinstance(e, OSError) and e.strerror:
        text = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    elif isinstance(e, MemoryError):
        text = "out of memory"
    elif isinstance(e, OverflowError):
        text = f"a number is too large ({e})"
    elif isinstance(e, RecursionError):
        text = f"input nested too deeply ({e})"
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fbgfx`` command (for docs and shell completion)."""
    device = _Parser(add_help=False)
    device.add_argument(
        "-d", "--device", metavar="DEVICE",
        help="framebuffer: /dev/fbN, N, or virtual:WxH[:FORMAT[:key=value...]] "
             "(default: $FRAMEBUFFER, else /dev/fb0)",
    )
    out = _Parser(add_help=False)
    out.add_argument("--out", metavar="FILE.png", help="save what the screen shows at exit as an image")

    parser = _Parser(
        prog="fbgfx",
        description="Graphics for the Linux framebuffer: inspect it, show images and video, grab it, switch modes.",
        epilog="Run 'fbgfx COMMAND --help' for a command's options. "
               "Try it without a screen: fbgfx demo (writes demo.png).",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"fbgfx {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser("info", parents=[device], help="show what the framebuffer is (like fbset -i)",
                       description="Show the framebuffer's mode, pixel format and memory layout, like `fbset -i`.")
    p.add_argument("--json", action="store_true", help="print var, fix and format as JSON")
    p.set_defaults(run=cmd_info)

    p = sub.add_parser("show", parents=[device, out], help="show images, or a slideshow of them",
                       description="Show one image, or several as a slideshow. Without --duration the last "
                                   "picture stays until Ctrl-C; then the console comes back.")
    p.add_argument("images", nargs="+", metavar="IMAGE", help="any image file Pillow reads")
    _add_fit(p, ("fit", "fill", "stretch", "center"))
    p.add_argument("--delay", type=_seconds, default=5.0, metavar="S", help="seconds per image (default 5)")
    p.add_argument("--loop", action="store_true", help="start again after the last image")
    p.add_argument("--duration", type=_seconds, metavar="S", help="exit after this many seconds")
    p.add_argument("--background", default="black", metavar="COLOR",
                   help="colour around and behind the picture (default black)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("play", parents=[device, out], help="play an animation, or raw video frames from stdin",
                       description="Play an animated GIF/APNG/WebP at its own frame rate, or raw frames from "
                                   "stdin ('-'), e.g. ffmpeg -i movie.mp4 -f rawvideo -pix_fmt rgb24 - | "
                                   "fbgfx play - --size 800x480 --pix-fmt rgb24 --fps 25. Late frames are "
                                   "dropped to keep time.")
    p.add_argument("file", metavar="FILE|-", help="an animation file, or - for raw frames on stdin")
    p.add_argument("--fps", type=_fps, metavar="N",
                   help="frames per second (default: the file's own timing; 30 for stdin; 0: as fast as possible)")
    p.add_argument("--loop", action="store_true", help="play the file again and again (not stdin)")
    _add_fit(p, ("fit", "fill", "stretch", "center"))
    p.add_argument("--size", metavar="WxH", help="frame size of raw frames on stdin")
    p.add_argument("--pix-fmt", default="rgb24", metavar="FMT",
                   help=f"pixel format of raw frames: {', '.join(RAW_PIX_FMTS)} (default rgb24)")
    p.add_argument("--duration", type=_seconds, metavar="S", help="stop after this many seconds")
    p.add_argument("--stats", action="store_true",
                   help="print the summary line (frames, fps, drops) even when stderr is not a terminal")
    p.set_defaults(run=cmd_play)

    p = sub.add_parser("grab", parents=[device], help="save a screenshot of the visible page",
                       description="Save what the screen shows (the visible page, any pixel format) as an "
                                   "image file; the format follows the extension (.png, .bmp, .jpg ...).")
    p.add_argument("output", metavar="OUT.png", help="where to write the picture")
    p.add_argument("--region", metavar="X,Y,W,H", help="only this rectangle of the visible page")
    p.set_defaults(run=cmd_grab)

    p = sub.add_parser("mode", parents=[device, out], help="list, test or set the video mode (like fbset)",
                       description="Without arguments: print the current mode. With a MODE such as "
                                   "800x600-16 or 800x600-32@1200 (1200 virtual lines): set it and show a "
                                   "test pattern until Ctrl-C or --duration, then put the old mode back; "
                                   "--keep leaves it set; --test only asks the driver.")
    p.add_argument("mode", nargs="?", metavar="WxH[-BPP][@VIRTUAL_HEIGHT]", help="the mode to test or set")
    p.add_argument("--list", action="store_true", help="list the modes the system knows for this device")
    p.add_argument("--test", action="store_true", help="ask the driver whether it takes MODE; change nothing")
    p.add_argument("--keep", action="store_true", help="leave MODE set after exit")
    p.add_argument("--duration", type=_seconds, metavar="S", help="preview for this many seconds, then restore")
    p.set_defaults(run=cmd_mode)

    p = sub.add_parser("demo", parents=[device, out], help="an animated tour; writes demo.png without a screen",
                       description="An animated tour: primitives, text, an image, alpha blending, double "
                                   "buffering and an fps counter. With no framebuffer present it runs on a "
                                   "virtual 800x480 one and writes the last frame to a PNG.")
    p.add_argument("--seconds", type=_seconds, metavar="N",
                   help="how long to run (default 10 on a screen, 2 on a virtual framebuffer)")
    p.set_defaults(run=cmd_demo)
    return parser


def _add_fit(p: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    group = p.add_mutually_exclusive_group()
    helps = {
        "fit": "scale to fit inside the screen, keeping the aspect ratio (default)",
        "fill": "scale to cover the whole screen, cropping the overflow",
        "stretch": "scale to the screen size, ignoring the aspect ratio",
        "center": "no scaling, centred (cropped when larger)",
    }
    for name in choices:
        group.add_argument(f"--{name}", dest="fit", action="store_const", const=name, help=helps[name])
    p.set_defaults(fit="fit")


# -- argument types ------------------------------------------------------------------------


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"seconds must be a finite number >= 0, got {text!r}")
    return value


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


def parse_size(text: str, what: str = "--size") -> Tuple[int, int]:
    """Parse ``WIDTHxHEIGHT``.

    Raises:
        CliError: Not two positive integers joined by ``x``.
    """
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m:
        raise CliError(f"{what} must be WIDTHxHEIGHT, e.g. 800x480, not {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (0 < w <= _MAX_SIDE and 0 < h <= _MAX_SIDE):
        raise CliError(f"{what} {w}x{h} is out of range (1..{_MAX_SIDE} per side)")
    return w, h


def parse_mode(text: str) -> dict:
    """Parse ``WxH[-BPP][@VIRTUAL_HEIGHT]`` into :meth:`Framebuffer.set_mode` arguments.

    Raises:
        ValueError: The text is not a mode.
    """
    from .modes import parse_mode as parse

    return parse(text).set_mode_args()


def parse_region(text: str, width: int, height: int) -> Tuple[int, int, int, int]:
    """Parse ``X,Y,W,H`` and check it lies inside a ``width`` x ``height`` page."""
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"--region must be X,Y,W,H (four integers), not {text!r}") from None
    if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > width or y + h > height:
        raise CliError(f"--region {text} is not inside the {width}x{height} screen")
    return x, y, w, h


def _color(text: str) -> Tuple[int, int, int]:
    from PIL import ImageColor

    try:
        return ImageColor.getrgb(text)[:3]
    except ValueError:
        raise CliError(f"unknown colour {text!r}: use a name (black, navy), #rrggbb or rgb(r,g,b)") from None


# -- shared helpers ------------------------------------------------------------------------


def _open(args: argparse.Namespace, read_only: bool = False):
    """Open ``--device``; ``read_only`` for commands that only look (info, grab).

    A read-only command must never create or change a file-backed virtual device.
    """
    import fbgfx

    return fbgfx.open(args.device, readonly=read_only)


def _save(fb, path: Optional[str]) -> None:
    if path:
        save_image(fb.snapshot(), path)


def _image_format(path: str) -> str:
    """Pillow's format name for ``path``'s extension.

    Raises:
        CliError: Pillow writes no format with that extension.
    """
    from PIL import Image

    ext = os.path.splitext(path)[1].lower()
    Image.init()
    if ext not in Image.EXTENSION or Image.EXTENSION[ext] not in Image.SAVE:
        raise CliError(f"{path}: unknown image type {ext or '(no extension)'!r}; use .png, .bmp, .jpg ...")
    return Image.EXTENSION[ext]


def save_image(image, path: str) -> None:
    """Write ``image`` to ``path`` whole or not at all.

    The picture goes to a new, uniquely named file beside ``path`` (created with
    ``O_EXCL``, so a planted symlink is never followed) and is renamed over ``path``
    once complete: a failed save (disk full, an encoder error, Ctrl-C) leaves
    ``path`` as it was. An existing ``path`` keeps its permission bits; a new one
    gets the usual ``0666`` less the umask. A symlink at ``path`` is replaced, not
    written through.

    Raises:
        CliError: Unknown extension.
        OSError: The directory is not writable, or the save failed.
    """
    fmt = _image_format(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.lstat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            image.save(f, format=fmt)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _in_process_only(fb) -> bool:
    """True for a virtual framebuffer that no other process can see (not file-backed)."""
    device = getattr(fb, "device", None)
    return fb.path.startswith("virtual:") and getattr(device, "path", "virtual") == "virtual"


def _open_screen(fb, out: Optional[str] = None):
    if _in_process_only(fb) and not out:
        _NOTES.append("nothing outside this process sees a virtual framebuffer; add --out FILE.png to keep the picture")
    return fb.screen(buffering="auto", console=True)


def _wait_until(deadline: Optional[float]) -> None:
    """Sleep until ``deadline`` (time.monotonic); forever (until Ctrl-C) when None."""
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return
        time.sleep(_MAX_SLEEP if deadline is None else min(deadline - now, _MAX_SLEEP))


def _earlier(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """The earlier of two deadlines, None meaning never."""
    return b if a is None else a if b is None else min(a, b)


def load_image(path: str, screen: Optional[Tuple[int, int]] = None, fit: str = "fit"):
    """Read an image fully, EXIF orientation applied, as a PIL RGB or RGBA image.

    A picture much larger than the screen is made smaller as it is read, so a
    100-megapixel photo on a small display needs about one decoded copy of memory,
    not five: JPEG decodes at a reduced scale (``draft``), other formats are reduced
    by a whole factor right after decoding, never below what ``fit`` shows.

    Args:
        path: Any file Pillow reads.
        screen: The (width, height) the picture will be shown on; None keeps it whole.
        fit: How it will be shown (``fit``, ``fill``, ``stretch`` or ``center``):
            ``center`` shows pixels 1:1, so its picture is cropped to the middle
            instead of scaled.

    Raises:
        CliError: The file is missing, unreadable or not an image.
    """
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        im = Image.open(path)
        side = max(screen) if screen else 0
        if side and fit != "center" and im.format == "JPEG":
            im.draft("RGB", (side, side))
        im.load()
        if side and fit != "center":
            im = _reduce(im, side)
        # exif_transpose copies even an upright picture: only call it when turning.
        if im.getexif().get(_EXIF_ORIENTATION, 1) != 1:
            im = ImageOps.exif_transpose(im)
        if screen and fit == "center":
            im = _crop_middle(im, *screen)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not an image") from None
    except UnidentifiedImageError:
        raise CliError(f"{path}: not an image Pillow can read") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise CliError(f"{path}: cannot read the image ({_describe_error(e)})") from None
    has_alpha = im.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in im.info
    mode = "RGBA" if has_alpha else "RGB"
    return im if im.mode == mode else im.convert(mode)


_EXIF_ORIENTATION = 0x0112


def _reduce(im, side: int):
    """``im`` made smaller by the largest whole factor that keeps both sides >= ``side``.

    Any fit then only scales down from there, so what shows is unchanged.
    """
    factor = min(im.width // side, im.height // side)
    if factor < 2:
        return im
    if im.mode not in ("L", "LA", "RGB", "RGBA", "RGBX", "I", "F"):
        # Pillow reduces only plain modes; palette and bilevel pictures are converted
        # first (they are the small ones: a byte or less a pixel).
        has_alpha = im.mode in ("PA", "La", "RGBa") or "transparency" in im.info
        im = im.convert("RGBA" if has_alpha else "RGB")
    return im.reduce(factor)


def _crop_middle(im, width: int, height: int):
    """The middle ``width`` x ``height`` of a larger picture, as ``fit="center"`` shows it."""
    if im.width <= width and im.height <= height:
        return im
    # The same rounding as Screen.present's centring, so the same pixels show.
    left = max(0, -((width - im.width) // 2))
    top = max(0, -((height - im.height) // 2))
    return im.crop((left, top, left + min(im.width, width), top + min(im.height, height)))


def _flatten(im, background: Tuple[int, int, int]):
    """An RGB image: RGBA ones composed over the background colour."""
    from PIL import Image

    if im.mode == "RGB":
        return im
    base = Image.new("RGB", im.size, background)
    base.paste(im, mask=im.getchannel("A"))
    return base


class _Status:
    """frames/fps/drops on one self-rewriting stderr line, when stderr is a terminal."""

    active: Optional["_Status"] = None

    def __init__(self, always_summary: bool) -> None:
        self.live = sys.stderr.isatty()
        self.summary = always_summary or self.live
        self.start = time.monotonic()
        self.shown = self.dropped = 0
        self._last = 0.0
        _Status.active = self if self.live else None

    def frame(self, dropped: bool) -> None:
        if dropped:
            self.dropped += 1
        else:
            self.shown += 1
        if self.live:
            now = time.monotonic()
            if now - self._last >= 0.5:
                self._last = now
                sys.stderr.write(f"\rplay: {self.text(now)}  ")
                sys.stderr.flush()

    def text(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        return f"{self.shown} frames, {self.shown / elapsed:.1f} fps, {self.dropped} dropped, {elapsed:.1f} s"

    def finish(self) -> None:
        _Status.active = None
        if self.summary:
            end = "\r" if self.live else ""
            sys.stderr.write(f"{end}fbgfx: played {self.text(time.monotonic())}\n")
            sys.stderr.flush()


def _status_end() -> None:
    """End a live status line so an error or the shell prompt starts on its own line."""
    if _Status.active is not None:
        _Status.active = None
        sys.stderr.write("\n")


# -- info ------------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace) -> int:
    """``fbgfx info``: what the framebuffer is."""
    with _open(args, read_only=True) as fb:
        if args.json:
            print(json.dumps(info_dict(fb), indent=2))
        else:
            print(info_text(fb))
    return 0


def info_dict(fb) -> dict:
    """var, fix and format of an open framebuffer as plain JSON-ready data."""
    fmt = fb.format
    return {
        "device": fb.path,
        "format": {
            "name": fmt.name,
            "bpp": fmt.bpp,
            "indexed": fmt.indexed,
            "gray": fmt.gray,
            **{ch: {"offset": bf.offset, "length": bf.length, "msb_right": bf.msb_right}
               for ch, bf in (("red", fmt.red), ("green", fmt.green), ("blue", fmt.blue), ("transp", fmt.transp))},
        },
        "var": fb.var.asdict(),
        "fix": fb.fix.asdict(),
    }


def info_text(fb) -> str:
    """The ``fbset -i`` style description of an open framebuffer."""
    from .screeninfo import VISUAL_NAMES

    var, fix, fmt = fb.var, fb.fix, fb.format
    htotal = var.xres + var.left_margin + var.right_margin + var.hsync_len
    vtotal = var.yres + var.upper_margin + var.lower_margin + var.vsync_len
    name = f"{var.xres}x{var.yres}"
    lines = []
    timing = ""
    if var.pixclock and htotal and vtotal:
        dclk = 1e12 / var.pixclock  # pixclock is in picoseconds
        hfreq, vfreq = dclk / htotal, dclk / htotal / vtotal
        name += f"-{vfreq:.0f}"
        timing = f"    # D: {dclk / 1e6:.3f} MHz, H: {hfreq / 1e3:.3f} kHz, V: {vfreq:.3f} Hz"
    lines.append(f'mode "{name}"')
    if timing:
        lines.append(timing)
    lines += [
        f"    geometry {var.xres} {var.yres} {var.xres_virtual} {var.yres_virtual} {var.bits_per_pixel}",
        f"    timings {var.pixclock} {var.left_margin} {var.right_margin} {var.upper_margin} "
        f"{var.lower_margin} {var.hsync_len} {var.vsync_len}",
    ]
    if var.grayscale == 1:
        lines.append("    grayscale true")
    lines.append(f"    rgba {var.red},{var.green},{var.blue},{var.transp}")
    lines.append("endmode")
    lines.append("")
    lines.append("Frame buffer device information:")
    visual = VISUAL_NAMES.get(fix.visual, str(fix.visual))
    rows = [
        ("Name", fix.id),
        ("Device", fb.path),
        ("Format", f"{fmt.name} ({fmt.bpp} bpp)"),
        ("Geometry", f"{var.xres}x{var.yres}, virtual {var.xres_virtual}x{var.yres_virtual}, "
                     f"offset {var.xoffset},{var.yoffset}"),
        ("Bitfields", "  ".join(f"{ch} {getattr(var, ch).length}/{getattr(var, ch).offset}"
                                for ch in ("red", "green", "blue", "transp"))),
        ("Address", f"{fix.smem_start:#x}"),
        ("Size", str(fix.smem_len)),
        ("Type", "PACKED PIXELS" if fix.type == 0 else str(fix.type)),
        ("Visual", visual),
        ("XPanStep", str(fix.xpanstep)),
        ("YPanStep", str(fix.ypanstep)),
        ("YWrapStep", str(fix.ywrapstep)),
        ("LineLength", str(fix.line_length)),
        ("Pages", f"{fb.pages} in the virtual height"),
        ("Accelerator", "No" if not fix.accel else str(fix.accel)),
    ]
    lines += [f"    {key:<12}: {value}" for key, value in rows]
    return "\n".join(lines)


# -- grab ------------------------------------------------------------------------------------


def cmd_grab(args: argparse.Namespace) -> int:
    """``fbgfx grab``: save the visible page as an image."""
    _image_format(args.output)  # before the device is opened: a typo changes nothing
    with _open(args, read_only=True) as fb:
        region = parse_region(args.region, fb.width, fb.height) if args.region else None
        image = fb.snapshot()
    if region:
        x, y, w, h = region
        image = image.crop((x, y, x + w, y + h))
    save_image(image, args.output)
    return 0


# -- mode ------------------------------------------------------------------------------------


def _describe_var(var) -> str:
    text = f"{var.xres}x{var.yres}-{var.bits_per_pixel}"
    if (var.xres_virtual, var.yres_virtual) != (var.xres, var.yres):
        text += f" (virtual {var.xres_virtual}x{var.yres_virtual})"
    return text


def cmd_mode(args: argparse.Namespace) -> int:
    """``fbgfx mode``: print, list, test or set the video mode."""
    wanted = parse_mode(args.mode) if args.mode else None
    if (args.test or args.keep) and not wanted:
        raise CliError("--test and --keep need a MODE, e.g. fbgfx mode 800x600-16 --test")
    if args.test and args.keep:
        raise CliError("--test changes nothing, so it cannot be combined with --keep")
    with _open(args) as fb:
        if args.list:
            _list_modes(fb)
        if not wanted:
            if not args.list:
                print(f"{_describe_var(fb.var)} {fb.format.name}")
            return 0
        if args.test:
            got = fb.test_mode(**wanted)
            print(f"{args.mode}: the driver takes it ({_describe_var(got)})")
            return 0
        fb.set_mode(**wanted)
        if args.keep:
            fb.keep_mode()
            print(f"mode set: {_describe_var(fb.var)} {fb.format.name}")
            _save(fb, args.out)
            return 0
        _preview_mode(fb, args)
    return 0


def _list_modes(fb) -> None:
    var = fb.var
    refresh = _refresh_rate(var)
    modes = list(fb.modes()) if hasattr(fb, "modes") else []
    print(f"current: {_describe_var(var)} {fb.format.name}" + (f" ({refresh:.0f} Hz)" if refresh else ""))
    if not modes:
        print("  (the system lists no modes for this device; any mode the driver takes can still be tried)")
    for mode in modes:
        current = (
            (mode.width, mode.height) == (var.xres, var.yres)
            and mode.bpp in (None, var.bits_per_pixel)
            and (not refresh or not mode.refresh or abs(mode.refresh - refresh) < 1.5)
        )
        print(f"{'*' if current else ' '} {getattr(mode, 'label', mode)}")


def _refresh_rate(var) -> Optional[float]:
    """The vertical refresh rate the timings in ``var`` give, if it has timings."""
    htotal = var.xres + var.left_margin + var.right_margin + var.hsync_len
    vtotal = var.yres + var.upper_margin + var.lower_margin + var.vsync_len
    if not (var.pixclock and htotal and vtotal):
        return None
    return 1e12 / var.pixclock / htotal / vtotal


def _preview_mode(fb, args: argparse.Namespace) -> None:
    """Show a test pattern in the new mode until Ctrl-C or --duration (mode restored by close)."""
    deadline = None if args.duration is None else time.monotonic() + args.duration
    label = f"{_describe_var(fb.var)} {fb.format.name}"  # before the Screen adds a page
    screen = _open_screen(fb, args.out)
    try:
        screen.present(mode_card(fb.width, fb.height, label), fit="stretch")
        if deadline is None and sys.stderr.isatty():
            print(f"fbgfx: previewing {args.mode}; Ctrl-C restores the previous mode", file=sys.stderr)
        try:
            _wait_until(deadline)
        finally:
            _save(fb, args.out)
    finally:
        screen.close()


def mode_card(width: int, height: int, label: str = ""):
    """A PIL RGB test card: colour bars, a gray ramp, a border and a label.

    Any size a driver takes works, down to 1x1: parts with no room are left out.
    """
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), "black")
    bars = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255)]
    top = height * 2 // 3
    draw = ImageDraw.Draw(img)
    for i, color in enumerate(bars):
        x0, x1 = i * width // 7, (i + 1) * width // 7 - 1
        if top > 0 and x1 >= x0:  # a screen under 7 pixels wide has no room for some bars
            draw.rectangle((x0, 0, x1, top - 1), fill=color)
    if height > top:
        ramp = np.repeat(np.linspace(0, 255, width).astype(np.uint8)[None, :], height - top, axis=0)
        img.paste(Image.fromarray(np.dstack([ramp] * 3)), (0, top))
    border = min(max(2, min(width, height) // 60), (min(width, height) + 1) // 2)
    draw.rectangle((0, 0, width - 1, height - 1), outline=(255, 0, 0), width=border)
    if label:
        from PIL import ImageFont

        try:
            font = ImageFont.load_default(size=max(12, height // 16))
        except TypeError:  # Pillow < 10.1 has only the small bitmap font
            font = ImageFont.load_default()
        box = draw.textbbox((width // 2, top // 2), label, font=font, anchor="mm")
        # Only where it fits inside the bars: a tiny mode gets the card without it.
        if box[0] - 8 >= border and box[2] + 8 < width - border and box[1] - 6 >= border and box[3] + 6 < top:
            draw.rectangle((box[0] - 8, box[1] - 6, box[2] + 8, box[3] + 6), fill="black")
            draw.text((width // 2, top // 2), label, fill="white", font=font, anchor="mm")
    return img


# -- show ------------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    """``fbgfx show``: one image, or a slideshow."""
    background = _color(args.background)
    # Read the first picture and check the rest before touching the screen, so a typo
    # leaves the screen and console as they were.
    for path in args.images[1:]:
        _check_image(path)
    with _open(args) as fb:
        screen_size = (fb.width, fb.height)
        first = load_image(args.images[0], screen_size, args.fit)
        deadline = None if args.duration is None else time.monotonic() + args.duration
        screen = _open_screen(fb, args.out)
        try:
            try:
                _slideshow(screen, args, first, background, screen_size, deadline)
            finally:
                _save(fb, args.out)
        finally:
            screen.close()
    return 0


def _check_image(path: str) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path):
            pass
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except UnidentifiedImageError:
        raise CliError(f"{path}: not an image Pillow can read") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise CliError(f"{path}: cannot read the image ({_describe_error(e)})") from None


def _slideshow(screen, args, first, background, screen_size: Tuple[int, int], deadline: Optional[float]) -> None:
    paths = args.images
    screen.present(_flatten(first, background), fit=args.fit, background=background)
    if len(paths) == 1:
        _wait_until(deadline)
        return

    def later() -> Iterator[Any]:
        # The pictures after the first, decoded in a thread while one is up, so a
        # slow decode neither delays the picture change nor outlasts --duration.
        order = itertools.cycle(range(len(paths))) if args.loop else iter(range(len(paths)))
        next(order)
        for index in order:
            yield load_image(paths[index], screen_size, args.fit)

    upcoming = _Prefetch(later(), 1)
    try:
        while True:
            next_at = time.monotonic() + args.delay
            _wait_until(_earlier(next_at, deadline))
            if deadline is not None and time.monotonic() >= deadline:
                return
            image = upcoming.get(deadline)
            if image is _TIMED_OUT:
                return
            if image is None:  # the last picture was shown: it stays
                _wait_until(deadline)
                return
            screen.present(_flatten(image, background), fit=args.fit, background=background)
    finally:
        upcoming.close()


# -- play ------------------------------------------------------------------------------------


def cmd_play(args: argparse.Namespace) -> int:
    """``fbgfx play``: an animation file, or raw frames from stdin."""
    if args.file == "-":
        frames = _raw_source(args)
    else:
        if args.size:
            raise CliError("--size is for raw frames on stdin (FILE '-'); an animation file knows its size")
        frames = _animation_source(args)
    # Read and decode in a thread (both release the GIL) while frames are shown.
    stop = None if args.duration is None else time.monotonic() + args.duration
    frames = _Prefetch(frames, _PREFETCH)
    try:
        first = frames.get(stop)  # fail on bad input before the screen changes
        if first is _TIMED_OUT:  # --duration ended before a frame came
            return 0
        if first is None:
            raise CliError("stdin had no frames" if args.file == "-" else f"{args.file}: no frames")
        with _open(args) as fb:
            screen = _open_screen(fb, args.out)
            try:
                try:
                    _play(screen, args, first, frames, stop)
                finally:
                    _save(fb, args.out)
            finally:
                screen.close()
    finally:
        frames.close()
    return 0


# What _Prefetch.get returns when its deadline comes before the next item.
_TIMED_OUT: Any = object()


def _next_before(frames: Iterator, deadline: Optional[float]) -> Any:
    """The next frame, None at the end, ``_TIMED_OUT`` when ``deadline`` comes first."""
    if isinstance(frames, _Prefetch):
        return frames.get(deadline)
    return next(frames, None)


class _Prefetch:
    """Run a frame iterator in a thread, up to ``depth`` frames ahead of the consumer."""

    def __init__(self, source: Iterator, depth: int) -> None:
        import queue
        import threading

        self._queue: "queue.Queue" = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(source,), name="fbgfx-play-reader", daemon=True)
        self._thread.start()

    def _run(self, source: Iterator) -> None:
        try:
            for item in source:
                if not self._put(("frame", item)):
                    return
            self._put(("end", None))
        except BaseException as e:  # handed to the consumer, raised there
            self._put(("error", e))

    def _put(self, message) -> bool:
        import queue

        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> "_Prefetch":
        return self

    def __next__(self):
        item = self.get(None)
        if item is None:
            raise StopIteration
        return item

    def get(self, deadline: Optional[float]) -> Any:
        """The next item; None after the last; ``_TIMED_OUT`` if ``deadline`` came first.

        Raises:
            BaseException: Whatever the source raised, in this thread.
        """
        import queue

        if self._done:
            return None
        while True:
            wait = _MAX_SLEEP if deadline is None else min(deadline - time.monotonic(), _MAX_SLEEP)
            if wait <= 0:
                return _TIMED_OUT
            try:
                kind, value = self._queue.get(timeout=wait)
                break
            except queue.Empty:
                continue
        if kind == "frame":
            return value
        self._done = True
        if kind == "error":
            raise value
        return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=0.2)  # a reader blocked on a quiet pipe is a daemon: let it be


def _play(screen, args, first, frames: Iterator, stop: Optional[float] = None) -> None:
    """Show ``first`` and the rest of ``frames`` on time, until they end or ``stop``.

    ``stop`` (time.monotonic) defaults to ``--duration`` from now; it also cuts
    short the wait for a slow frame, whether it is slow to come or long to show.
    """
    status = _Status(args.stats)
    clock = time.monotonic()  # when the current frame is due
    if stop is None and args.duration is not None:
        stop = clock + args.duration
    item: Any = first
    unread = object()
    upcoming: Any = unread  # looked ahead at only for a late frame: the last one is never dropped
    try:
        while item is not None:
            frame, period = item
            now = time.monotonic()
            if stop is not None and now >= stop:
                break
            late = bool(period) and now >= clock + period and status.shown > 0
            if late and upcoming is unread:
                upcoming = _next_before(frames, stop)
                if upcoming is _TIMED_OUT:
                    break
            if late and upcoming is not None:
                status.frame(dropped=True)  # its time is over: skip it to catch up
            else:
                if period and now < clock:
                    _wait_until(_earlier(clock, stop))
                    if stop is not None and time.monotonic() >= stop:
                        break
                screen.present(frame, fit=args.fit)
                if not status.shown:
                    clock = status.start = time.monotonic()  # time runs from the first picture
                status.frame(dropped=False)
            if period:
                clock += period
                # After a long stall (a paused pipe), start timing afresh instead of
                # dropping every frame until the schedule is met.
                if time.monotonic() - clock > 1.0:
                    clock = time.monotonic()
            item, upcoming = (_next_before(frames, stop) if upcoming is unread else upcoming), unread
            if item is _TIMED_OUT:
                break
        else:
            # The last frame lasts its time too (so a 2 s animation takes 2 s).
            _wait_until(_earlier(clock, stop))
    finally:
        status.finish()


def _animation_source(args) -> Iterator[Tuple[Any, float]]:
    """(RGB array, seconds) for every frame of an image file, looping when asked."""
    from PIL import Image, ImageSequence

    path = args.file
    try:
        im = Image.open(path)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except Exception as e:  # noqa: BLE001 - Pillow's many decoder errors
        raise CliError(f"{path}: not an image or animation Pillow can read ({_describe_error(e)})") from None
    fixed = None if args.fps is None else (1.0 / args.fps if args.fps else 0.0)

    def decode() -> Iterator[Tuple[np.ndarray, float]]:
        try:
            for frame in ImageSequence.Iterator(im):
                duration = frame.info.get("duration") or 0
                # Browsers show GIF frames of 0..10 ms for 100 ms; so do we.
                period = fixed if fixed is not None else (duration / 1000 if duration > 10 else 0.1)
                yield _frame_rgb(frame), period
        except (OSError, SyntaxError, ValueError, EOFError) as e:
            raise CliError(f"{path}: cannot decode the animation ({_describe_error(e)})") from None

    def frames() -> Iterator[Tuple[np.ndarray, float]]:
        cache: Optional[List[Tuple[np.ndarray, float]]] = [] if args.loop else None
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


def _frame_rgb(frame) -> np.ndarray:
    from PIL import Image

    if frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info:
        rgba = frame.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
        return np.asarray(Image.alpha_composite(base, rgba).convert("RGB"))
    return np.asarray(frame.convert("RGB"))


def _raw_source(args) -> Iterator[Tuple[Any, float]]:
    """Raw frames from stdin, read straight into preallocated buffers."""
    if not args.size:
        raise CliError("raw frames on stdin need --size WxH (and --pix-fmt, default rgb24)")
    width, height = parse_size(args.size)
    if args.pix_fmt not in RAW_PIX_FMTS:
        raise CliError(f"unknown --pix-fmt {args.pix_fmt!r}; use one of: {', '.join(RAW_PIX_FMTS)}")
    if args.loop:
        raise CliError("--loop cannot rewind stdin; loop the producer instead (e.g. ffmpeg -stream_loop -1)")
    if sys.stdin is None or sys.stdin.isatty():
        raise CliError("stdin is a terminal: pipe raw frames in, "
                       "e.g. ffmpeg ... -f rawvideo -pix_fmt rgb24 - | fbgfx play - --size WxH")
    bpp, fmt_name = RAW_PIX_FMTS[args.pix_fmt]
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

    def frames() -> Iterator[Tuple[Any, float]]:
        for index in itertools.cycle(range(len(ring))):
            view, convert = memoryview(ring[index]), converters[index]
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
                    f"({width}x{height} {args.pix_fmt} is {frame_bytes} bytes a frame)"
                )
            yield convert(), period

    return frames()


def _raw_converter(buffer: np.ndarray, width: int, height: int, fmt_name: Optional[str]):
    if fmt_name is None:
        rgb = buffer.reshape(height, width, 3)
        return lambda: rgb
    from .convert import from_native
    from .pixelformat import FORMATS

    fmt = FORMATS[fmt_name]
    native = buffer.view(fmt.dtype).reshape(height, width)
    return lambda: from_native(native, fmt)


# -- demo ------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    """``fbgfx demo``: the animated tour; on a machine without a framebuffer, a PNG of it."""
    from .errors import FramebufferError

    virtual_note = None
    try:
        fb = _open(args)
    except FramebufferError as e:
        # Only the default device may be replaced: -d names what the user wants.
        if args.device is not None or e.errno not in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
            raise
        import fbgfx

        fb = fbgfx.open("virtual:800x480:XRGB8888")
        default = os.environ.get("FRAMEBUFFER") or "/dev/fb0"
        virtual_note = f"no framebuffer here ({default} is missing): ran the demo on a virtual 800x480 one"
    with fb:
        virtual = fb.path.startswith("virtual:")
        # Nobody would see a demo on an in-process virtual framebuffer: keep a picture.
        out = args.out or ("demo.png" if _in_process_only(fb) else None)
        seconds = args.seconds if args.seconds is not None else (2.0 if virtual else 10.0)
        screen = _open_screen(fb, out)
        try:
            try:
                frames, elapsed = run_demo(screen, fb, seconds)
            finally:
                _save(fb, out)
        finally:
            screen.close()
    fps = frames / elapsed if elapsed > 0 else 0.0
    if virtual_note:
        print(f"fbgfx: {virtual_note}; {frames} frames ({fps:.0f} fps); picture: {os.path.abspath(out)}",
              file=sys.stderr)
    elif out:
        print(f"fbgfx: {frames} frames ({fps:.0f} fps); picture: {os.path.abspath(out)}", file=sys.stderr)
    return 0


class _Demo:
    """The animated tour: four panels and an fps counter, drawn fresh every frame."""

    def __init__(self, screen, width: int, height: int) -> None:
        import fbgfx

        self.screen, self.w, self.h = screen, width, height
        k = min(width / 800, height / 480)
        self.k = k
        self.fonts = {size: fbgfx.font(size=max(8, round(size * k))) for size in (14, 18, 26, 48)}
        pad = round(10 * k)
        top = round(44 * k)
        foot = round(30 * k)
        mid_x, mid_y = width // 2, top + (height - top - foot) // 2
        self.panels = {
            "primitives": (pad, top, mid_x - pad // 2, mid_y - pad // 2),
            "image": (mid_x + pad // 2, top, width - pad, mid_y - pad // 2),
            "alpha": (pad, mid_y + pad // 2, mid_x - pad // 2, height - foot),
            "buffers": (mid_x + pad // 2, mid_y + pad // 2, width - pad, height - foot),
        }
        x0, y0, x1, y1 = self.panels["image"]
        self.iterations = _mandelbrot(max(1, x1 - x0 - 2 * pad), max(1, y1 - y0 - round(30 * k) - pad))
        self.sprites = [_disc(round(46 * k), color) for color in ((255, 60, 60), (60, 255, 90), (70, 120, 255))]
        self.ball = [0.35, 0.3, 0.55, 0.42]  # x, y (fractions of the panel), velocity per second
        self.frames = 0

    def draw(self, s, t: float, dt: float, fps: float) -> None:
        w, h, k = self.w, self.h, self.k
        f14, f18, f26 = self.fonts[14], self.fonts[18], self.fonts[26]
        s.clear((14, 18, 30))
        s.rectangle((0, 0, w - 1, round(36 * k)), fill=(34, 46, 84))
        s.text((round(12 * k), round(18 * k)), "fbgfx demo", fill="white", font=f26, anchor="lm")
        buffering = getattr(self.screen, "buffering", "?")
        s.text((w - round(12 * k), round(18 * k)), f"{w}x{h} {self._format}  {buffering} buffering",
               fill=(190, 205, 255), font=f18, anchor="rm")
        for name, box in self.panels.items():
            s.rectangle(box, fill=(24, 30, 48), outline=(70, 84, 130), width=max(1, round(2 * k)))
            s.text((box[0] + round(8 * k), box[1] + round(6 * k)), name, fill=(150, 170, 230), font=f14)
        self._primitives(s, t)
        self._image(s, t)
        self._alpha(s, t)
        self._buffers(s, t, dt)
        s.text((round(12 * k), h - round(15 * k)),
               f"{fps:5.1f} fps   frame {self.frames}   {t:4.1f} s", fill=(255, 230, 120), font=f18, anchor="lm")
        s.text((w - round(12 * k), h - round(15 * k)), "python -m fbgfx demo", fill=(120, 130, 160),
               font=f14, anchor="rm")
        self.frames += 1

    def _primitives(self, s, t: float) -> None:
        import math

        x0, y0, x1, y1 = self.panels["primitives"]
        k = self.k
        pw, ph = x1 - x0, y1 - y0
        # A fan of lines sweeping round.
        cx, cy = x0 + pw * 0.22, y0 + ph * 0.58
        r = min(pw, ph) * 0.32
        for i in range(12):
            a = t * 1.5 + i * math.pi / 6
            color = (90 + 13 * i, 200 - 10 * i, 255 - 12 * i)
            s.line([(cx, cy), (cx + r * math.cos(a), cy + r * math.sin(a))], fill=color, width=max(1, round(2 * k)))
        # Rectangles and an ellipse.
        s.rectangle((x0 + pw * 0.45, y0 + ph * 0.22, x0 + pw * 0.62, y0 + ph * 0.48), fill=(230, 90, 70),
                    outline="white", width=max(1, round(2 * k)))
        s.ellipse((x0 + pw * 0.45, y0 + ph * 0.56, x0 + pw * 0.62, y0 + ph * 0.9), fill=(80, 200, 140),
                  outline=(220, 255, 230), width=max(1, round(2 * k)))
        # A star, turning.
        sx, sy, sr = x0 + pw * 0.82, y0 + ph * 0.56, min(pw, ph) * 0.26
        star = []
        for i in range(10):
            a = -math.pi / 2 + i * math.pi / 5 + t * 0.8
            rr = sr if i % 2 == 0 else sr * 0.45
            star.append((sx + rr * math.cos(a), sy + rr * math.sin(a)))
        s.polygon(star, fill=(255, 210, 60), outline=(255, 140, 0))

    def _image(self, s, t: float) -> None:
        x0, y0, x1, y1 = self.panels["image"]
        k = self.k
        n = self.iterations
        # A smooth blue-to-gold palette, cycled through the escape counts over time:
        # the picture moves at no cost.
        u = (np.sqrt(n / n.max()) + t * 0.08) % 1.0
        v = 1.0 - u
        rgb = np.empty(n.shape + (3,), np.uint8)
        rgb[..., 0] = np.clip(9.0 * v * u ** 3 * 255, 0, 255)
        rgb[..., 1] = np.clip(15.0 * v * v * u * u * 255, 0, 255)
        rgb[..., 2] = np.clip(8.5 * v ** 3 * u * 255 + 40 * v, 0, 255)
        rgb[n == n.max()] = 0
        s.blit(rgb, (x0 + round(10 * k), y0 + round(28 * k)))
        s.text((x1 - round(8 * k), y0 + round(6 * k)), "numpy mandelbrot, blit", fill=(150, 170, 230),
               font=self.fonts[14], anchor="ra")

    def _alpha(self, s, t: float) -> None:
        import math

        x0, y0, x1, y1 = self.panels["alpha"]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2 + 8 * self.k
        rr = min(x1 - x0, y1 - y0) * 0.16
        s.text((cx, cy), "alpha", fill=(235, 235, 245), font=self.fonts[48], anchor="mm")
        for i, sprite in enumerate(self.sprites):
            a = t * 0.9 + i * 2 * math.pi / 3
            px = cx + rr * math.cos(a) - sprite.width / 2
            py = cy + rr * math.sin(a) - sprite.height / 2
            s.blit(sprite, (round(px), round(py)), alpha=True)
        s.text((x1 - round(8 * self.k), y0 + round(6 * self.k)), "RGBA sprites blended", fill=(150, 170, 230),
               font=self.fonts[14], anchor="ra")

    def _buffers(self, s, t: float, dt: float) -> None:
        x0, y0, x1, y1 = self.panels["buffers"]
        k = self.k
        inner = (x0 + round(10 * k), y0 + round(28 * k), x1 - round(10 * k), y1 - round(10 * k))
        # A scrolling waveform: a new curve every frame, never a half-drawn one.
        mid, amp = (inner[1] + inner[3]) / 2, (inner[3] - inner[1]) * 0.3
        xs = np.linspace(inner[0], inner[2], 120)
        for phase, color in ((0.0, (70, 110, 200)), (1.7, (200, 90, 160))):
            ys = mid + amp * np.sin(xs / (40 * k) - t * 3 + phase) * np.cos(xs / (170 * k) + t * 0.7)
            s.line(list(zip(xs.tolist(), ys.tolist())), fill=color, width=max(1, round(2 * k)))
        # A bouncing ball with a fading trail.
        b = self.ball
        b[0] += b[2] * dt
        b[1] += b[3] * dt
        for i in (0, 1):
            if not 0.0 <= b[i] <= 1.0:
                b[i] = min(max(b[i], 0.0), 1.0)
                b[i + 2] = -b[i + 2]
        radius = round(16 * k)
        lo_x, hi_x = inner[0] + radius, inner[2] - radius
        lo_y, hi_y = inner[1] + radius, inner[3] - radius
        for i in range(5, -1, -1):
            gx = min(max(lo_x + (b[0] - b[2] * 0.05 * i) * (hi_x - lo_x), lo_x), hi_x)
            gy = min(max(lo_y + (b[1] - b[3] * 0.05 * i) * (hi_y - lo_y), lo_y), hi_y)
            level = 1.0 - i / 6
            color = (round(250 * level), round(250 * level), 255) if i == 0 else (
                round(40 + 80 * level), round(60 + 100 * level), round(120 + 120 * level))
            s.ellipse((gx - radius, gy - radius, gx + radius, gy + radius), fill=color,
                      outline=(90, 160, 255) if i == 0 else None, width=max(1, round(3 * k)))
        label = "page flips" if getattr(self.screen, "buffering", "") == "flip" else "double buffering"
        s.text((x1 - round(8 * k), y0 + round(6 * k)), f"{label}: no tearing", fill=(150, 170, 230),
               font=self.fonts[14], anchor="ra")

    _format = ""


def _mandelbrot(width: int, height: int, steps: int = 48) -> np.ndarray:
    """Escape counts of the Mandelbrot set, (height, width) float32 (a picture made here, no download)."""
    x = np.linspace(-2.2, 0.8, width, dtype=np.float32)
    y = np.linspace(-1.2, 1.2, height, dtype=np.float32)
    c = x[None, :] + 1j * y[:, None]
    z = np.zeros_like(c)
    counts = np.full(c.shape, steps, np.float32)
    alive = np.ones(c.shape, bool)
    for i in range(steps):
        z[alive] = z[alive] * z[alive] + c[alive]
        escaped = alive & (np.abs(z) > 2)
        counts[escaped] = i
        alive &= ~escaped
    return counts


def _disc(radius: int, color: Tuple[int, int, int]):
    """A soft-edged translucent RGBA disc sprite."""
    from PIL import Image

    size = 2 * radius + 1
    yy, xx = np.mgrid[-radius:radius + 1, -radius:radius + 1]
    d = np.sqrt(xx * xx + yy * yy) / max(radius, 1)
    alpha = (np.clip((1.0 - d) * 6, 0, 1) * 170).astype(np.uint8)
    rgba = np.empty((size, size, 4), np.uint8)
    rgba[..., :3] = color
    rgba[..., 3] = alpha
    return Image.fromarray(rgba, "RGBA")


def run_demo(screen, fb, seconds: float) -> Tuple[int, float]:
    """Run the tour on an open screen for ``seconds``; returns (frames, elapsed seconds)."""
    demo = _Demo(screen, fb.width, fb.height)
    demo._format = fb.format.name
    start = last = time.monotonic()
    fps, fps_frames, fps_start = 0.0, 0, start
    while True:
        now = time.monotonic()
        with screen.frame() as s:
            demo.draw(s, now - start, now - last, fps)
        last = now
        fps_frames += 1
        if now - fps_start >= 0.5:
            fps, fps_frames, fps_start = fps_frames / (now - fps_start), 0, now
        if time.monotonic() - start >= seconds:
            return demo.frames, time.monotonic() - start
