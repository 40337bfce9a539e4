"""The drawing tests again, with the native module built under AddressSanitizer.

Slow (a separate build), so it runs only when asked: ``FBGFX_ASAN=1 python -m pytest
tests/test_surface_asan.py``. It copies the package and native/ into a temporary
folder, builds ``fbgfx._native`` with ``-fsanitize=address``, and runs the Surface,
text, golden and fuzz tests against it in a child Python with libasan preloaded; any
out-of-bounds access in the C kernels aborts that run.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ["test_surface.py", "test_text.py", "test_surface_golden.py", "test_surface_fuzz.py"]


@pytest.mark.skipif(os.environ.get("FBGFX_ASAN") != "1", reason="set FBGFX_ASAN=1 to build and test under AddressSanitizer")
def test_drawing_suite_under_address_sanitizer(tmp_path):
    """The drawing test files pass with an ASan-instrumented native module."""
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("gcc is needed for the AddressSanitizer build")
    libasan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(libasan):
        pytest.skip("libasan is not installed (apt-get install libasan8 or gcc's runtime)")
    for name in ("fbgfx", "native", "tests"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("_native*.so", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    env = dict(os.environ, CFLAGS="-fsanitize=address -fno-omit-frame-pointer -DFBGFX_NO_CLONES",
               LDFLAGS="-fsanitize=address")
    build = subprocess.run([sys.executable, "native/build_ffi.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               PYTHONPATH=str(tmp_path), FBGFX_ASAN="0")
    code = ("import sys, fbgfx._native as n; assert n.__file__.startswith(sys.argv[1]), n.__file__; import pytest; "
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider'] + sys.argv[2:]))")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)] + [f"tests/{t}" for t in TESTS],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, (run.stdout[-3000:] + run.stderr[-3000:])
