"""``fbgfx``: everyday framebuffer tools (info, show, play, grab, mode, demo, touch, serve,
mirror, idle, bench).

Run ``python -m fbgfx --help`` or ``fbgfx COMMAND --help``. Every command takes
``-d/--device`` (``/dev/fbN``, ``N`` or ``virtual:WxH[:FORMAT]``; default
``$FRAMEBUFFER``, else ``/dev/fb0``). Bad input gives one ``fbgfx: error: ...`` line on
stderr and exit status 2; Ctrl-C restores the screen and exits with 130.

Each command is a module of this package defining ``COMMAND`` (a
:class:`~fbgfx.cli._command.Command`); :data:`COMMANDS` lists them in the order
``--help`` shows. What they share is in one private module per job: ``_command``
(the record, the run context, errors), ``_args`` (argument types), ``_device``
(opening the device and screen), ``_pictures`` (images in and out), ``_clock``
(waiting with a deadline), ``_playback`` (the play status line) and
``_stop`` (SIGTERM as the end of a long-running command).
"""

from __future__ import annotations

import argparse
import errno
import os
import select
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import __version__
from . import bench, demo, grab, idle, info, mirror, mode, play, serve, show, touch
from ._command import CliError, Command, Context, describe_error
from ._pictures import image_format

__all__ = ["COMMANDS", "EXIT_INTERRUPTED", "EXIT_USAGE", "CliError", "build_parser", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: Standard output was closed by its reader (``fbgfx info | head -1``): 128 + SIGPIPE.
EXIT_BROKEN_PIPE = 128 + 13

#: The commands, in the order ``fbgfx --help`` lists them. A new command is a module
#: with a ``COMMAND`` and one entry here.
COMMANDS: tuple[Command, ...] = (
    info.COMMAND,
    show.COMMAND,
    play.COMMAND,
    grab.COMMAND,
    mode.COMMAND,
    demo.COMMAND,
    touch.COMMAND,
    serve.COMMAND,
    mirror.COMMAND,
    idle.COMMAND,
    bench.COMMAND,
)

# Bad input, whatever layer found it: one line and exit status 2. OverflowError,
# RecursionError and MemoryError are the last line of defence: a number too large for
# the platform or input nested too deeply (a damaged state file), wherever it was met.
_BAD_INPUT = (CliError, OSError, ValueError, EOFError, MemoryError, OverflowError, RecursionError)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see: {self.prog} --help)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fbgfx`` command line.

    Args:
        argv: The arguments after the program name; default ``sys.argv[1:]``.

    Returns:
        The exit status: 0 on success, 2 on bad input, 130 after Ctrl-C.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as e:
        return _fail(e)
    except SystemExit as e:  # --help, --version
        return e.code if isinstance(e.code, int) else 0
    command: Command | None = getattr(args, "command", None)
    if command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    context = Context()
    try:
        with warnings.catch_warnings():
            # A warning (Pillow's DecompressionBombWarning for a huge image) is one
            # line too, not Python's two-line form with a source location.
            warnings.showwarning = _show_warning
            if getattr(args, "out", None):
                image_format(args.out)  # a typo in --out fails before the screen changes
            status = command.run(args, context)
            sys.stdout.flush()  # a reader that went away is found here, not at exit
        for note in context.notes:  # after success only: an error stays one line
            print(f"fbgfx: note: {note}", file=sys.stderr)
        return status
    except BrokenPipeError:
        if not _stdout_gone():
            context.end_live_line()
            return _fail(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)))
        # `fbgfx info | head -1`: the reader has what it wanted. End quietly, as other
        # Unix tools do (the status of a process killed by SIGPIPE).
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        context.end_live_line()
        return EXIT_INTERRUPTED
    except _BAD_INPUT as e:
        context.end_live_line()
        return _fail(e)
    except Exception as e:
        # Pillow raises its own (DecompressionBombError, SyntaxError from some
        # decoders) for files it cannot read; still one line, not a traceback.
        if type(e).__module__.startswith("PIL") or isinstance(e, SyntaxError):
            context.end_live_line()
            return _fail(e)
        raise


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), 0)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _fail(error: BaseException) -> int:
    print(f"fbgfx: error: {describe_error(error)}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def _show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    del category, filename, lineno, file, line  # warnings.showwarning's; one line says it all
    print(f"fbgfx: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fbgfx`` command (for docs and shell completion)."""
    device = _Parser(add_help=False)
    device.add_argument(
        "-d",
        "--device",
        metavar="DEVICE",
        help="framebuffer: /dev/fbN, N, or virtual:WxH[:FORMAT[:key=value...]] (default: $FRAMEBUFFER, else /dev/fb0)",
    )
    out = _Parser(add_help=False)
    out.add_argument("--out", metavar="FILE.png", help="save what the screen shows at exit as an image")

    parser = _Parser(
        prog="fbgfx",
        description="Graphics for the Linux framebuffer: inspect it, show images and video, grab it, switch modes.",
        epilog="Run 'fbgfx COMMAND --help' for a command's options. "
        "Try it without a screen: fbgfx demo (writes demo.png).",
    )
    parser.add_argument("--version", action="version", version=f"fbgfx {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            parents=[device, out] if command.out else [device],
            help=command.help,
            description=command.description,
        )
        command.add_arguments(p)
        p.set_defaults(command=command)
    return parser
