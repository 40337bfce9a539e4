"""fbgfx/_native.pyi describes the compiled module: every C function and constant, typed."""

from __future__ import annotations

import ast
import pathlib
import re

import support

from fbgfx._ffi import lib

ROOT = pathlib.Path(support.ROOT)


def _cdefs() -> tuple[dict[str, tuple[str, list[str]]], list[str]]:
    """Functions (name -> (return type, parameter C types)) and constants in native/*.cdef."""
    funcs: dict[str, tuple[str, list[str]]] = {}
    consts: list[str] = []
    for path in sorted((ROOT / "native").glob("*.cdef")):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
        while "{" in text:  # struct bodies
            text = re.sub(r"\{[^{}]*\}", " ", text)
        for stmt in re.sub(r"\s+", " ", text).split(";"):
            stmt = stmt.strip()
            if not stmt or stmt.startswith(("typedef", "struct")):
                continue
            const = re.match(r"static const [\w ]+?(\w+)$", stmt)
            if const:
                consts.append(const.group(1))
                continue
            fn = re.match(r"(.+?)\b(\w+)\s*\((.*)\)$", stmt)
            assert fn, f"{path.name}: cannot read {stmt!r}"
            params = fn.group(3).strip()
            types = [re.match(r"(.*?)\w+$", p.strip()).group(1).strip() for p in params.split(",")] \
                if params and params != "void" else []  # fmt: skip
            funcs[fn.group(2)] = (fn.group(1).strip(), types)
    return funcs, consts


def _py(ctype: str) -> str:
    if "*" in ctype or "[" in ctype:
        return "_CData"
    if ctype.split()[-1] in ("double", "float"):
        return "float"
    return "None" if ctype == "void" else "int"


def _tree() -> ast.Module:
    return ast.parse((ROOT / "fbgfx" / "_native.pyi").read_text())


def _stub() -> dict[str, ast.AST]:
    lib_class = next(n for n in _tree().body if isinstance(n, ast.ClassDef) and n.name == "_Lib")
    out: dict[str, ast.AST] = {}
    for node in lib_class.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def _aliases() -> dict[str, ast.expr]:
    """The stub's type aliases (``Name: TypeAlias = ...``): the families of C functions."""
    return {
        n.target.id: n.value
        for n in _tree().body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None
        and ast.unparse(n.annotation) == "TypeAlias"
    }  # fmt: skip


def _callable(expr: ast.expr, aliases: dict[str, ast.expr], bound: list[str] | None = None) -> tuple[list[str], str]:
    """Parameter and return types of a ``Callable`` annotation, its aliases expanded and a
    ``Concatenate[..., _P]`` given the types ``bound`` to ``_P`` (``Alias[[int, float]]``)."""
    if isinstance(expr, ast.Name) and expr.id in aliases:
        return _callable(aliases[expr.id], aliases, bound)
    assert isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name), ast.unparse(expr)
    if expr.value.id in aliases:  # a family with its own tail of parameters
        assert bound is None and isinstance(expr.slice, ast.List), ast.unparse(expr)
        return _callable(aliases[expr.value.id], aliases, [ast.unparse(e) for e in expr.slice.elts])
    assert expr.value.id == "Callable" and isinstance(expr.slice, ast.Tuple), ast.unparse(expr)
    params, ret = expr.slice.elts
    if isinstance(params, ast.List):
        assert bound is None, ast.unparse(expr)
        return [ast.unparse(e) for e in params.elts], ast.unparse(ret)
    assert isinstance(params, ast.Subscript) and ast.unparse(params.value) == "Concatenate", ast.unparse(expr)
    assert isinstance(params.slice, ast.Tuple) and bound is not None, ast.unparse(expr)
    return [ast.unparse(e) for e in params.slice.elts[:-1]] + bound, ast.unparse(ret)


def _signature(node: ast.AST, aliases: dict[str, ast.expr]) -> tuple[list[str], str]:
    """Parameter and return types of one of ``_Lib``'s functions: a ``def`` taking its
    parameters positionally only, or an attribute typed by a ``Callable`` (alias)."""
    if isinstance(node, ast.AnnAssign):
        return _callable(node.annotation, aliases)
    assert isinstance(node, ast.FunctionDef) and node.returns is not None
    assert not node.args.args and not node.args.kwonlyargs, node.name
    args = node.args.posonlyargs[1:]  # after self
    return [ast.unparse(a.annotation) for a in args if a.annotation], ast.unparse(node.returns)


def test_stub_lists_every_function_and_constant() -> None:
    """Every declaration in native/*.cdef is in the stub, and nothing else."""
    funcs, consts = _cdefs()
    assert funcs and consts, "no declarations read from native/*.cdef"
    assert set(_stub()) == set(funcs) | set(consts)


def test_stub_signatures_match_the_declarations() -> None:
    """Each function takes its C parameters in order (positional only) with matching types."""
    funcs, _ = _cdefs()
    assert funcs, "no functions read from native/*.cdef"
    stub, aliases = _stub(), _aliases()
    assert aliases, "no families of functions read from the stub"
    for name, (ret, params) in funcs.items():
        assert _signature(stub[name], aliases) == ([_py(t) for t in params], _py(ret)), name


def test_stub_constants_exist_in_the_built_module() -> None:
    """Every constant the stub declares is an int in the built module."""
    _, consts = _cdefs()
    assert consts, "no constants read from native/*.cdef"
    for name in consts:
        assert isinstance(getattr(lib, name), int), name


def test_stub_ships_with_the_package() -> None:
    """pyproject's package data carries the stub beside py.typed."""
    text = (ROOT / "pyproject.toml").read_text()
    data = re.search(r"\[tool\.setuptools\.package-data\]\s*fbgfx\s*=\s*\[([^\]]*)\]", text)
    assert data and "_native.pyi" in data.group(1)
