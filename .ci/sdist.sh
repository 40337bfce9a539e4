#!/usr/bin/env bash
# CI: the release installs from its sdist on a fresh machine. Build the sdist and the
# wheel from a clean copy of the tracked files, install the sdist (not the tree) into a
# fresh venv, import it and run the CLI from outside the source tree; check the wheel
# carries the stable-ABI tag its module is built for.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
work="$(mktemp -d /tmp/fbgfx-sdist.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# Only what git tracks: an untracked build product in the tree must not hide a missing file.
mkdir "$work/src"
git ls-files -z | xargs -0 cp --parents -t "$work/src"

python3 -m venv "$work/build-env"
"$work/build-env/bin/pip" install -q build
"$work/build-env/bin/python" -m build --outdir "$work/dist" "$work/src" >"$work/build.log" 2>&1 \
    || { tail -n 40 "$work/build.log"; exit 1; }
sdist="$(ls "$work"/dist/fbgfx-*.tar.gz)"
wheel="$(ls "$work"/dist/fbgfx-*.whl)"
echo "sdist.sh: built $(basename "$sdist") and $(basename "$wheel")"
case "$(basename "$wheel")" in
    *-cp39-abi3-*) ;;
    *) echo "sdist.sh: the wheel is not tagged cp39-abi3 although native/build_ffi.py asks for the stable ABI" >&2; exit 1 ;;
esac
listing="$(tar tzf "$sdist")"
for f in native/build_ffi.py native/prelude.h setup.py pyproject.toml; do
    grep -qx "fbgfx-[^/]*/$f" <<<"$listing" || { echo "sdist.sh: $f is missing from the sdist" >&2; exit 1; }
done

# fbgfx serve's page is package data, not code: the wheel must carry it.
python3 -c 'import sys, zipfile; sys.exit("fbgfx/serve/page.html" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$wheel" \
    || { echo "sdist.sh: fbgfx/serve/page.html is missing from the wheel" >&2; exit 1; }

# The pytest plugin is a top-level module beside the package, found through its entry point.
python3 - "$wheel" <<'PY' || { echo "sdist.sh: the wheel lacks pytest_fbgfx.py or its pytest11 entry point" >&2; exit 1; }
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
eps = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
text = zipfile.ZipFile(sys.argv[1]).read(eps[0]).decode() if eps else ""
sys.exit(not ("pytest_fbgfx.py" in names and "[pytest11]" in text and "fbgfx = pytest_fbgfx" in text))
PY

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$sdist"
cd "$work"   # away from the source tree, so the installed package is what imports
"$work/venv/bin/python" -c 'import fbgfx, fbgfx._ffi; print("sdist.sh: imported", fbgfx.__file__)'
"$work/venv/bin/fbgfx" info -d virtual:64x48
echo "sdist.sh: sdist install checked in $((SECONDS - start)) s"
