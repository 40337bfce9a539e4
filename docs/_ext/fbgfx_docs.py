"""The Sphinx extension that lets fbgfx document itself.

- At the start of every build the pictures are drawn by fbgfx (:mod:`pictures`) into
  ``docs/_generated/``, where the pages find them.
- ``.. fbgfx-primitives::`` shows each drawing primitive's picture beside its call.
- ``.. fbgfx-cli::`` writes the command-line reference from ``fbgfx.cli.build_parser()``:
  every subcommand with its options, so the page cannot drift from the parser.
- :func:`example_setup` / :func:`example_cleanup` put the docs' examples (the doctest
  builder's, and ``tests/test_docs.py``'s) on a virtual display in a scratch folder that
  holds the pictures they open.
"""

from __future__ import annotations

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


def _make_pictures(app: Any) -> None:
    del app  # Sphinx's; the pictures go beside the sources whatever the builder
    pictures.make_all(GENERATED)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("fbgfx-cli", CliDirective)
    app.add_directive("fbgfx-primitives", PrimitivesDirective)
    app.connect("builder-inited", _make_pictures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
