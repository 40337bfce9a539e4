"""Sphinx configuration for fbgfx's documentation.

Build it from the repository root (the README's command)::

    pip install -e '.[docs]' && python -m sphinx -W --keep-going -b html docs docs/_build/html

and run its examples with ``-b doctest``. The pictures and the command-line page are
made by fbgfx itself while the site builds (``_ext/fbgfx_docs.py``): nothing in them is
drawn by hand.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import fbgfx  # noqa: E402  (after the path: the extension folder)

project = "fbgfx"
author = "the fbgfx authors"
copyright = "the fbgfx authors, MIT licence"
release = fbgfx.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.doctest",
    "myst_parser",
    "fbgfx_docs",
]

# Markdown only for the files kept at the repository root (CHANGELOG.md, CONTRIBUTING.md).
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "_inventories", "README.md"]
templates_path: list[str] = []
html_static_path: list[str] = []
# The root files link to repository paths (tests/kernel/README.md...) that are no pages here.
suppress_warnings = ["myst.xref_missing", "myst.header"]

# Literal blocks (``::``) are mostly shell commands and files: not highlighted as Python.
highlight_language = "text"
html_theme = "furo"
html_title = f"fbgfx {release}"
html_show_sourcelink = False
html_copy_source = False

# Google-style docstrings (STYLE.md): Args, Returns, Raises, Example.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "separated"
autodoc_default_options = {"members": True, "show-inheritance": True}
# Keep `from __future__ import annotations` strings as written (Surface, not fbgfx.surface.Surface).
autodoc_typehints_format = "short"
python_use_unqualified_type_names = True

# No documentation site is reachable from CI or these machines: the inventories are kept
# in the tree (_inventories/README.txt says where each came from). NumPy and PyAV ship
# none that can be had here, so they are left out.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3.11", "_inventories/python.inv"),
    "pillow": ("https://pillow.readthedocs.io/en/stable", "_inventories/pillow.inv"),
}

# The examples run on virtual displays, in a folder of their own with the pictures they open.
doctest_global_setup = """
import fbgfx
import example_env as _example_env
_example_env.example_setup()
"""
doctest_global_cleanup = """
_example_env.example_cleanup()
"""
