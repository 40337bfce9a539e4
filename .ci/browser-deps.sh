#!/usr/bin/env bash
# Install what the browser tests of `fbgfx serve` (tests/serve/test_serve_browser.py) need:
# Debian's headless Chromium and its driver, Selenium, and the serve extra (websockets).
# Idempotent and quiet; returns fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=(chromium chromium-driver)
bash "$(dirname "$0")/apt-install.sh" browser-deps "${apt_pkgs[@]}"

python=${PYTHON:-python3}
if ! "$python" -c 'import selenium, websockets' >/dev/null 2>&1; then
    echo "browser-deps: installing selenium and websockets"
    # websockets: what the serve extra in pyproject.toml asks for.
    "$python" -m pip install -q --disable-pip-version-check selenium 'websockets>=13' \
        >/tmp/browser-deps-pip.log 2>&1 || { tail -20 /tmp/browser-deps-pip.log >&2; exit 1; }
fi
