"""The functions gelucheck measures: one table, one row per function.

Everything that differs between functions - the mpmath formula, the limits at ±inf and NaN,
the sign of f(-0), the function a form approximates, whether it has GELU's negative minimum -
is a field of its row, so that code asks the row instead of switching on names.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import choose
from .reference import mpformulas

# Families: the shape of a function that the reference's special cases rely on.
CDF = "cdf"  # 0 at -inf, 1/2 at 0, 1 at +inf, always positive
X_TIMES_CDF = "x*cdf"  # x times a CDF: -0 at -inf, x/2 near 0, x at +inf, the sign of x


@dataclass(frozen=True)
class Function:
    name: str
    description: str
    family: str
    mp: Callable = field(repr=False, compare=False)  # the mpmath formula of record
    # the derivative in mpmath, for the minimum (None: the function has no interior minimum)
    mp_derivative: Callable | None = field(default=None, repr=False, compare=False)
    approximates: str | None = None  # the tanh form approximates exact GELU

    @property
    def limits(self) -> dict[str, float]:
        """The values at the non-finite inputs (docs/design.md, Inputs)."""
        if self.family == CDF:
            return {"+inf": 1.0, "-inf": 0.0, "nan": math.nan}
        return {"+inf": math.inf, "-inf": -0.0, "nan": math.nan}

    def at_zero_is_negative(self, x: float) -> bool:
        """f(-0) = -0 for x·Φ(x) (IEEE keeps the sign of the factor x); Φ(±0) = 1/2."""
        return self.family == X_TIMES_CDF and x == 0 and math.copysign(1.0, x) < 0

    @property
    def has_minimum(self) -> bool:
        return self.mp_derivative is not None

    def __str__(self) -> str:
        return self.name


PHI = Function("phi", "Gaussian CDF Φ(x) = erfc(-x/√2)/2", CDF, mpformulas.phi)
GELU = Function("gelu", "exact GELU x·Φ(x)", X_TIMES_CDF, mpformulas.gelu,
                mpformulas.gelu_prime)
GELU_TANH = Function("gelu_tanh", "tanh approximation 0.5·x·(1+tanh(√(2/π)(x+0.044715x³)))",
                     X_TIMES_CDF, mpformulas.gelu_tanh, mpformulas.gelu_tanh_prime,
                     approximates="gelu")

FUNCTIONS: dict[str, Function] = {f.name: f for f in (PHI, GELU, GELU_TANH)}


def get_function(name: str | Function) -> Function:
    """A function by name (a Function passes through), or an error naming the valid ones."""
    if isinstance(name, Function):
        return name
    return choose("function", name, FUNCTIONS)
