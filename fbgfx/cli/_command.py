"""The ``fbgfx`` command record (:class:`Command`), what one run shares with
:func:`fbgfx.cli.main` (:class:`Context`), and errors told in one line.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..errors import FramebufferError

if TYPE_CHECKING:
    from ._playback import Status

__all__ = ["CliError", "Command", "Context", "describe_error"]


class CliError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


class Context:
    """What one run of a command shares with :func:`fbgfx.cli.main`.

    Attributes:
        notes: Remarks for the user, printed (``fbgfx: note: ...``) only when the
            command succeeds, so an error stays one line.
        live: The status line being rewritten on a terminal, if any: an error or
            Ctrl-C ends it first so the message starts on a line of its own.
    """

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.live: Status | None = None

    def note(self, text: str) -> None:
        """Add a remark for the user, shown after success."""
        self.notes.append(text)

    def end_live_line(self) -> None:
        """End a live status line so what follows starts on its own line."""
        if self.live is not None:
            self.live = None
            sys.stderr.write("\n")


@dataclass(frozen=True)
class Command:
    """One ``fbgfx`` command: what the parser shows and what runs.

    A command module defines ``COMMAND = Command(...)``; :mod:`fbgfx.cli` lists the
    modules once (``COMMANDS``). A new command is a new module and one entry there.

    Attributes:
        name: The word on the command line.
        help: One line for ``fbgfx --help``.
        description: The paragraph of ``fbgfx NAME --help``.
        add_arguments: Adds the command's own options to its parser.
        run: Runs it; returns the exit status.
        out: Whether it takes ``--out FILE.png`` (save the screen at exit).
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], int]
    out: bool = field(default=False)


def name_too_long(path: str) -> str:
    """The line for a path the filesystem refuses as too long (``ENAMETOOLONG``): the
    path shortened, and the limits it broke."""
    shown = path if len(path) <= 120 else f"{path[:60]}...{path[-40:]} ({len(path)} characters)"
    folder = os.path.dirname(os.path.abspath(path))
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        name_max, path_max = os.pathconf(folder or "/", "PC_NAME_MAX"), os.pathconf(folder or "/", "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    return (
        f"{shown}: the file name is too long (this filesystem takes names of up to {name_max} bytes "
        f"and paths of up to {path_max})"
    )


def describe_error(e: BaseException) -> str:
    """An exception as the one line the user reads (no type names, no newlines)."""
    if isinstance(e, FramebufferError):
        text = str(e)
    elif isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG and isinstance(e.filename, str):
        text = name_too_long(e.filename)
    elif isinstance(e, OSError) and e.strerror:
        # a file descriptor (an int) names nothing the user knows
        named = e.filename not in (None, "") and not isinstance(e.filename, int)
        text = f"{e.filename}: {e.strerror}" if named else e.strerror
    elif isinstance(e, MemoryError):
        text = "out of memory"
    elif isinstance(e, OverflowError):
        text = f"a number is too large ({e})"
    elif isinstance(e, RecursionError):
        text = f"input nested too deeply ({e})"
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split())
