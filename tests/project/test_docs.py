"""The documentation covers what fbgfx has, and its examples run (without Sphinx).

The reference pages (docs/api/) must name every public name, and every public name must
say what it does; the command-line page must list every subcommand; the examples in the
pages (``.. testcode::`` blocks and ``>>>`` lines) run here on virtual displays, as the
doctest builder runs them in CI (.ci/docs.sh).
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import inspect
import io
import pathlib
import re
import sys
import textwrap

import pytest
import support

import fbgfx
from fbgfx.cli import build_parser

DOCS = pathlib.Path(support.ROOT) / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from cli_reference import cli_rst  # noqa: E402  (docs/_ext, put on the path above)
from example_env import example_cleanup, example_setup, has_video  # noqa: E402

#: The modules whose public names (``__all__``) the reference documents.
PUBLIC_MODULES = ("fbgfx", "fbgfx.touch", "fbgfx.video", "fbgfx.serve", "fbgfx.testing", "fbgfx.drm", "fbgfx.kiosk")

_DIRECTIVE = re.compile(r"^\.\. (?:auto\w+|py:\w+):: (fbgfx[\w.]*)", re.M)
_DATA = re.compile(r"^\.\. py:data:: ([\w.]+)\n((?:   .*\n|\n)*)", re.M)


def _reference() -> str:
    return "\n".join(p.read_text() for p in sorted((DOCS / "api").glob("*.rst")))


def _documented() -> set[str]:
    names = set(_DIRECTIVE.findall(_reference()))
    # `.. py:module:: fbgfx` sets the current module: `.. py:data:: FORMATS` there is fbgfx's.
    names |= {f"fbgfx.{n}" for n in re.findall(r"^\.\. py:data:: (\w+)$", _reference(), re.M)}
    return names


def _public_names() -> list[str]:
    return [f"{m}.{n}" for m in PUBLIC_MODULES for n in importlib.import_module(m).__all__]


def _resolve(dotted: str) -> object:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_reference_names_every_public_name():
    """Every name in the public modules' __all__ has an entry in docs/api/, and no entry is stale."""
    documented = _documented()
    missing = [n for n in _public_names() if n not in documented]
    assert not missing, f"not in the reference (add them to docs/api/*.rst): {missing}"
    stale = []
    for name in documented - set(PUBLIC_MODULES):
        try:
            _resolve(name)
        except (AttributeError, ImportError):
            stale.append(name)
    assert not stale, f"documented but not there (renamed or removed?): {stale}"


def test_public_names_have_docstrings():
    """Every public class, function and module has a docstring."""
    undocumented = []
    for dotted in _public_names():
        obj = _resolve(dotted)
        if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
            continue  # data and type aliases: described in the reference (next test)
        if not (obj.__doc__ or "").strip():
            undocumented.append(dotted)
    assert not undocumented, f"no docstring: {undocumented}"


def _described(body: str) -> bool:
    """Whether a directive's body has text besides its options (``:type: ...``)."""
    return any(line.strip() and not line.strip().startswith(":") for line in body.splitlines())


#: Protocols whose methods' docstrings the classes implementing them share (as in the
#: built reference: docs/_ext/fbgfx_docs.py, PROTOCOLS).
PROTOCOLS = ("fbgfx.backend.Backend", "fbgfx.drm.CardLike", "fbgfx.serve.DisplaySource", "fbgfx.video.FrameSource")


def _members(cls: type) -> dict[str, object]:
    """The public methods and properties autodoc lists for a class: its own and those of
    the fbgfx classes it is made of (Surface's drawing mixins); not tuple's or object's."""
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if not base.__module__.startswith("fbgfx"):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in getattr(cls, "_fields", ()):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if inspect.isfunction(value) or isinstance(value, property):
                found[name] = value
    return found


def _has_doc(cls: type, name: str, member: object) -> bool:
    if (getattr(member, "__doc__", None) or "").strip() or inspect.getdoc(getattr(cls, name, None)):
        return True
    for dotted in PROTOCOLS:
        protocol = _resolve(dotted)
        if isinstance(protocol, type) and protocol is not cls and inspect.getdoc(vars(protocol).get(name)):
            return True
    return False


def test_public_members_have_docstrings():
    """Every public method and property of the public classes has a docstring (its own, or its protocol's)."""
    undocumented = []
    for dotted in _public_names():
        cls = _resolve(dotted)
        if inspect.isclass(cls) and cls.__module__.startswith("fbgfx"):
            undocumented += [f"{dotted}.{n}" for n, m in _members(cls).items() if not _has_doc(cls, n, m)]
    assert not undocumented, f"no docstring: {undocumented}"


def test_reference_describes_its_data():
    """Each constant and type alias the reference lists by hand (py:data) comes with a description."""
    entries = _DATA.findall(_reference())
    assert entries, "the reference has no py:data entries: has its layout changed?"
    bare = [name for name, body in entries if not _described(body)]
    assert not bare, f"py:data without a description: {bare}"


