"""The functions gelucheck measures: one table, one row per function.

Everything that differs between functions - the mpmath formula, the limits at ±inf and NaN,
the sign of f(-0), the side from which the exact value approaches a limit it rounds to, the
function a form approximates or differentiates, whether it has GELU's negative minimum - is
a field or method of its row, so that code asks the row instead of switching on names.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .errors import UsageError, choose
from .reference import arbformulas, mpformulas
from .reference.plans import ERF_FAMILY, GELU_FAMILY, InputPlan

# Families: the shape of a function that the reference's special cases rely on.
CDF = "cdf"  # 0 at -inf, 1/2 at 0, 1 at +inf, always positive
X_TIMES_CDF = "x*cdf"  # x times a CDF: -0 at -inf, x/2 near 0, x at +inf, the sign of x
DERIVATIVE = "derivative"  # of an x*cdf: below 0 far left, 1/2 at 0, above 1 far right
PDF = "pdf"  # a density: positive, 0 at ±inf, largest at 0
ODD = "odd"  # erf: odd, -1 at -inf, +1 at +inf, the sign of x
COMPLEMENT = "complement"  # erfc = 1 - erf: 2 at -inf, +0 at +inf, always positive

_LIMITS = {CDF: (0.0, 1.0), X_TIMES_CDF: (-0.0, math.inf), DERIVATIVE: (-0.0, 1.0),
           PDF: (0.0, 0.0), ODD: (-1.0, 1.0), COMPLEMENT: (2.0, 0.0)}
# The closed range of each family's values, where it is simple (None: no bound is checked).
_BOUNDS: dict[str, tuple[float, float] | None] = {
    CDF: (0.0, 1.0), X_TIMES_CDF: None, DERIVATIVE: None, PDF: (0.0, 1.0), ODD: (-1.0, 1.0),
    COMPLEMENT: (0.0, 2.0)}
# Families whose value has the sign of x (f(-0) = -0): a nonzero result of the other sign is
# wrong however close it is, as is one outside the range.
_SIGN_OF_X = (X_TIMES_CDF, ODD)

# The side of the exact value from the rounded one when the working precision cannot see the
# difference: (small |x|, far left, far right). "x": the sign of x (1/2 + c·x), "-x" its
# opposite. Φ is above 0 and below 1; x·Φ is x/2 plus a positive term near 0 and below its
# limits far out; GELU′ is 1/2 + 2φ(0)x near 0, below 0 far left (Φ < |x|φ) and above 1 far
# right; φ is positive; erf lies inside (-1, 1); erfc is 1 - 2x/√π near 0, inside (0, 2).
_SIDES: dict[str, tuple[str | float, float, float]] = {
    CDF: ("x", 1.0, -1.0), X_TIMES_CDF: (1.0, -1.0, -1.0), DERIVATIVE: ("x", -1.0, 1.0),
    PDF: (-1.0, 1.0, 1.0), ODD: ("x", 1.0, -1.0), COMPLEMENT: ("-x", -1.0, 1.0)}


@dataclass(frozen=True)
class Function:
    name: str
    description: str
    family: str
    mp: Callable = field(repr=False, compare=False)  # the mpmath formula of record
    # the derivative in mpmath, for the minimum (None: the function has no interior minimum)
    mp_derivative: Callable | None = field(default=None, repr=False, compare=False)
    approximates: str | None = None  # the tanh form approximates exact GELU
    derivative_of: str | None = None  # gelu_grad is the derivative of gelu
    # Where terms cancel (GELU′ near x*): the size of the terms, which the error of the
    # working precision is relative to. None: relative to the value itself.
    mp_scale: Callable | None = field(default=None, repr=False, compare=False)
    # The derivative of mp, where it changes sign (GELU′ at its maximum, x = √2).
    mp_slope: Callable | None = field(default=None, repr=False, compare=False)
    # The same function in Arb's interval arithmetic (reference/arbformulas.py), written apart
    # from mp: the certified second reference. None: Arb does not check this function.
    arb: Callable | None = field(default=None, repr=False, compare=False)
    # Where its float32/float64 samples put their dense windows; functions of one plan share
    # one stored input file (docs/design.md, Inputs).
    inputs: InputPlan = field(default=GELU_FAMILY, compare=False)
    # f''(x*) at the interior minimum, which sizes the window the minimum check scans.
    curvature: float | None = None
    # The module of gelucheck.sweep that computes its fast float64 reference for the
    # exhaustive float32 sweep (docs/design.md, The sweep; erf's: The sweep of erf and erfc)
    sweep_reference: str = "fastref"
    # Why the exhaustive float32 sweep has no proven fast reference for it (None: it has one).
    no_sweep: str | None = None

    @property
    def limits(self) -> dict[str, float]:
        """The values at the non-finite inputs (docs/design.md, Inputs)."""
        left, right = _LIMITS[self.family]
        return {"+inf": right, "-inf": left, "nan": math.nan}

    def zero_is_negative(self, x: float) -> bool:
        """Whether a zero result at x is -0: x·Φ(x) keeps the sign of x (IEEE: f(-0) = -0,
        and the far-left tail is negative), GELU′ is negative far left; Φ and φ are not."""
        if self.sign_of_x:
            return math.copysign(1.0, x) < 0
        return self.family == DERIVATIVE and x < 0

    def saturated(self, x: float) -> float:
        """The value every format rounds f(x) to once |x| >= 64, where f is its limit to far
        below any quantum: x itself for x·Φ far right, else the limit at that side."""
        if self.family == X_TIMES_CDF and x > 0:
            return x
        return self.limits["-inf" if x < 0 else "+inf"]

    def residual_side(self, x: float) -> float:
        """The sign of (exact - rounded) where the difference is too small to see."""
        small, left, right = _SIDES[self.family]
        if abs(x) < 1:
            return small if isinstance(small, float) else (x if small == "x" else -x)
        return left if x < 0 else right

    @property
    def bounds(self) -> tuple[float, float] | None:
        return _BOUNDS[self.family]

    @property
    def sign_of_x(self) -> bool:
        return self.family in _SIGN_OF_X

    def impossible(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Where a result cannot be the function's at any precision: outside its range
        (|erf| > 1, Φ < 0) or, for a function with the sign of x, nonzero of the other sign.
        NaN is judged by the ulp error, not here."""
        y64, x64 = np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64)
        bad = np.zeros(y64.shape, dtype=bool)
        if self.bounds is not None:
            lo, hi = self.bounds
            bad |= (y64 < lo) | (y64 > hi)
        if self.sign_of_x:
            bad |= (y64 != 0) & (np.signbit(y64) != np.signbit(x64))
        return bad & ~np.isnan(y64)

    @property
    def has_minimum(self) -> bool:
        return self.mp_derivative is not None

    def require_sweep(self) -> None:
        """A clear error where the sweep has no proven fast reference for this function."""
        if self.no_sweep is not None:
            raise UsageError(f"no exhaustive sweep of {self.name}: {self.no_sweep}")

    def __str__(self) -> str:
        return self.name


