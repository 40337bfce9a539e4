"""What the ``fbgfx`` commands share: the command record, the run context, argument
types, opening the device and the screen, reading and writing pictures, and waiting
with a deadline.

Every wait goes through :func:`now` and :func:`wait_until` here, so a deadline
(``--duration``) bounds it, and tests can stand in a clock of their own.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import errno
import io
import os
import queue
import re
import secrets
import select
import stat
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Callable, Final, Generic, TypeVar

from PIL import Image, ImageOps, UnidentifiedImageError

import fbgfx

from .._open import resolve
from ..color import parse_color
from ..convert import has_alpha
from ..drm import find_display, is_drm_spec, parse_spec
from ..errors import FramebufferError
from ..screen import resolve_rotate

__all__ = [
    "TIMED_OUT",
    "CliError",
    "Command",
    "Context",
    "Prefetch",
    "Status",
    "add_fit",
    "add_rotate",
    "check_image",
    "describe_error",
    "drm_target",
    "earlier",
    "image_format",
    "in_process_only",
    "load_image",
    "next_before",
    "now",
    "open_device",
    "open_screen",
    "parse_background",
    "parse_region",
    "parse_size",
    "reading",
    "save_image",
    "save_screen",
    "saved_screen",
    "screen_size",
    "seconds",
    "wait_until",
]

# Most a caller would give as a screen or frame size; guards huge allocations from typos.
MAX_SIDE = 16384
# Longest single sleep: waits are cut into pieces so a deadline far away (or none)
# never reaches the platform's limit for one sleep.
MAX_SLEEP = 3600.0
_EXIF_ORIENTATION = 0x0112
# Modes Pillow's reduce() works on; others are converted first.
_REDUCIBLE = ("L", "LA", "RGB", "RGBA", "RGBX", "I", "F")

T = TypeVar("T")


class CliError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


# -- commands and their run ------------------------------------------------------------------


class Context:
    """What one run of a command shares with :func:`fbgfx.cli.main`.

    Attributes:
        notes: Remarks for the user, printed (``fbgfx: note: ...``) only when the
            command succeeds, so an error stays one line.
        live: The status line being rewritten on a terminal, if any: an error or
            Ctrl-C ends it first so the message starts on a line of its own.
    """

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.live: Status | None = None

    def note(self, text: str) -> None:
        """Add a remark for the user, shown after success."""
        self.notes.append(text)

    def end_live_line(self) -> None:
        """End a live status line so what follows starts on its own line."""
        if self.live is not None:
            self.live = None
            sys.stderr.write("\n")


@dataclass(frozen=True)
class Command:
    """One ``fbgfx`` command: what the parser shows and what runs.

    A command module defines ``COMMAND = Command(...)``; :mod:`fbgfx.cli` lists the
    modules once (``COMMANDS``). A new command is a new module and one entry there.

    Attributes:
        name: The word on the command line.
        help: One line for ``fbgfx --help``.
        description: The paragraph of ``fbgfx NAME --help``.
        add_arguments: Adds the command's own options to its parser.
        run: Runs it; returns the exit status.
        out: Whether it takes ``--out FILE.png`` (save the screen at exit).
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], int]
    out: bool = field(default=False)


# -- argument types ------------------------------------------------------------------------


def seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"seconds must be a finite number >= 0, got {text!r}")
    return value


def add_rotate(parser: argparse.ArgumentParser) -> None:
    """``--rotate DEG``: the picture turned clockwise on the panel (``Screen(rotate=)``)."""
    parser.add_argument(
        "--rotate",
        type=_degrees,
        metavar="DEG",
        help="turn the picture DEG degrees clockwise on the panel: 0, 90, 180 or 270 (default: $FBGFX_ROTATE, else 0)",
    )


