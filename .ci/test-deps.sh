#!/usr/bin/env bash
# The Debian packages the tests need that pip cannot install, once per machine (as root,
# or with sudo): qemu, a Debian kernel and helpers for the real-kernel tests
# (.ci/vm-deps.sh) and headless Chromium with its driver for the browser tests
# (.ci/browser-deps.sh). Without them those tests skip and say so. Idempotent, quiet,
# fast when everything is there. The Python packages come with `pip install -e '.[test]'`.
set -euo pipefail
here="$(dirname "$0")"
bash "$here/vm-deps.sh"
bash "$here/browser-deps.sh"
