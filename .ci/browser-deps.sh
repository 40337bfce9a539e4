#!/usr/bin/env bash
# Install what the browser tests of `fbgfx serve` (tests/test_serve_browser.py) need:
# Debian's headless Chromium and its driver, Selenium, and the serve extra (websockets).
# Idempotent and quiet; returns fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=(chromium chromium-driver)
missing=()
for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "browser-deps: installing ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    # Refresh the package lists only when they are missing or the install fails.
    if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            >/tmp/browser-deps-apt.log 2>&1; then
        "${sudo_cmd[@]}" apt-get update -qq >/tmp/browser-deps-apt.log 2>&1
        "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            >>/tmp/browser-deps-apt.log 2>&1 \
            || { tail -20 /tmp/browser-deps-apt.log >&2; exit 1; }
    fi
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import selenium, websockets' >/dev/null 2>&1; then
    echo "browser-deps: installing selenium and websockets"
    # websockets: what the serve extra in pyproject.toml asks for.
    "$python" -m pip install -q --disable-pip-version-check selenium 'websockets>=13' \
        >/tmp/browser-deps-pip.log 2>&1 || { tail -20 /tmp/browser-deps-pip.log >&2; exit 1; }
fi