def _degrees(text: str) -> int:
    """argparse type: 0, 90, 180 or 270."""
    try:
        return resolve_rotate(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 0, 90, 180 or 270 (degrees clockwise), got {text!r}") from None


def screen_size(fb: fbgfx.Framebuffer, rotate: int | None) -> tuple[int, int]:
    """The (width, height) a Screen opened with ``rotate`` draws on (the panel's size,
    swapped when turned a quarter turn)."""
    return (fb.height, fb.width) if resolve_rotate(rotate) in (90, 270) else (fb.width, fb.height)


def add_fit(parser: argparse.ArgumentParser) -> None:
    """``--fit`` / ``--fill`` / ``--stretch`` / ``--center``, one of them, default fit."""
    group = parser.add_mutually_exclusive_group()
    helps = {
        "fit": "scale to fit inside the screen, keeping the aspect ratio (default)",
        "fill": "scale to cover the whole screen, cropping the overflow",
        "stretch": "scale to the screen size, ignoring the aspect ratio",
        "center": "no scaling, centred (cropped when larger)",
    }
    for name, text in helps.items():
        group.add_argument(f"--{name}", dest="fit", action="store_const", const=name, help=text)
    parser.set_defaults(fit="fit")


def parse_size(text: str | None, what: str = "--size") -> tuple[int, int]:
    """Parse ``WIDTHxHEIGHT``.

    Raises:
        CliError: Not two positive integers joined by ``x``, or a side beyond 16384.
    """
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m:
        raise CliError(f"{what} must be WIDTHxHEIGHT, e.g. 800x480, not {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (0 < w <= MAX_SIDE and 0 < h <= MAX_SIDE):
        raise CliError(f"{what} {w}x{h} is out of range (1..{MAX_SIDE} per side)")
    return w, h


def parse_region(text: str, width: int, height: int) -> tuple[int, int, int, int]:
    """Parse ``X,Y,W,H`` and check it lies inside a ``width`` x ``height`` page.

    Raises:
        CliError: Not four integers, or not inside the page.
    """
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"--region must be X,Y,W,H (four integers), not {text!r}") from None
    if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > width or y + h > height:
        raise CliError(f"--region {text} is not inside the {width}x{height} screen")
    return x, y, w, h


def parse_background(text: str) -> tuple[int, int, int]:
    """A ``--background`` colour as RGB, read as drawing reads colours (:func:`fbgfx.color.parse_color`).

    Raises:
        CliError: Not a colour.
    """
    try:
        return parse_color(text)[:3]
    except ValueError:
        raise CliError(f"unknown colour {text!r}: use a name (black, navy), #rrggbb or rgb(r,g,b)") from None


# -- errors --------------------------------------------------------------------------------


def describe_error(e: BaseException) -> str:
    """An exception as the one line the user reads (no type names, no newlines)."""
    if isinstance(e, FramebufferError):
        text = str(e)
    elif isinstance(e, OSError) and e.strerror:
        # a file descriptor (an int) names nothing the user knows
        named = e.filename not in (None, "") and not isinstance(e.filename, int)
        text = f"{e.filename}: {e.strerror}" if named else e.strerror
    elif isinstance(e, MemoryError):
        text = "out of memory"
    elif isinstance(e, OverflowError):
        text = f"a number is too large ({e})"
    elif isinstance(e, RecursionError):
        text = f"input nested too deeply ({e})"
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split())


# -- the device and the screen ---------------------------------------------------------------


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


# -- writing pictures --------------------------------------------------------------------------


def image_format(path: str) -> str:
    """Pillow's format name for ``path``'s extension.

    Raises:
        CliError: Pillow writes no format with that extension.
    """
    ext = os.path.splitext(path)[1].lower()
    Image.init()
    if ext not in Image.EXTENSION or Image.EXTENSION[ext] not in Image.SAVE:
        raise CliError(f"{path}: unknown image type {ext or '(no extension)'!r}; use .png, .bmp, .jpg ...")
    return Image.EXTENSION[ext]


