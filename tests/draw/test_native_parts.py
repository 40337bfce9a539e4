"""native/build_ffi.py builds every C file and declaration in native/ (it lists them)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
NATIVE = ROOT / "native"


def _parts() -> list[tuple[str, str | None, list[str]]]:
    tree = ast.parse((NATIVE / "build_ffi.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PARTS" for t in node.targets):
            parts: list[tuple[str, str | None, list[str]]] = ast.literal_eval(node.value)
            return parts
    raise AssertionError("no PARTS in native/build_ffi.py")


def test_every_c_file_declaration_and_header_is_a_part() -> None:
    """A .c or .cdef file added to native/ without its line in PARTS would be left out
    of the module (nothing else lists them): each is there, and each header exists."""
    parts = _parts()
    assert parts
    sources = {s for _, _, files in parts for s in files}
    cdefs = {cdef for cdef, _, _ in parts}
    assert sources == {p.name for p in NATIVE.glob("*.c")}
    assert cdefs == {p.name for p in NATIVE.glob("*.cdef")}
    for _, header, _ in parts:
        assert header is None or (NATIVE / header).is_file(), header
