#!/usr/bin/env bash
# CI on ARM under emulation: the hardware-free suite on Debian bookworm (the base of
# Raspberry Pi OS Bookworm), in a root per architecture run by qemu-user-static:
#   arm64  numpy, Pillow and cffi wheels from PyPI (upgraded to the newest each run);
#   armhf  Debian's own python3-numpy, python3-pil and python3-cffi seen through a
#          --system-site-packages venv, as Raspberry Pi OS users run them (PyPI has no
#          32-bit ARM wheels).
# Roots are built by .ci/arm_root.sh and cached under /var/cache/fbgfx-arm; entering them
# touches nothing of the host's binfmt_misc (see .ci/arm_enter.py).
#
# Usage: .ci/arm.sh          build or reuse the roots, then run both suites
#        .ci/arm.sh deps     only install debootstrap and qemu-user-static (apt)
#        .ci/arm.sh roots    only build or reuse the roots (.ci/run starts this early)
# FBGFX_ARM_ARCHES="arm64" limits the architectures.
set -euo pipefail
cd "$(dirname "$0")/.."
arches="${FBGFX_ARM_ARCHES:-arm64 armhf}"
cache="${FBGFX_ARM_CACHE:-/var/cache/fbgfx-arm}"
export FBGFX_ARM_CACHE="$cache"

install_deps() {
    command -v debootstrap >/dev/null && [ -e /usr/lib/binfmt.d/qemu-arm.conf ] && return
    echo "arm.sh: installing debootstrap and qemu-user-static"
    export DEBIAN_FRONTEND=noninteractive
    local pkgs=(debootstrap qemu-user-static ca-certificates)
    # Refresh the package lists only when the install fails without.
    if ! apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/tmp/fbgfx-arm-apt.log 2>&1; then
        apt-get update -qq >>/tmp/fbgfx-arm-apt.log 2>&1
        apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >>/tmp/fbgfx-arm-apt.log 2>&1 \
            || { tail -n 20 /tmp/fbgfx-arm-apt.log >&2; exit 1; }
    fi
}

build_roots() {
    local pids=() arch
    for arch in $arches; do
        bash .ci/arm_root.sh "$arch" >/dev/null &
        pids+=($!)
    done
    local rc=0 pid
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    return $rc
}

case "${1:-}" in
    deps) install_deps; exit ;;
    roots) install_deps; build_roots; exit ;;
esac

start=$SECONDS
install_deps
build_roots
echo "arm.sh: roots ready in $((SECONDS - start)) s"

newest="numpy pillow cffi pytest hypothesis"

# True when the root's venv already holds the newest release of each of $newest, asked of
# the index by the host's pip (fast) rather than by pip under emulation.
venv_is_newest() {
    local site pkg latest
    site="$(echo "$1"/opt/venv/lib/python3*/site-packages)"
    for pkg in $newest; do
        latest="$(pip index versions "$pkg" 2>/dev/null | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p')"
        [ -n "$latest" ] && [ -d "$site/$pkg-$latest.dist-info" ] || return 1
    done
}

# Left out under emulation: what these check is Python-level (the web view's server, the
# pytest plugin, the docs and examples, the dropped-display attacks on the fake DRM card),
# run on x86 with the newest packages and by the floors stage with Debian's; each spawns
# interpreters or runs threads for long, which costs 35-45 % of an emulated suite's time.
# Native code, ioctl layouts, pixel formats, signals and 32-bit sizes stay in.
python_level="--ignore=tests/serve --ignore=tests/project --ignore=tests/testing/test_pytest_plugin.py --ignore=tests/drm/test_drm_dropped_attack.py"
# Also left out, measured on a full arm64 run: the command line's rooms (a new interpreter
# per case, 10-16 s each under emulation: ~400 s in all) and the screens' lifetime checks
# (200 open/close cycles per case, Python's collector: ~500 s). Both run on x86, in the
# floors stage, and the lifetime checks under ASan.
python_level="$python_level --ignore=tests/cli --ignore=tests/device/test_lifetime.py"
# The framebuffer file's truncation window (a child process per case, ~650 s on one
# architecture) is split between the two: arm64 truncates to 4096 bytes, armhf to 0.
declare -A split=(
    [arm64]="not (test_truncation_between_check_and_write_is_an_error_not_sigbus and not 4096)"
    [armhf]="not (test_truncation_between_check_and_write_is_an_error_not_sigbus and 4096)"
)

# One architecture's suite, its log in $2. Everything it writes stays in a per-run
# directory inside the root, removed afterwards, so the cached root stays as built.
run_suite() {
    local arch="$1" log="$2" root t0=$SECONDS
    root="$(bash .ci/arm_root.sh "$arch")"
    local run="/tmp/fbgfx-ci.$$.$arch"
    mkdir -p "$root$run"
    trap 'rm -rf "$root$run"' RETURN
    # The files a checkout has (tracked, and new ones not ignored), not local build products.
    git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$root$run" 2>/dev/null || true
    local enter=(python3 .ci/arm_enter.py "$root" "$arch" --) rc=0
    # Beside CI's later stages: a share of the CPU (not starved: children under emulation
    # have deadlines), the idle core whole.
    renice -n 5 -p "$BASHPID" >/dev/null
    {
        # One run per architecture at a time: it installs fbgfx (editable) into the venv.
        exec 8>"$cache/$arch.venv.lock"
        flock 8
        if [ "$arch" = arm64 ] && ! venv_is_newest "$root"; then
            # The newest wheels each run (pip under emulation takes minutes: only when needed).
            env PIP_CERT=/etc/fbgfx-host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
                "${enter[@]}" /opt/venv/bin/pip install -q --upgrade $newest
        fi
        # As the README tells Raspberry Pi users: pip builds fbgfx against the venv's
        # (for armhf, Debian's) cffi and setuptools, offline (without debug info: an eighth of
        # the emulated compile); then the entry point, the suite.
        "${enter[@]}" sh -ec "
            cd $run
            /opt/venv/bin/python -c 'import platform, sys, numpy, PIL, cffi; print(\"arm.sh: $arch\", platform.machine(), \"Python\", sys.version.split()[0], \"numpy\", numpy.__version__, \"Pillow\", PIL.__version__, \"cffi\", cffi.__version__)'
            CFLAGS=-g0 PIP_DISABLE_PIP_VERSION_CHECK=1 /opt/venv/bin/pip install -q --no-build-isolation --no-deps -e . >build.log 2>&1 \
                || { tail -n 30 build.log; exit 1; }
            rc=0
            (cd / && /opt/venv/bin/fbgfx info -d virtual:64x48 >/dev/null) || rc=\$?
            /opt/venv/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/kernel $python_level -k '${split[$arch]}' || rc=\$?
            /opt/venv/bin/pip uninstall -q -y fbgfx
            exit \$rc
        "
    } >"$log" 2>&1 || rc=$?
    echo "arm.sh: $arch suite finished in $((SECONDS - t0)) s (exit $rc)" >>"$log"
    return $rc
}

logs="$(mktemp -d /tmp/fbgfx-arm-logs.XXXXXX)"
declare -A pid
for arch in $arches; do
    run_suite "$arch" "$logs/$arch.log" &
    pid[$arch]=$!
done
rc=0
for arch in $arches; do
    wait "${pid[$arch]}" || rc=1
    echo "===== $arch ====="
    # The versions, the summary and every failure; the dots are noise.
    grep -v '^[.sxX]*\( *\[ *[0-9]*%\]\)\?$' "$logs/$arch.log" || true
done
rm -rf "$logs"
echo "arm.sh: ARM suites done in $((SECONDS - start)) s"
exit $rc
