# All metadata lives in pyproject.toml; cffi_modules can only be given here (cffi issue #55).
from setuptools import setup

setup(cffi_modules=["native/build_ffi.py:ffibuilder"])
