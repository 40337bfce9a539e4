"""The command-line reference as reST, written from ``fbgfx.cli.build_parser()``.

``.. fbgfx-cli::`` (``fbgfx_docs``) puts :func:`cli_rst` into the Command line page;
``tests/project/test_docs.py`` checks it lists every subcommand and option. This module needs
no Sphinx: the tests import it without the ``docs`` extra.
"""

from __future__ import annotations

import argparse
import re

from fbgfx.cli import build_parser


def _escape(text: str) -> str:
    """Help text as reST: `quoted` parts become literals, the rest is escaped plain text."""
    parts = re.split(r"`([^`]+)`", text)
    for i, part in enumerate(parts):
        if i % 2:
            parts[i] = f"``{part}``"
        else:
            for ch in "\\*`|_[":
                part = part.replace(ch, "\\" + ch)
            parts[i] = part
    return "".join(parts)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """A definition list of a parser's arguments, in the order ``--help`` shows them."""
    formatter = parser._get_formatter()
    lines: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = ""
            if action.nargs != 0:
                metavar = " " + formatter._format_args(action, action.dest.upper())
            term = ", ".join(f"``{o}{metavar}``" for o in action.option_strings)
        else:
            term = f"``{formatter._format_args(action, action.dest)}``"
        help_text = formatter._expand_help(action) if action.help else ""
        lines += [term, "   " + (_escape(" ".join(help_text.split())) or "\\ ")]
    return lines


def cli_rst(parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The command-line reference as reST lines: one section per subcommand."""
    if parser is None:
        parser = build_parser()
    lines = [
        ".. code-block:: text",
        "",
        *("   " + line for line in parser.format_usage().rstrip().splitlines()),
        "",
        *_options(parser),
        "",
    ]
    for name, sub in _subcommands(parser).items():
        title = f"fbgfx {name}"
        lines += [title, "-" * len(title), ""]
        if sub.description:
            lines += [_escape(" ".join(sub.description.split())), ""]
        usage = sub.format_usage().rstrip().removeprefix("usage: ")
        lines += [".. code-block:: text", "", *("   " + line for line in usage.splitlines()), ""]
        lines += [*_options(sub), ""]
    return lines
