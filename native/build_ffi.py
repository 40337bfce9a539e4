"""Build the cffi API-mode module ``fbgfx._native`` from the plain files in native/.

Each part of the module is one line of ``PARTS``: its declarations for Python
(``NAME.cdef``), the header that declares the same to C, and the C files that implement
them. Every C file includes its own headers and is compiled on its own; cffi's glue
includes the headers, so the C compiler checks each declaration against its header
(and the kernel's, included by ``prelude.h``). Adding a C file is one line here.

``abi/*.cdef`` declare system libraries that fbgfx opens at run time in cffi's ABI mode
(libswscale, libasound: no headers or link step needed at build time). They are not
compiled; their text is stored in the module (``fbgfx_abi_cdef``) for fbgfx/_foreign.py,
so an installed fbgfx reads no source file.
"""

import os
import pathlib
import shutil
import sys
import sysconfig

from cffi import FFI

HERE = pathlib.Path(__file__).resolve().parent

# (declarations, header, sources), in the order the declarations need each other.
PARTS = [
    ("fb.cdef", "ioctl.h", ["ioctl.c"]),
    ("kd.cdef", "ioctl.h", []),
    ("color.cdef", "color.h", ["color.c"]),
    ("convert.cdef", "convert.h", ["convert.c"]),
    ("arrow.cdef", "arrow.h", []),
    ("draw.cdef", "draw.h", ["draw.c", "draw_ellipse.c", "draw_log.c"]),
    ("smooth.cdef", "smooth.h", ["smooth.c", "smooth_render.c"]),
    ("rotate.cdef", "rotate.h", ["rotate.c"]),
    ("glyph.cdef", "glyph.h", ["glyph.c"]),
    ("input.cdef", "input.h", ["input.c"]),
    ("uinput.cdef", "uinput.h", ["uinput.c"]),
    ("drm.cdef", "drm.h", ["drm.c"]),
    ("drm_atomic.cdef", "drm_atomic.h", []),
    ("evgrab.cdef", "evgrab.h", ["evgrab.c"]),
    ("mirror.cdef", "mirror.h", ["mirror.c"]),
    ("sigbus.cdef", "sigbus.h", ["sigbus.c"]),
    ("fastcall.cdef", "fastcall.h", ["fastcall.c"]),
    ("abi.cdef", None, []),  # fbgfx_abi_cdef, written below
]


def _check_toolchain() -> None:
    """Fail early with the package to install rather than a compiler traceback."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        sys.exit(f"fbgfx: no C compiler ({cc!r}) found: install 'gcc' (apt-get install gcc)")
    if not any(pathlib.Path(d, "linux", "fb.h").exists() for d in ("/usr/include", "/usr/local/include")):
        sys.exit("fbgfx: <linux/fb.h> not found: install the kernel headers (apt-get install linux-libc-dev)")


def _c_string(text: str) -> str:
    """``text`` as a C string literal, one source line per line of text."""
    lines = text.replace("\\", "\\\\").replace('"', '\\"').splitlines()
    return "\n".join(f'        "{line}\\n"' for line in lines) or '""'


def _abi_declarations() -> str:
    """C for ``fbgfx_abi_cdef(name)``: the text of native/abi/NAME.cdef, or NULL."""
    cases = "".join(
        f'    if (strcmp(name, "{p.stem}") == 0)\n        return\n{_c_string(p.read_text())};\n'
        for p in sorted((HERE / "abi").glob("*.cdef"))
    )
    return f"const char *fbgfx_abi_cdef(const char *name) {{\n{cases}    return NULL;\n}}\n"


def _glue() -> str:
    """cffi's own C file: the headers of every part, then fbgfx_abi_cdef."""
    headers = dict.fromkeys(header for _, header, _ in PARTS if header)
    return "".join(f'#include "{h}"\n' for h in headers) + "\n" + _abi_declarations()


_check_toolchain()
ffibuilder = FFI()
ffibuilder.cdef("\n".join((HERE / cdef).read_text() for cdef, _, _ in PARTS))
ffibuilder.set_source(
    "fbgfx._native",
    _glue(),
    # relative to where the build runs (setuptools refuses absolute paths): the project root
    sources=[os.path.relpath(HERE / source) for _, _, sources in PARTS for source in sources],
    # -fno-wrapv undoes Python's -fwrapv, which stops GCC vectorising int-indexed loops.
    extra_compile_args=["-O3", "-std=gnu11", "-fno-strict-aliasing", "-fno-wrapv"],
    py_limited_api=True,
    include_dirs=[str(HERE)],
    depends=[str(p) for p in sorted(HERE.glob("*.h"))],  # a changed header rebuilds the module
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
