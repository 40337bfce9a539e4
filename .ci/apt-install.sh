#!/usr/bin/env bash
# Install the Debian packages named after LABEL that are not installed yet; quiet, and
# fast when all are there. Used by vm-deps.sh and browser-deps.sh.
#   bash .ci/apt-install.sh LABEL PACKAGE...
set -euo pipefail
label="$1"
shift
missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "$label: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
log="/tmp/$label-apt.log"
# Refresh the package lists only when they are missing or the install fails.
if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    "${sudo_cmd[@]}" apt-get update -qq >"$log" 2>&1
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1 \
        || { tail -20 "$log" >&2; exit 1; }
fi
