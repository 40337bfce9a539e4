"""System libraries fbgfx calls without building against them: libswscale, libasound.

Their C declarations live in ``native/abi/NAME.cdef`` beside every other declaration of
fbgfx; the build stores that text in :mod:`fbgfx._native`, so an installed fbgfx reads
no source file. :func:`load` gives a cffi FFI (ABI mode) holding one of them and the
libraries opened with it: nothing about these libraries is needed when fbgfx is built,
and a machine without them only loses the feature that uses them.
"""

from __future__ import annotations

from typing import Any

from ._ffi import ffi as native_ffi
from ._ffi import lib as native_lib

__all__ = ["declarations", "load"]


def declarations(name: str) -> str:
    """The C declarations of ``native/abi/NAME.cdef`` (``"swscale"``, ``"alsa"``).

    Raises:
        LookupError: No such file was built into the module.
    """
    text = native_lib.fbgfx_abi_cdef(name.encode())
    if text == native_ffi.NULL:
        raise LookupError(f"fbgfx was built without native/abi/{name}.cdef")
    return native_ffi.string(text).decode()


def load(name: str, *libraries: str) -> tuple[Any, list[Any]]:
    """A new cffi FFI holding the declarations ``name``, and each of ``libraries`` (a
    file name or path for ``dlopen``) opened with them, in order.

    Raises:
        OSError: A library cannot be opened.
    """
    import cffi  # noqa: PLC0415 (ABI mode only: cffi's compiler is never imported)

    ffi = cffi.FFI()
    ffi.cdef(declarations(name))
    return ffi, [ffi.dlopen(path) for path in libraries]
