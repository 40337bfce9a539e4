"""Build the cffi API-mode module ``fbgfx._native`` from the plain files in native/.

Every ``*.cdef`` file is a declaration block and every ``*.c`` file a C source; the
C compiler checks the declarations against the kernel headers included by
``prelude.h``. Adding a kernel file to native/ needs no change here.

``abi/*.cdef`` declare system libraries that fbgfx opens at run time in cffi's ABI mode
(libswscale, libasound: no headers or link step needed at build time). They are not
compiled; their text is stored in the module (``fbgfx_abi_cdef``) for fbgfx/_foreign.py,
so an installed fbgfx reads no source file.
"""

import pathlib
import shutil
import sys
import sysconfig

from cffi import FFI

HERE = pathlib.Path(__file__).resolve().parent


def _check_toolchain() -> None:
    """Fail early with the package to install rather than a compiler traceback."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        sys.exit(f"fbgfx: no C compiler ({cc!r}) found: install 'gcc' (apt-get install gcc)")
    if not any(pathlib.Path(d, "linux", "fb.h").exists() for d in ("/usr/include", "/usr/local/include")):
        sys.exit("fbgfx: <linux/fb.h> not found: install the kernel headers (apt-get install linux-libc-dev)")


def _read(pattern: str) -> str:
    return "\n".join(p.read_text() for p in sorted(HERE.glob(pattern)))


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


_check_toolchain()
ffibuilder = FFI()
ffibuilder.cdef(_read("*.cdef"))
ffibuilder.set_source(
    "fbgfx._native",
    (HERE / "prelude.h").read_text() + "\n" + _read("*.c") + "\n" + _abi_declarations(),
    # -fno-wrapv undoes Python's -fwrapv, which stops GCC vectorising int-indexed loops.
    extra_compile_args=["-O3", "-std=gnu11", "-fno-strict-aliasing", "-fno-wrapv"],
    py_limited_api=True,
    include_dirs=[str(HERE)],  # native/drm_uapi.h
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
