"""Pictures in and out of the ``fbgfx`` commands: reading images (files and FIFOs,
within a deadline), checking them before decoding, and writing PNGs in place safely.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import select
import stat
from collections.abc import Iterator

from PIL import Image, ImageOps, UnidentifiedImageError

from ..convert import has_alpha
from ._clock import MAX_SLEEP, now
from ._command import CliError, describe_error, name_too_long

__all__ = ["check_image", "image_format", "load_image", "read_fifo", "reading", "save_image"]


_EXIF_ORIENTATION = 0x0112


# Modes Pillow's reduce() works on; others are converted first.
_REDUCIBLE = ("L", "LA", "RGB", "RGBA", "RGBX", "I", "F")


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
            if e.errno == errno.ENAMETOOLONG:
                raise OSError(e.errno, e.strerror, path) from None
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
    prefix = f".{os.path.basename(path)[:64]}."  # short: a name the filesystem takes gets a temporary one
    for _ in range(100):
        tmp = os.path.join(directory, f"{prefix}{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", os.path.join(directory, prefix + "*.tmp"))


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
        if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
            raise CliError(name_too_long(path)) from None
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
