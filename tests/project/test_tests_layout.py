"""The tests' own layout: helpers two test files share live in tests/support/, never in a test module."""

from __future__ import annotations

import ast
from pathlib import Path

from support import TESTS


def test_no_test_module_imports_another():
    """No file under tests/ imports a ``test_*`` module: what two test files share is in support/."""
    found = []
    for path in sorted(Path(TESTS).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [f"{path.relative_to(TESTS)}: {n}" for n in names if n.split(".")[-1].startswith("test_")]
    assert found == []
