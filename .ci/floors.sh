#!/usr/bin/env bash
# CI: the hardware-free suite on x86 with the declared floors, Debian bookworm's (Raspberry
# Pi OS Bookworm's) versions: numpy 1.24, Pillow 9.4, cffi 1.15 (PyPI's wheels of those
# versions), so that a test that depends on a newer version fails here before it fails for
# a user. armhf runs Debian's own builds of the same versions (.ci/arm.sh).
#
# The venv is cached outside the tree ($FBGFX_FLOORS_VENV, default
# /var/cache/fbgfx-floors/venv-pyX.Y) and rebuilt when its recipe changes; fbgfx is built
# with the venv's cffi in a copy of the tracked files, so the checkout's own build is not
# touched.   bash .ci/floors.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

floors=(numpy==1.24.4 pillow==9.4.0 cffi==1.15.1)
# The test extra's other packages, newest (skia-python is left out: its wheels need a
# newer numpy; the smooth-shape tests use recorded figures without it).
others=(setuptools wheel pytest hypothesis pytest-xdist "av>=10" "websockets>=13")
py="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
venv="${FBGFX_FLOORS_VENV:-/var/cache/fbgfx-floors/venv-py$py}"
recipe="${floors[*]} ${others[*]}"

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/recipe" 2>/dev/null)" != "$recipe" ]; then
    echo "floors.sh: making $venv (${floors[*]})"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --only-binary=numpy,pillow,cffi \
        "${floors[@]}" "${others[@]}" >/tmp/fbgfx-floors-pip.log 2>&1 \
        || { tail -n 30 /tmp/fbgfx-floors-pip.log >&2; exit 1; }
    echo "$recipe" >"$venv/recipe"
fi

work="$(mktemp -d /tmp/fbgfx-floors.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# The files a checkout has (tracked, and new ones not ignored), not local build products.
git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$work" 2>/dev/null || true
cd "$work"
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps -e . >build.log 2>&1 \
    || { tail -n 30 build.log >&2; exit 1; }
"$venv/bin/python" -c 'import platform, numpy, PIL, cffi; print("floors.sh:", platform.machine(), "Python", platform.python_version(), "numpy", numpy.__version__, "Pillow", PIL.__version__, "cffi", cffi.__version__)'
rc=0
# No Selenium here: the browser tests skip (the server they drive runs through test_serve.py).
"$venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 -m "not kernel" --ignore=tests/kernel "$@" || rc=$?
echo "floors.sh: done in $((SECONDS - start)) s (exit $rc)"
exit $rc
