#!/usr/bin/env bash
# Install what the real-kernel tests (tests/kernel/) need: qemu, a Debian kernel
# with its modules (and vkms.ko built for it: .ci/vkms.sh), fbset and busybox as guest
# helpers, virtme-ng (vng), and ALSA's library and amixer for the video test's sound (the guest runs the host's files; a new
# sound card starts muted).
# Idempotent and quiet; returns fast when everything is already there.
set -euo pipefail

apt_pkgs=(qemu-system-x86 linux-image-amd64 fbset busybox-static alsa-utils)
# libasound2 (bookworm), libasound2t64 (trixie): whichever this release has, unless present.
if ! ldconfig -p | grep -q 'libasound\.so\.2 '; then
    if apt-cache show libasound2t64 >/dev/null 2>&1; then apt_pkgs+=(libasound2t64); else apt_pkgs+=(libasound2); fi
fi
bash "$(dirname "$0")/apt-install.sh" vm-deps "${apt_pkgs[@]}"

python=${PYTHON:-python3}
if ! command -v vng >/dev/null 2>&1; then
    echo "vm-deps: installing virtme-ng"
    "$python" -m pip install -q --disable-pip-version-check virtme-ng \
        >/tmp/vm-deps-pip.log 2>&1 || { tail -20 /tmp/vm-deps-pip.log >&2; exit 1; }
    command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
fi

# vkms (planes, atomic KMS) for the layers guest: built out of tree once, cached.
bash "$(dirname "$0")/vkms.sh"