def test_cli_page_lists_every_subcommand():
    """The command-line page is generated from the parser: every subcommand and each of its options is on it."""
    assert ".. fbgfx-cli::" in (DOCS / "cli.rst").read_text()
    page = "\n".join(cli_rst())
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    assert len(subparsers.choices) >= 8
    for name, sub in subparsers.choices.items():
        assert re.search(rf"^fbgfx {name}\n-+$", page, re.M), f"fbgfx {name} has no section"
        section = page.split(f"fbgfx {name}\n", 1)[1].split("\nfbgfx ", 1)[0]
        for action in sub._actions:
            for option in action.option_strings:
                assert f"``{option}" in section, f"fbgfx {name} {option} is not on the page"


def _pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)


def _examples() -> list[tuple[str, str, str | None]]:
    """(id, code, expected output or None) for each ``.. testcode::`` block of the pages."""
    found = []
    for page in _pages():
        text = page.read_text()
        for m in re.finditer(r"^\.\. testcode::.*\n((?:[ \t]+:.*\n)*)\n((?:(?:   .*)?\n)+)", text, re.M):
            code = textwrap.dedent(m.group(2))
            after = text[m.end() :]
            out = re.match(r"\.\. testoutput::.*\n((?:[ \t]+:.*\n)*)\n((?:(?:   .*)?\n)+)", after)
            expected = textwrap.dedent(out.group(2)).strip("\n") if out else None
            line = text[: m.start()].count("\n") + 1
            found.append((f"{page.relative_to(DOCS)}:{line}", code, expected))
    return found


@pytest.fixture
def example_folder():
    folder = example_setup()
    try:
        yield folder
    finally:
        example_cleanup()


EXAMPLES = _examples()


def test_python_blocks_run_or_say_why():
    """A Python example that is not run (a plain code-block) says why, in a ``.. Not run:`` comment above it."""
    silent = []
    for page in _pages():
        text = page.read_text()
        for m in re.finditer(r"^\.\. code-block:: python$", text, re.M):
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if not before.startswith(".. Not run: "):
                silent.append(f"{page.relative_to(DOCS)}:{text[: m.start()].count(chr(10)) + 1}")
    assert not silent, f"Python blocks that are not run and do not say why (make them testcode): {silent}"


def test_pages_have_examples():
    """The pages' examples are found (a change of layout must not leave the next test with nothing to run)."""
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize(("where", "code", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_docs_example_runs(where, code, expected, example_folder):
    """Each ``.. testcode::`` example of the docs runs on a virtual display and prints what its testoutput says."""
    if "movie.mp4" in code and not has_video():
        pytest.skip("plays movie.mp4: needs PyAV (the video extra)")
    if "fbgfx.serve" in code:
        pytest.importorskip("websockets", minversion="13", reason="serves: needs websockets >= 13 (the serve extra)")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__docs_example__"})
    if expected is not None:
        checker = doctest.OutputChecker()
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        assert checker.check_output(expected + "\n", out.getvalue(), flags), out.getvalue()


def test_docs_doctest_lines_run(example_folder):
    """Every ``>>>`` example in the pages runs and prints what the page says."""
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for page in _pages():
        text = page.read_text()
        if ">>>" not in text:
            continue
        test = parser.get_doctest(textwrap.dedent(text), {"fbgfx": fbgfx}, str(page), str(page), 0)
        # Lines inside a directive are indented; doctest finds them at any indentation.
        out = io.StringIO()
        result = runner.run(test, out=out.write)
        assert not result.failed, out.getvalue()
        ran += result.attempted
    assert ran > 0


def _docstring_examples() -> list[doctest.DocTest]:
    """The ``>>>`` examples in the docstrings of the public names and their members."""
    finder, tests, seen = doctest.DocTestFinder(recurse=False), [], set()
    for dotted in [*PUBLIC_MODULES, *_public_names()]:
        obj = importlib.import_module(dotted) if dotted in PUBLIC_MODULES else _resolve(dotted)
        objects = [obj, *(_members(obj).values() if inspect.isclass(obj) else ())]
        for item in objects:
            item = item.fget if isinstance(item, property) else item
            if not (inspect.ismodule(item) or inspect.isclass(item) or inspect.isroutine(item)) or id(item) in seen:
                continue
            seen.add(id(item))
            for test in finder.find(item, dotted, globs={"fbgfx": fbgfx}):
                if test.examples:
                    tests.append(test)
    return tests


def test_docstring_examples_run(example_folder):
    """Every ``>>>`` example in a public docstring runs as the reference shows it (as the doctest builder runs them)."""
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = _docstring_examples()
    assert tests, "no docstring has an example: has the finder stopped finding them?"
    out = io.StringIO()
    for test in tests:
        if "movie.mp4" in "".join(e.source for e in test.examples) and not has_video():
            continue  # plays a video: needs PyAV (the video extra)
        runner.run(test, out=out.write)
    assert not runner.failures, out.getvalue()
