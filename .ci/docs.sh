#!/usr/bin/env bash
# CI: build the documentation as the README says (warnings are errors), run every example
# in it (Sphinx's doctest builder, on virtual displays), and open the built site in headless
# Chromium (tests/project/test_docs_browser.py: no console errors, every picture loads).
set -euo pipefail
cd "$(dirname "$0")/.."

pip install -q -e '.[docs]'
t0=$SECONDS
# One doctree folder for both builders: the doctest builder reuses what the html build read.
python -m sphinx -W --keep-going -q -d docs/_build/doctrees -b html docs docs/_build/html
echo "docs: html built in $((SECONDS - t0)) s"
t1=$SECONDS
python -m sphinx -W --keep-going -q -d docs/_build/doctrees -b doctest docs docs/_build/doctest
echo "docs: examples run (doctest builder) in $((SECONDS - t1)) s"
# The site just built must open cleanly: here a missing browser or site fails, not skips.
FBGFX_DOCS_REQUIRE_BROWSER=1 python -m pytest -q -p no:cacheprovider tests/project/test_docs_browser.py
