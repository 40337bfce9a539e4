#!/usr/bin/env bash
# Build (or find cached) a Debian bookworm root for one ARM architecture, with the
# packages and the Python environment the hardware-free suite needs.
#
# Usage: .ci/arm_root.sh ARCH   (arm64 | armhf); prints the root's path on stdout.
#
# The root is built with debootstrap --foreign on the host, then its second stage and
# the venv run inside through .ci/arm_enter.py (private binfmt_misc, qemu-user-static).
# Roots are cached under $FBGFX_ARM_CACHE (default /var/cache/fbgfx-arm), keyed by a
# hash of the package list and venv recipe, so a changed recipe builds a new root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
arch="$1"
cache="${FBGFX_ARM_CACHE:-/var/cache/fbgfx-arm}"

# fonts-dejavu-core: Raspberry Pi OS has it, and the text tests compare DejaVu Sans with
# Pillow (with Pillow < 10.1 it is also fbgfx.font(size=...)'s scalable fallback).
base="python3,python3-venv,python3-dev,python3-pip,gcc,libc6-dev,linux-libc-dev,libffi-dev,ca-certificates,fonts-dejavu-core"
case "$arch" in
    # 64-bit: PyPI has numpy/Pillow/cffi/PyAV wheels; the venv gets them (arm.sh upgrades them).
    arm64)
        packages="$base"
        venv="python3 -m venv /opt/venv
              /opt/venv/bin/pip install -q numpy pillow cffi setuptools wheel pytest hypothesis av" ;;
    # 32-bit: no wheels on PyPI; Debian's own numpy 1.24, Pillow 9.4, cffi 1.15 and PyAV 10
    # (python3-av), as on Raspberry Pi OS, seen through a --system-site-packages venv.
    # (debootstrap does not follow every dependency: pycparser needs ply.)
    armhf)
        packages="$base,python3-numpy,python3-pil,python3-cffi,python3-ply,python3-setuptools,python3-wheel,python3-av"
        venv="python3 -m venv --system-site-packages /opt/venv
              /opt/venv/bin/pip install -q pytest hypothesis" ;;
    *) echo "arm_root.sh: unknown architecture $arch (arm64 or armhf)" >&2; exit 2 ;;
esac
recipe=2   # bump when the steps below change what a root holds

key="$(printf '%s\n' "$recipe" "$arch" "$packages" "$venv" | sha256sum | cut -c1-12)"
root="$cache/$arch-bookworm-$key"
ready() {
    [ -f "$root/.fbgfx-ready" ] || return 1
    touch "$root"   # in use: other recipes' clean-up keeps it (see the end)
    echo "$root"
}
ready && exit 0
mkdir -p "$cache"
exec 9>"$root.lock"
flock 9   # one build of this root at a time; a second caller waits, then reuses it
ready && exit 0

# The mirror this machine's apt already uses (deb822 or one-line sources).
mirror="$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)"
if [ -z "$mirror" ]; then
    mirror="$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

build="$root.partial"
rm -rf "$build"
log="$cache/$arch-build.log"
echo "arm_root.sh: building the $arch root in $build (log: $log)" >&2
exec 3>&1 4>&2 >"$log" 2>&1
trap 'echo "arm_root.sh: building the $arch root failed; the end of $log:" >&4; tail -n 30 "$log" >&4' ERR
nice debootstrap --foreign --arch="$arch" --variant=minbase --include="$packages" \
    bookworm "$build" "$mirror"
if [ -L "$build/proc" ]; then rm "$build/proc"; mkdir "$build/proc"; fi
# container=lxc: debootstrap then trusts the bound /dev instead of testing mknod,
# which a user namespace may not do.
nice python3 "$here/arm_enter.py" "$build" "$arch" -- \
    env DEBOOTSTRAP_DIR=/debootstrap container=lxc /debootstrap/debootstrap --second-stage
if grep -q '^Status: .* \(unpacked\|half-installed\|half-configured\)$' "$build/var/lib/dpkg/status"; then
    echo "arm_root.sh: packages left unconfigured:"; grep -B2 '^Status: .* \(unpacked\|half\)' "$build/var/lib/dpkg/status"
    false   # (the ERR trap reports)
fi
cp /etc/ssl/certs/ca-certificates.crt "$build/etc/fbgfx-host-ca.crt"
nice python3 "$here/arm_enter.py" "$build" "$arch" -- \
    env PIP_CERT=/etc/fbgfx-host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 sh -ec "$venv"
rm -rf "$build/var/cache/apt/archives/"*.deb
touch "$build/.fbgfx-ready"
exec >&3 2>&4
trap - ERR
mv "$build" "$root"
# Roots of other recipes (other checkouts may still use them) once unused for two days.
find "$cache" -mindepth 1 -maxdepth 1 -name "$arch-bookworm-*" ! -path "$root" ! -path "$root.*" -mtime +1 \
    -exec rm -rf {} +
echo "$root"
