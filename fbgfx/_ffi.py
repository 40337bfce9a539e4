"""The one gateway to the compiled module ``fbgfx._native``.

Every other module reaches C through ``from ._ffi import ffi, lib`` and turns a
negative return (``-errno``) into fbgfx's errors with :func:`check`. No cdata leaves
the modules that call C.
"""

from __future__ import annotations

import errno
import mmap
import os
from typing import Any

from .errors import FramebufferError

try:
    from ._native import ffi, lib
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "fbgfx._native is not built: install fbgfx with pip (`pip install .` or "
        "`pip install -e .`), which compiles it; it needs gcc and linux-libc-dev"
    ) from e

__all__ = [
    "check",
    "check_value",
    "detach",
    "fast_ellipse",
    "fast_line",
    "fast_rect",
    "fast_smooth_circle",
    "fast_smooth_line",
    "fast_smooth_polygon",
    "ffi",
    "lib",
]

# Surface's one-call drawing fast paths as plain CPython functions (native/fastcall.c):
# a cffi call costs more than a short line. Each returns a negative number for anything
# it does not read exactly, and the caller takes its general path.
if lib.fastcall_install() == 0:
    from ._native import fast_ellipse, fast_line, fast_rect, fast_smooth_circle, fast_smooth_line, fast_smooth_polygon
else:  # pragma: no cover - PyPy, where cffi's own calls are cheap

    def fast_line(t: int, xy: Any, fill: Any, cache: Any, /) -> int:  # noqa: ARG001 - the C signature
        """Always a miss: the caller takes its cffi path."""
        return -1

    def fast_smooth_line(t: int, f: int, xy: Any, fill: Any, width: Any, /) -> int:  # noqa: ARG001 - the C signature
        """Always a miss: the caller takes its cffi path."""
        return -1

    def fast_smooth_circle(t: int, f: int, xy: Any, fill: Any, radius: Any, width: Any, /) -> int:  # noqa: ARG001 - the C signature
        """Always a miss: the caller takes its cffi path."""
        return -1

    fast_rect = fast_ellipse = fast_line
    fast_smooth_polygon = fast_smooth_line


def check(rc: int, doing: str, path: str | None = None) -> int:
    """Return ``rc`` when it is not negative, else raise for ``-rc`` as an errno.

    Args:
        rc: What the C function returned: a count or 0, or ``-errno``.
        doing: What was being done, in the user's words (``"panning (FBIOPAN_DISPLAY)"``).
        path: The device path for the message, if there is one.

    Raises:
        FramebufferError: ``rc`` is ``-errno``.
    """
    if rc < 0:
        raise FramebufferError.from_errno(-rc, doing, path)
    return rc


def check_value(rc: int, doing: str) -> int:
    """Like :func:`check` for drawing and conversion kernels, whose only failure is bad
    arguments: ``-EINVAL`` and ``-ERANGE`` become ``ValueError``, ``-ENOMEM``
    ``MemoryError``; anything else is a :class:`FramebufferError`.
    """
    if rc >= 0:
        return rc
    err = -rc
    if err in (errno.EINVAL, errno.ERANGE, errno.EDOM):
        raise ValueError(f"{doing}: {os.strerror(err)}")
    if err == errno.ENOMEM:
        raise MemoryError(f"{doing}: out of memory")
    raise FramebufferError.from_errno(err, doing)


def detach(memory: Any) -> bool:
    """Put private zeroed memory in place of a mapping, at the same address: views of
    ``memory`` (an object with the buffer protocol over a page-aligned mapping) stay
    valid NumPy arrays but no longer reach the device or file it mapped. The memory
    is unmapped when the object that mapped it goes (``munmap`` of the same range).

    Returns:
        False when ``memory`` is not page-aligned (nothing done).
    """
    with memoryview(memory) as view:
        length = view.nbytes
    if not length:
        return False
    base = ffi.from_buffer(memory)
    address = int(ffi.cast("uintptr_t", base))
    if address % mmap.PAGESIZE:
        return False
    # (native/drm.c's helper: a MAP_FIXED private anonymous mapping over the range)
    check(lib.fbgfx_drm_detach_pages(base, length), "releasing the video memory mapping")
    return True
