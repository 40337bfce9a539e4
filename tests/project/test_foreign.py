"""The C declarations of the libraries fbgfx opens at run time come from native/abi/."""

from __future__ import annotations

import pathlib
import re

import pytest
import support

from fbgfx import _foreign

ROOT = pathlib.Path(support.ROOT)
ABI = sorted((ROOT / "native" / "abi").glob("*.cdef"))


def test_every_abi_declaration_file_is_built_into_the_module() -> None:
    """Each native/abi/NAME.cdef reads back from the built module exactly as written."""
    assert {p.stem for p in ABI} >= {"alsa", "swscale"}
    for path in ABI:
        assert _foreign.declarations(path.stem) == path.read_text(), path.name


def test_declarations_give_an_ffi_without_opening_a_library() -> None:
    """load() with no library gives an FFI that knows the declared types."""
    ffi, libs = _foreign.load("alsa")
    assert libs == []
    assert ffi.typeof("snd_pcm_t **").kind == "pointer"


def test_an_unknown_name_is_a_lookup_error() -> None:
    """A name with no native/abi file says so, naming the file."""
    with pytest.raises(LookupError, match=r"native/abi/nothing\.cdef"):
        _foreign.declarations("nothing")


def test_no_c_declarations_in_python_strings() -> None:
    """Only fbgfx/_foreign.py hands declarations to cffi: no other module calls .cdef()."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "fbgfx").rglob("*.py"))
        if path.name != "_foreign.py" and re.search(r"\.cdef\(|\bdlopen\(", path.read_text())
    ]
    assert offenders == []