PHI = Function("phi", "Gaussian CDF Φ(x) = erfc(-x/√2)/2", CDF, mpformulas.phi,
               arb=arbformulas.phi)
GELU = Function("gelu", "exact GELU x·Φ(x)", X_TIMES_CDF, mpformulas.gelu,
                mpformulas.gelu_prime, arb=arbformulas.gelu, curvature=0.43)
GELU_TANH = Function("gelu_tanh", "tanh approximation 0.5·x·(1+tanh(√(2/π)(x+0.044715x³)))",
                     X_TIMES_CDF, mpformulas.gelu_tanh, mpformulas.gelu_tanh_prime,
                     approximates="gelu", arb=arbformulas.gelu_tanh, curvature=0.43)
PHI_GRAD = Function("phi_grad", "Gaussian density φ(x) = exp(-x²/2)/√(2π) = Φ′(x)", PDF,
                    mpformulas.phi_prime, derivative_of="phi", arb=arbformulas.pdf)
GELU_GRAD = Function("gelu_grad", "GELU′(x) = Φ(x) + x·φ(x)", DERIVATIVE,
                     mpformulas.gelu_prime, derivative_of="gelu",
                     mp_scale=mpformulas.gelu_prime_scale, mp_slope=mpformulas.gelu_prime2,
                     arb=arbformulas.gelu_grad)
GELU_TANH_GRAD = Function("gelu_tanh_grad", "derivative of the tanh form", DERIVATIVE,
                          mpformulas.gelu_tanh_prime, approximates="gelu_grad",
                          derivative_of="gelu_tanh",
                          mp_scale=mpformulas.gelu_tanh_prime_scale,
                          mp_slope=mpformulas.gelu_tanh_prime2, arb=arbformulas.gelu_tanh_grad)
ERF = Function("erf", "error function erf(x) = 2/√π ∫₀ˣ exp(-t²) dt", ODD, mpformulas.erf,
               arb=arbformulas.erf, inputs=ERF_FAMILY, sweep_reference="erf_reference")
ERFC = Function("erfc", "complementary error function erfc(x) = 1 - erf(x)", COMPLEMENT,
                mpformulas.erfc, arb=arbformulas.erfc, inputs=ERF_FAMILY,
                sweep_reference="erf_reference")

FUNCTIONS: dict[str, Function] = {f.name: f for f in (PHI, GELU, GELU_TANH, PHI_GRAD,
                                                       GELU_GRAD, GELU_TANH_GRAD, ERF, ERFC)}


def sweepable() -> list[Function]:
    """The rows the exhaustive float32 sweep has a proven fast reference for (``no_sweep``
    None), in FUNCTIONS' order."""
    return [f for f in FUNCTIONS.values() if f.no_sweep is None]


def derivative(function: str | Function) -> Function | None:
    """The row of a function's derivative (gelu -> gelu_grad), None where there is none."""
    name = get_function(function).name
    return next((f for f in FUNCTIONS.values() if f.derivative_of == name), None)


def get_function(name: str | Function) -> Function:
    """A function by name (a Function passes through), or an error naming the valid ones."""
    if isinstance(name, Function):
        return name
    return choose("function", name, FUNCTIONS)
