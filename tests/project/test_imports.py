"""fbgfx's import graph: no cycle (in-function imports counted), a short top level, and
the moved modules' old paths still importable with a DeprecationWarning."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import fbgfx

PACKAGE = Path(fbgfx.__file__).parent


def _modules() -> dict[str, Path]:
    """Every module of fbgfx by dotted name (a package by its own name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["fbgfx", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: at module level, in functions and classes,
    in try/if blocks; not those under ``if TYPE_CHECKING:`` (never run)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the fbgfx modules it imports. Importing ``a.b.c`` also runs the
    packages ``a`` and ``a.b``; those implicit parent imports are not edges (a package
    importing its own submodules is how packages work), explicit ones are."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # `from pkg import name`: the submodule pkg.name when there is one, else pkg
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
            edges.update(t for t in targets if t in modules and t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    """The checker itself: a cycle closed by an import inside a function is found."""
    tree = ast.parse("import os\ndef f():\n    from fbgfx import b\n")
    assert [n for n in _imports(tree) if isinstance(n, ast.ImportFrom)], "the function's import is seen"
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    hidden = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import fbgfx.screen\n")
    assert not [n for n in _imports(hidden) if isinstance(n, ast.Import)]


def test_no_import_cycle_in_fbgfx():
    """No module of fbgfx imports itself back through others, counting in-function imports."""
    graph = import_graph()
    assert len(graph) > 50 and graph["fbgfx.screen"], "the graph was read"
    assert cycles(graph) == []


def test_top_level_of_fbgfx_is_short():
    """At most 25 modules sit at the top of fbgfx/; the rest are in packages by room."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 25, top


@pytest.mark.parametrize(
    "old, new", [("fbgfx.virtual_touch", "fbgfx.touch.virtual"), ("fbgfx.uinput_touch", "fbgfx.touch.uinput")]
)
def test_moved_modules_keep_their_old_path_with_a_warning(old, new):
    """An old import path still gives the same objects, and says where they went."""
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    moved = importlib.import_module(new)
    assert module.__all__ == moved.__all__
    for name in moved.__all__:
        assert getattr(module, name) is getattr(moved, name)


@pytest.mark.parametrize(
    "module, old, new",
    [("fbgfx.testing", "Display", "DisplayUnderTest"), ("fbgfx.serve", "Source", "DisplaySource")],
)
def test_renamed_classes_keep_their_old_name_with_a_warning(module, old, new):
    """A class renamed so that no two public classes share a name is still there by its old name, warning."""
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        assert getattr(mod, old) is getattr(mod, new)
    assert old not in mod.__all__ and new in mod.__all__


def test_public_classes_have_one_name_each():
    """No two public modules of fbgfx export different classes under the same name."""
    seen: dict[str, object] = {}
    clashes = []
    for name in sorted(_modules()):
        if any(part.startswith("_") for part in name.split(".")) or name.endswith("_touch"):
            continue  # private modules, and the deprecated aliases of moved ones
        if name in ("fbgfx.video",):
            pytest.importorskip("av")
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if isinstance(obj, type):
                if attr in seen and seen[attr] is not obj:
                    clashes.append(f"{attr}: {seen[attr]!r} and {obj!r}")
                seen.setdefault(attr, obj)
    assert not clashes


def test_contributing_lists_every_package():
    """CONTRIBUTING.md's layout names every package of fbgfx/ (a new room is described there)."""
    text = (PACKAGE.parent / "CONTRIBUTING.md").read_text()
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert packages, "the packages were found"
    assert [p for p in packages if f"`{p}/`" not in text] == []
