#!/usr/bin/env bash
# Build vkms.ko (virtual KMS: planes, atomic commits, writeback) for the kernel the VM tests
# boot, out of tree, once: Debian's 6.1 kernel has CONFIG_DRM_VKMS off. The module is cached
# outside the tree, in $FBGFX_VM_CACHE (default /var/cache/fbgfx-vm)/vkms-RELEASE/vkms.ko,
# where tests/kernel/test_layers_vm.py (the vkms guest of the drm boot) finds it. Quiet; fast when built.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernel="${FBGFX_VM_KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | sort | tail -n 1)}"
[ -n "$kernel" ] || { echo "vkms.sh: no /boot/vmlinuz-*" >&2; exit 1; }
release="${kernel##*/vmlinuz-}"
cache="${FBGFX_VM_CACHE:-/var/cache/fbgfx-vm}"
out="$cache/vkms-$release/vkms.ko"
[ -e "$out" ] && exit 0

series="$(echo "$release" | cut -d. -f1-2)"   # 6.1.0-57-amd64 -> 6.1
bash "$here/apt-install.sh" vkms "linux-source-$series" "linux-headers-$release" make gcc
work="$(mktemp -d /tmp/fbgfx-vkms.XXXXXX)"
trap 'rm -rf "$work"' EXIT
src="linux-source-$series/drivers/gpu/drm/vkms"
tar -C "$work" -xf "/usr/src/linux-source-$series.tar.xz" "$src"
make -C "/lib/modules/$release/build" M="$work/$src" CONFIG_DRM_VKMS=m modules >"$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
cp "$work/$src/vkms.ko" "$out.tmp"
mv "$out.tmp" "$out"
echo "vkms.sh: built $out"
