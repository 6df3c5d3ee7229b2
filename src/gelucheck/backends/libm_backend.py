"""The C library's erf and erfc (double) and erff and erfcf (float): what every other library
is measured against. Each is called from a loop numba compiles (libm_loops.py, kept in numba's
cache across runs), so a whole array costs no Python call per input - fast enough for the
exhaustive float32 sweep. numba is the `fast` extra; without it the backend says so."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from ..functions import get_function
from .base import Backend, Implementation

# (C name, function, C type): the implementation names are the C names.
FUNCTIONS = (("erf", "erf", "double"), ("erfc", "erfc", "double"),
             ("erff", "erf", "float"), ("erfcf", "erfc", "float"))
# A 16-bit input goes into the C type exactly and its result is rounded once back (a float
# result is rounded twice for float16: float32 first - part of what is measured); float32
# input to the double functions likewise, as a C program calling erf on a float does.
WIDER = {"double": {FLOAT16: FLOAT64, BFLOAT16: FLOAT64, FLOAT32: FLOAT64},
         "float": {FLOAT16: FLOAT32, BFLOAT16: FLOAT32}}
NATIVE = {"double": (FLOAT64,), "float": (FLOAT32,)}


def library_version() -> str:
    """The C library by name and version: glibc's own confstr, else what platform says."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or "unknown C library"
    except (ValueError, OSError, AttributeError):
        name, version = platform.libc_ver()
        return f"{name} {version}".strip() or "unknown C library"


def _kernel(loops, cname: str, dtype):
    def kernel(x: np.ndarray) -> np.ndarray:
        flat = np.ascontiguousarray(x, dtype=dtype).ravel()
        out = np.empty_like(flat)
        loop, complement = loops[cname]
        loop(flat, out, complement)
        return out.reshape(np.shape(x))

    return kernel


def load() -> Backend:
    path = ctypes.util.find_library("m")
    try:
        libm = ctypes.CDLL(path or "libm.so.6")
    except OSError as exc:
        return Backend("libm", False, f"the C math library cannot be loaded ({exc})", None)
    try:
        import numba
    except ImportError as exc:
        return Backend("libm", False, f"numba is not installed ({exc}): it compiles the loops "
                       "that call the C functions; pip install 'gelucheck[fast]'", None)
    import llvmlite.binding

    # the symbols the loops name, from this library (the process has it already, as a rule)
    llvmlite.binding.load_library_permanently(libm._name)
    from .libm_loops import LOOPS as loops

    impls = []
    for cname, function, ctype in FUNCTIONS:
        dtype = np.float64 if ctype == "double" else np.float32
        impls.append(Implementation(
            "libm", cname, get_function(function), _kernel(loops, cname, dtype),
            native=NATIVE[ctype],
            wider=WIDER[ctype], rows_batch=True,
            description=f"{ctype} {cname}({ctype}) of {path or 'libm.so.6'}, in a numba loop"))
    return Backend("libm", True, "", f"{library_version()} ({platform.machine()}), "
                   f"numba {numba.__version__}", tuple(impls))