def save_image(image: Image.Image, path: str) -> None:
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
    fmt = image_format(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        old: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        old = None
    existing = old is not None and stat.S_ISREG(old.st_mode)
    fd, tmp = _create_beside(path, directory)
    try:
        with os.fdopen(fd, "wb") as f:
            if old is not None and existing:
                # Keep the owner and mode (root grabbing over a user's file). A new
                # file, or one replacing a symlink, has what open() gives under the umask.
                with contextlib.suppress(OSError):
                    os.fchown(f.fileno(), old.st_uid, old.st_gid)
                os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
            image.save(f, format=fmt)
        try:
            os.replace(tmp, path)
        except OSError as e:  # its error names the temporary file: name the user's
            raise OSError(e.errno, f"cannot save the picture there ({e.strerror})", path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_beside(path: str, directory: str) -> tuple[int, str]:
    """Create a new, uniquely named file beside ``path``; return its fd and name.

    ``O_EXCL | O_NOFOLLOW``: never an existing file, never through a symlink. Mode
    0666 so the kernel applies the umask, as it would for ``open(path, "w")``; the
    umask is not read (changing it to read it would race with other threads).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    prefix = f".{os.path.basename(path)}."
    for _ in range(100):
        tmp = os.path.join(directory, f"{prefix}{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", os.path.join(directory, prefix + "*.tmp"))


# -- reading pictures --------------------------------------------------------------------------


@contextlib.contextmanager
def reading(path: str, what: str = "an image") -> Iterator[None]:
    """Turn Pillow's many ways of failing on ``path`` into one :class:`CliError` line."""
    try:
        yield
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not {what}") from None
    except UnidentifiedImageError:
        raise CliError(f"{path}: not {what} Pillow can read") from None
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as e:
        raise CliError(f"{path}: cannot read {what} ({describe_error(e)})") from None


def read_fifo(path: str, deadline: float | None, what: str = "a picture", option: str = "--duration") -> bytes | None:
    """All of ``path`` when it is a FIFO, read before ``deadline``; None for anything
    else (read as usual).

    Opening a FIFO for reading waits for a writer, outside any deadline: here it is
    opened without waiting, and its bytes are read as they come until the writer
    closes it, so ``--duration`` bounds a FIFO nobody writes to.

    Raises:
        CliError: ``deadline`` (from ``option``) came before the writer finished.
    """
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # reading it reports why, as for any file
    chunks: list[bytes] = []
    try:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        while True:
            wait = MAX_SLEEP if deadline is None else min(deadline - now(), MAX_SLEEP)
            if wait <= 0:
                raise CliError(
                    f"{path}: the FIFO's writer did not finish {what} before {option} ended"
                    if chunks
                    else f"{path}: nothing was written to the FIFO before {option} ended"
                )
            if not poll.poll(max(1, int(wait * 1000))):
                continue
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not data:  # the writer closed it
                return b"".join(chunks)
            chunks.append(data)
    finally:
        os.close(fd)


def check_image(path: str, data: bytes | None = None) -> None:
    """Check that ``path`` opens as an image (header only; nothing is decoded).

    Args:
        path: The file.
        data: Its bytes, when already read (a FIFO, see :func:`read_fifo`).

    Raises:
        CliError: Missing, unreadable or not an image.
    """
    with reading(path), Image.open(path if data is None else io.BytesIO(data)):
        pass


def load_image(
    path: str, screen: tuple[int, int] | None = None, fit: str = "fit", data: bytes | None = None
) -> Image.Image:
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
        data: The file's bytes, when already read (a FIFO, see :func:`read_fifo`).

    Raises:
        CliError: The file is missing, unreadable or not an image.
    """
    with reading(path):
        im: Image.Image = Image.open(path if data is None else io.BytesIO(data))
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
    mode = "RGBA" if has_alpha(im) else "RGB"
    return im if im.mode == mode else im.convert(mode)


def _reduce(im: Image.Image, side: int) -> Image.Image:
    """``im`` made smaller by the largest whole factor that keeps both sides >= ``side``.

    Any fit then only scales down from there, so what shows is unchanged.
    """
    factor = min(im.width // side, im.height // side)
    if factor < 2:
        return im
    if im.mode not in _REDUCIBLE:
        # Palette and bilevel pictures are converted first (they are the small ones:
        # a byte or less a pixel).
        im = im.convert("RGBA" if has_alpha(im) else "RGB")
    return im.reduce(factor)


def _crop_middle(im: Image.Image, width: int, height: int) -> Image.Image:
    """The middle ``width`` x ``height`` of a larger picture, as ``fit="center"`` shows it."""
    if im.width <= width and im.height <= height:
        return im
    # The same rounding as Screen.present's centring, so the same pixels show.
    left = max(0, -((width - im.width) // 2))
    top = max(0, -((height - im.height) // 2))
    return im.crop((left, top, left + min(im.width, width), top + min(im.height, height)))


# -- time -----------------------------------------------------------------------------------


def now() -> float:
    """The clock every deadline is on (``time.monotonic``)."""
    return time.monotonic()


def wait_until(deadline: float | None) -> None:
    """Sleep until ``deadline`` (see :func:`now`); forever (until Ctrl-C) when None."""
    while True:
        current = now()
        if deadline is not None and current >= deadline:
            return
        time.sleep(MAX_SLEEP if deadline is None else min(deadline - current, MAX_SLEEP))


def earlier(a: float | None, b: float | None) -> float | None:
    """The earlier of two deadlines, None meaning never."""
    return b if a is None else a if b is None else min(a, b)


class _TimedOut(enum.Enum):
    """The type of :data:`TIMED_OUT` (an enum, so type checkers narrow ``is`` tests)."""

    TIMED_OUT = "timed out"


#: What :meth:`Prefetch.get` returns when its deadline comes before the next item.
TIMED_OUT: Final = _TimedOut.TIMED_OUT


class Prefetch(Generic[T]):
    """Run an iterator in a thread, up to ``depth`` items ahead of the consumer.

    Reading and decoding (both release the GIL) overlap with showing; and the
    consumer can stop waiting at a deadline however slow the source is.
    """

    def __init__(self, source: Iterator[T], depth: int, name: str = "fbgfx-reader") -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(source,), name=name, daemon=True)
        self._thread.start()

    def _run(self, source: Iterator[T]) -> None:
        try:
            for item in source:
                if not self._put(("item", item)):
                    return
            self._put(("end", None))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(("error", e))

    def _put(self, message: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Prefetch[T]:
        return self

    def __next__(self) -> T:
        item = self.get(None)
        if item is None or item is TIMED_OUT:
            raise StopIteration
        return item

    def get(self, deadline: float | None) -> T | _TimedOut | None:
        """The next item; None after the last; :data:`TIMED_OUT` if ``deadline`` came first.

        Raises:
            BaseException: Whatever the source raised, re-raised in this thread.
        """
        if self._done:
            return None
        while True:
            wait = MAX_SLEEP if deadline is None else min(deadline - now(), MAX_SLEEP)
            if wait <= 0:
                return TIMED_OUT
            try:
                kind, value = self._queue.get(timeout=wait)
                break
            except queue.Empty:
                continue
        if kind == "item":
            return value  # type: ignore[no-any-return]
        self._done = True
        if kind == "error":
            raise value
        return None

    def close(self) -> None:
        """Stop the thread (a reader blocked on a quiet pipe is a daemon: let it be)."""
        self._stop.set()
        self._thread.join(timeout=0.2)


def next_before(items: Iterator[T], deadline: float | None) -> T | _TimedOut | None:
    """The next item, None at the end, :data:`TIMED_OUT` when ``deadline`` comes first."""
    if isinstance(items, Prefetch):
        return items.get(deadline)
    return next(items, None)


# -- progress ------------------------------------------------------------------------------------


class Status:
    """frames/fps/drops on one self-rewriting stderr line, when stderr is a terminal."""

    def __init__(self, context: Context, always_summary: bool, verb: str = "played") -> None:
        self.live = sys.stderr.isatty()
        self.summary = always_summary or self.live
        self.start = time.monotonic()
        self.shown = self.dropped = 0
        self._last = 0.0
        self._verb = verb
        self._context = context
        context.live = self if self.live else None

    def frame(self, dropped: bool) -> None:
        """Count a frame shown or dropped; refresh the live line twice a second."""
        if dropped:
            self.dropped += 1
        else:
            self.shown += 1
        if self.live:
            current = time.monotonic()
            if current - self._last >= 0.5:
                self._last = current
                sys.stderr.write(f"\rplay: {self.text(current)}  ")
                sys.stderr.flush()

    def text(self, current: float) -> str:
        """``N frames, F fps, D dropped, S s``."""
        elapsed = max(current - self.start, 1e-9)
        return f"{self.shown} frames, {self.shown / elapsed:.1f} fps, {self.dropped} dropped, {elapsed:.1f} s"

    def finish(self) -> None:
        """End the live line with the summary (always on a terminal, else when asked)."""
        self._context.live = None
        if self.summary:
            end = "\r" if self.live else ""
            sys.stderr.write(f"{end}fbgfx: {self._verb} {self.text(time.monotonic())}\n")
            sys.stderr.flush()
