#!/usr/bin/env bash
# Build fbgfx._native with AddressSanitizer and UndefinedBehaviorSanitizer into a
# temporary copy of the package and run the hardware-free test suite against it. The
# normal in-place build (fbgfx/_native*.so) is not touched: the copy lives in its own
# directory and is imported from there.
#
#   bash .ci/asan.sh [extra pytest arguments]
#
# Python itself is not instrumented, so libasan is preloaded; leak checking is off
# because CPython keeps memory until exit by design.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/fbgfx-asan.XXXXXX")
# pytest captures stderr, so sanitizer reports go to files, printed at the end
report() {
    local rc=$?
    if compgen -G "$work/asan-report.*" > /dev/null; then
        echo "asan: AddressSanitizer output:" >&2
        cat "$work"/asan-report.* >&2
        # warnings (a refused huge allocation) are shown; errors and undefined
        # behaviour (a signed overflow, a misaligned store) fail the run
        if grep -q -e "ERROR: AddressSanitizer" -e "runtime error:" "$work"/asan-report.*; then
            rc=1
        fi
    fi
    rm -rf "$work"
    exit $rc
}
trap report EXIT

# A copy of the working tree (tests use examples/, README.md, ...) without git data,
# caches or the built module.
mkdir -p "$work/src"
tar -C "$repo" -cf - --exclude=./.git --exclude=./build --exclude='*.so' --exclude='*.o' \
    --exclude=__pycache__ --exclude=.pytest_cache --exclude=.hypothesis --exclude='*.egg-info' . |
    tar -C "$work/src" -xf -
rm -f "$work/src/fbgfx/_native.c"

# Build the extension with the sanitizer, straight from native/build_ffi.py.
(
    cd "$work/src"
    CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g" \
    LDFLAGS="-fsanitize=address,undefined" \
    python - <<'EOF'
import runpy, pathlib
ffi = runpy.run_path("native/build_ffi.py")["ffibuilder"]
# build_ffi.py names its C files relative to the folder it is run from (setuptools wants
# relative paths), so the copy is built where it is: the module lands in fbgfx/
so = pathlib.Path(ffi.compile(tmpdir=".", verbose=False))
print(f"asan: built {so.name}")
EOF
)

libasan=$(gcc -print-file-name=libasan.so)
if [ ! -e "$libasan" ]; then
    echo "asan: libasan.so not found (apt-get install libasan8 or gcc)" >&2
    exit 1
fi

cd "$work/src"
export LD_PRELOAD="$libasan"
# child processes (examples, CLI tests) import the sanitized copy too
export PYTHONPATH="$work/src${PYTHONPATH:+:$PYTHONPATH}"
# a small quarantine keeps the memory overhead low; a huge allocation returns NULL
# (NumPy raises MemoryError) instead of aborting the run; SIGBUS is left to fbgfx's guard
# and the default action, as without the sanitizer (a fault the guard does not excuse
# must end the process by the signal, which tests/device/test_file_space.py checks)
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:handle_sigbus=0:quarantine_size_mb=32:allocator_may_return_null=1:log_path=$work/asan-report:${ASAN_OPTIONS:-}"
# UndefinedBehaviorSanitizer reports each kind once and carries on; the report fails the run
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$work/asan-report:${UBSAN_OPTIONS:-}"
# Make sure the sanitized copy is what gets imported, not the repository's build.
python - "$work/src" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import fbgfx._native as native
assert native.__file__.startswith(sys.argv[1]), native.__file__
print(f"asan: testing {native.__file__}")
EOF
# The thread tests (tests/draw/test_native_threads.py) draw more rounds here: a C kernel
# reading a buffer another thread freed fails the run even when its pixels come out right.
export FBGFX_THREAD_ROUNDS="${FBGFX_THREAD_ROUNDS:-5}"
# Left out: the web view's tests (its browser tests start Chromium's driver, which aborts
# with libasan preloaded), the pytest plugin's own runs and the docs: they reach no C of
# fbgfx's that the drawing, screen and video tests do not, and cost a third of the time.
python -m pytest -q -p no:cacheprovider -m "not kernel" --ignore=tests/kernel --ignore=tests/serve \
    --ignore=tests/project --ignore=tests/testing/test_pytest_plugin.py "$@"
