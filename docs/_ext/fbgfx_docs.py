"""The Sphinx extension that lets fbgfx document itself.

- At the start of every build the pictures are drawn by fbgfx (:mod:`pictures`) into
  ``docs/_generated/``, where the pages find them.
- ``.. fbgfx-primitives::`` shows each drawing primitive's picture beside its call.
- ``.. fbgfx-cli::`` writes the command-line reference from ``fbgfx.cli.build_parser()``:
  every subcommand with its options, so the page cannot drift from the parser.
- :func:`example_setup` / :func:`example_cleanup` put the docs' examples (the doctest
  builder's, and ``tests/project/test_docs.py``'s) on a virtual display in a scratch folder that
  holds the pictures they open.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
from typing import Any

import pictures
from cli_reference import cli_rst
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from example_env import example_cleanup, example_setup

DOCS = pathlib.Path(__file__).resolve().parent.parent
GENERATED = DOCS / "_generated"
__all__ = ["example_cleanup", "example_setup", "setup"]


class CliDirective(Directive):
    """``.. fbgfx-cli::``: the reference of every ``fbgfx`` subcommand."""

    has_content = False

    def run(self) -> list[Any]:
        source = self.state_machine.input_lines.source(self.lineno - self.state_machine.input_offset - 1)
        self.state_machine.insert_input(StringList(cli_rst(), source=source), source)
        return []


class PrimitivesDirective(Directive):
    """``.. fbgfx-primitives::``: a table of every drawing primitive's picture beside the
    call that drew it (both from :data:`pictures.PRIMITIVES`, so they cannot disagree)."""

    has_content = False

    def run(self) -> list[Any]:
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "", "   * - picture", "     - call"]
        for name, (call, _) in pictures.PRIMITIVES.items():
            lines += [
                f"   * - .. image:: /_generated/primitive-{name}.png",
                f"          :alt: {name}",
                "     - .. code-block:: python",
                "",
                f"          {call}",
            ]
        source = self.state_machine.input_lines.source(self.lineno - self.state_machine.input_offset - 1)
        self.state_machine.insert_input(StringList(lines, source=source), source)
        return []


#: Protocols whose methods' docstrings the classes implementing them share: a
#: ``VirtualDevice.get_var`` says what ``Backend.get_var`` says (tests/project/test_docs.py
#: applies the same rule when it checks that every public member has a docstring).
PROTOCOLS = ("fbgfx.backend.Backend", "fbgfx.drm.CardLike", "fbgfx.serve.DisplaySource", "fbgfx.video.FrameSource")


def protocol_doc(name: str) -> str:
    """The docstring of method ``name`` on one of :data:`PROTOCOLS`, else ''."""
    for dotted in PROTOCOLS:
        module, _, cls = dotted.rpartition(".")
        member = vars(getattr(importlib.import_module(module), cls)).get(name)
        doc = inspect.getdoc(member) if member is not None else None
        if doc:
            return doc
    return ""


def _keep_implementations(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """Keep an undocumented public method that implements a documented protocol method."""
    del app, what, options  # Sphinx's
    routine = inspect.isroutine(obj) or isinstance(obj, property)
    if skip and routine and not name.startswith("_") and not inspect.getdoc(obj) and protocol_doc(name):
        return False
    return None


def _protocol_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Give such a method its protocol's docstring."""
    del app, obj, options  # Sphinx's
    if what in ("method", "property") and not any(line.strip() for line in lines):
        lines[:] = protocol_doc(name.rpartition(".")[2]).splitlines()


def _make_pictures(app: Any) -> None:
    del app  # Sphinx's; the pictures go beside the sources whatever the builder
    pictures.make_all(GENERATED)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("fbgfx-cli", CliDirective)
    app.add_directive("fbgfx-primitives", PrimitivesDirective)
    app.connect("builder-inited", _make_pictures)
    app.connect("autodoc-skip-member", _keep_implementations)
    app.connect("autodoc-process-docstring", _protocol_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
