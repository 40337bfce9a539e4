# All metadata lives in pyproject.toml; cffi_modules can only be given here (cffi issue #55).
import sys
import sysconfig

from setuptools import setup

# native/build_ffi.py asks for the stable ABI, which cffi grants unless this Python is a
# debug or free-threaded build (then Py_LIMITED_API is left undefined and the module is
# tied to this version). Tag the wheel to say the same: cp39-abi3 only when it is true.
_limited = not (sysconfig.get_config_var("Py_DEBUG") or sysconfig.get_config_var("Py_GIL_DISABLED"))
_options = {"bdist_wheel": {"py_limited_api": "cp39"}} if _limited and sys.implementation.name == "cpython" else {}

setup(cffi_modules=["native/build_ffi.py:ffibuilder"], options=_options)
