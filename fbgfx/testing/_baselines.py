"""Where the pytest plugin's baseline pictures live, and how they are read and written.

A baseline is ``screens/<module>/<Class>/<function>[<parameter id>]/<name>.png`` in the
test file's folder: the path names the test whole, so two tests never share a picture
(parametrized tests, same-named methods of two classes, same-named tests of two files).
Every part of the path is a file name made from the test's names (odd characters become
``_`` and a short hash keeps them apart), so no test name reaches outside ``screens/``.

Writes are atomic (a unique temporary file in the same folder, then a rename), go
through folder descriptors opened without following symbolic links, and replace a
symbolic link at the picture's own path instead of writing through it: a baseline is
never written outside ``screens/``. A picture that cannot be read is
:class:`Unreadable`; the plugin reports it in one line and ``--fbgfx-update`` replaces it.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

__all__ = ["LEGACY", "Unreadable", "baseline_parts", "digest", "load", "write"]

#: The folder of a test's baselines before fbgfx named the whole test: ``screens/<function>``.
LEGACY = "screens/<function>"
_PART = 80  # the longest file name a part of the path is given (then it is cut, with a hash)


class Unreadable(Exception):
    """A baseline file that is there but is not a picture Pillow reads; says why."""


def part(text: str) -> str:
    """A file name for one part of a baseline's path: ``text`` where it is a plain name
    (word characters, ``.-[]=,+``, not starting with a dot), else cleaned and followed by
    a hash of ``text`` so that two names never clean to one."""
    clean = re.sub(r"[^\w.\-\[\]=,+]", "_", text)
    clean = re.sub(r"^\.+", "_", clean) or "_"
    if clean == text and len(text) <= _PART:
        return text
    return f"{clean[:_PART]}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def baseline_parts(module: str, classes: Sequence[str], function: str, param: str | None) -> list[str]:
    """The folders under ``screens/`` of one test's baselines."""
    test = function if param is None else f"{function}[{param}]"
    return [part(module), *(part(c) for c in classes), part(test)]


def digest(picture: np.ndarray, ignored: np.ndarray | None) -> str:
    """A fingerprint of a picture's pixels outside ``ignored``, to tell two pictures apart."""
    pixels = picture.copy() if ignored is not None else picture
    if ignored is not None:
        pixels[ignored] = 0
    h = hashlib.sha256(repr(pixels.shape).encode())
    h.update(np.ascontiguousarray(pixels).tobytes())
    return h.hexdigest()


def load(path: Path) -> np.ndarray | None:
    """The baseline as an (h, w, 3) uint8 array; None when there is none.

    Raises:
        Unreadable: The file is there but is no picture (cut short, not a PNG, a folder...).
    """
    try:
        with Image.open(path) as im:
            im.load()
            return np.asarray(im.convert("RGB"))
    except FileNotFoundError:
        return None
    except Exception as e:  # noqa: BLE001 - whatever Pillow raises for a damaged file
        why = " ".join(str(e).split()) or type(e).__name__
        raise Unreadable(why) from None


def write(root: Path, parts: Sequence[str], name: str, image: Image.Image) -> Path:
    """Write ``image`` as ``root/parts.../name``: atomically, never outside ``root``.

    Raises:
        OSError: A folder on the way is a symbolic link or not a folder (``ELOOP``,
            ``ENOTDIR``), or the file cannot be written.
    """
    data = io.BytesIO()
    image.save(data, format="PNG")
    os.makedirs(root, exist_ok=True)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(root, flags)
    try:
        for p in parts:
            try:
                os.mkdir(p, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                sub = os.open(p, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(
                        e.errno, "a symbolic link or a file where a baseline folder goes", str(root / p)
                    ) from None
                raise
            os.close(fd)
            fd, root = sub, root / p
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data.getvalue())
            # a rename replaces a symbolic link at the picture's path, never writes through it
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
    return root / name
