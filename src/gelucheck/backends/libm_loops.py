"""The libm backend's compiled loops (numba, the `fast` extra): each applies a C function to
every element of a flat array - one loop per C type, erf or erfc by a flag. The C functions are
named by their symbols (numba's ExternalFunction, bound by LLVM to the C library the process
has loaded), not by ctypes pointers - whose addresses would be baked into the machine code -
and the loops are module-level functions: numba then keeps them compiled in its cache across
runs (a closure's cache misses)."""
from __future__ import annotations

import numba
from numba import types

_double, _single = types.float64, types.float32
_erf = types.ExternalFunction("erf", _double(_double))
_erfc = types.ExternalFunction("erfc", _double(_double))
_erff = types.ExternalFunction("erff", _single(_single))
_erfcf = types.ExternalFunction("erfcf", _single(_single))


# (the condition does not change within a loop: LLVM takes it out of the loop)
@numba.njit(nogil=True, cache=True)
def double(flat, out, complement):
    for i in range(flat.size):
        out[i] = _erfc(flat[i]) if complement else _erf(flat[i])


@numba.njit(nogil=True, cache=True)
def single(flat, out, complement):
    for i in range(flat.size):
        out[i] = _erfcf(flat[i]) if complement else _erff(flat[i])


# per C name: the loop, and whether it takes the complement
LOOPS = {"erf": (double, False), "erfc": (double, True), "erff": (single, False),
         "erfcf": (single, True)}
