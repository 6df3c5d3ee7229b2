"""The libm backend's compiled loops (numba, the `fast` extra): each applies one C function to
every element of a flat array. The C function is named by its symbol (numba's
ExternalFunction, bound by LLVM to the C library the process has loaded), not by a ctypes
pointer - whose address would be baked into the machine code - and each loop is a module-level
function: numba then keeps them compiled in its cache across runs (a closure's cache
misses)."""
from __future__ import annotations

import numba
from numba import types

_double, _single = types.float64, types.float32
_erf = types.ExternalFunction("erf", _double(_double))
_erfc = types.ExternalFunction("erfc", _double(_double))
_erff = types.ExternalFunction("erff", _single(_single))
_erfcf = types.ExternalFunction("erfcf", _single(_single))


@numba.njit(nogil=True, cache=True)
def erf(flat, out):
    for i in range(flat.size):
        out[i] = _erf(flat[i])


@numba.njit(nogil=True, cache=True)
def erfc(flat, out):
    for i in range(flat.size):
        out[i] = _erfc(flat[i])


@numba.njit(nogil=True, cache=True)
def erff(flat, out):
    for i in range(flat.size):
        out[i] = _erff(flat[i])


@numba.njit(nogil=True, cache=True)
def erfcf(flat, out):
    for i in range(flat.size):
        out[i] = _erfcf(flat[i])


LOOPS = {"erf": erf, "erfc": erfc, "erff": erff, "erfcf": erfcf}
