"""Assertions for a project's own tests: is my GELU (or Φ) as accurate as I claim?

    from gelucheck.testing import assert_max_ulp

    def test_my_gelu():
        assert_max_ulp(my_gelu, "gelu", "bfloat16", 0.5)

Each measures the callable over every finite input of a 16-bit format, or the stored
stratified sample of float32/float64, against the correctly rounded reference, and raises
``AssertionError`` with the worst case when the claim does not hold.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import signatures
from .backends import Implementation
from .backends.registry import DEVICES, FRAMEWORKS
from .backends.tensors import tensor_kernel, torch_availability
from .checks import accuracy, minimum, regions
from .checks.case import Case
from .checks.specials import check as check_specials
from .errors import UsageError, choose
from .formats import Format, get_format
from .functions import Function, get_function
from .results import Failure, MinimumFinding
from .ulp import is_ulp_limit

__all__ = ["assert_max_ulp", "assert_minimum"]


def _implementation(fn: Callable, function: Function, framework: str,
                    device: str) -> Implementation:
    choose("framework", framework, FRAMEWORKS)
    choose("device", device, DEVICES)
    kernel = fn
    if framework == "torch":
        ok, reason, _ = torch_availability(device)
        if not ok:
            raise UsageError(f"framework torch on {device}: {reason}")
        kernel = tensor_kernel(fn, device)
    elif device != "cpu":
        raise UsageError(f"device {device} needs framework='torch'")
    name = getattr(fn, "__qualname__", repr(fn))
    return Implementation("user", name, function, kernel, device=device)


def _limit(max_ulp: float) -> None:
    """A limit that could not fail (NaN) or could not pass (below 0) is the caller's error,
    said before any measurement."""
    if not is_ulp_limit(max_ulp):
        raise UsageError(f"max_ulp {max_ulp!r}: need a number of ulps, 0 or more (inf allowed, "
                         "NaN not)")


def _region_mask(x: np.ndarray, region: str | None) -> np.ndarray:
    if region is None:
        return np.ones(len(x), dtype=bool)
    bounds = {name: (lo, hi) for name, lo, hi in regions.REGIONS}
    lo, hi = choose("region", region, bounds)
    return regions.mask(x, lo, hi)


def assert_max_ulp(fn: Callable, function: str | Function, dtype: str | Format,
                   max_ulp: float, *, framework: str = "numpy", device: str = "cpu",
                   region: str | None = None, specials: bool = True) -> None:
    """Assert that ``fn`` computes ``function`` in ``dtype`` within ``max_ulp`` ulps (0.5:
    correctly rounded) on every stored input (of ``region`` only, e.g. "x<-5", if given),
    and, with ``specials``, meets the limits at ±0, ±inf, NaN, ±max and ±min subnormal."""
    __tracebackhide__ = True  # pytest shows the user's test, not gelucheck's frames
    _limit(max_ulp)
    function, fmt = get_function(function), get_format(dtype)
    impl = _implementation(fn, function, framework, device)
    case = Case.load(impl, fmt)
    result = accuracy.measure_case(case)
    if result.failure:
        raise AssertionError(f"{impl.name} {function.name} {fmt.name}: "
                             f"{result.failure.reason}")
    measured, outputs = case.errors, case.outputs
    x = case.x
    where = _region_mask(x, region)
    over = np.flatnonzero(np.where(where, measured, -1.0) > max_ulp)
    if max_ulp <= 0.5:  # correct rounding: decided by the value, not a 0.5 score
        over = np.flatnonzero(where & ~accuracy.correctly_rounded(outputs, case.rounded))
    if over.size:
        i = int(over[np.argmax(measured[over])])
        error = float(measured[i])
        if max_ulp <= 0.5:  # "exceed 0.5 ulp ... 0.5 ulp" said nothing: say what went wrong
            how = ("a tie rounded the wrong way (or a hair past one: 0.5 ulp)" if error <= 0.5
                   else f"{error:.4g} ulp off")
            what = (f"not correctly rounded ({over.size} of {int(where.sum())} inputs, e.g. "
                    f"{how} at x = {float(x[i])!r} ({fmt.hex(x[i])}))")
        else:
            what = (f"{over.size} of {int(where.sum())} inputs exceed {max_ulp:g} ulp; worst "
                    f"x = {float(x[i])!r} ({fmt.hex(x[i])}), {error:.4g} ulp")
        raise AssertionError(
            f"{impl.name} {function.name} {fmt.name}" + (f" in {region}" if region else "")
            + f": {what}: computed {float(outputs[i])!r}, correctly rounded "
            f"{float(case.rounded[i])!r}"
            + signatures.text(signatures.of_result(case, result)))
    if specials:
        found = check_specials(impl, fmt)
        if isinstance(found, Failure):  # it raised on them: that is the assertion's answer
            raise AssertionError(f"{impl.name} {function.name} {fmt.name}: special inputs: "
                                 f"{found.reason}")
        wrong = [f"{label}: expected {s.expected!r}, computed {s.computed!r}"
                 for label, s in found.items() if not s.ok]
        if wrong:
            raise AssertionError(f"{impl.name} {function.name} {fmt.name}: special inputs "
                                 "that miss their limit - " + "; ".join(wrong))


def assert_minimum(fn: Callable, dtype: str | Format, *, function: str | Function = "gelu",
                   max_ulp: float = 0.5, framework: str = "numpy",
                   device: str = "cpu") -> MinimumFinding:
    """Assert that the correctly rounded x* lies on the plateau of ``fn``'s smallest outputs
    and that the smallest output is within ``max_ulp`` of GELU(x*) (or the tanh form's).
    Returns what was found."""
    __tracebackhide__ = True
    _limit(max_ulp)
    function, fmt = get_function(function), get_format(dtype)
    if not function.has_minimum:
        raise UsageError(f"{function.name} has no negative minimum; valid: gelu, gelu_tanh")
    impl = _implementation(fn, function, framework, device)
    found = minimum.check(impl, fmt)
    if isinstance(found, Failure):
        raise AssertionError(f"{impl.name} {function.name} {fmt.name}: {found.reason}")
    assert found is not None  # (has_minimum)
    problems = []
    if not found.true_argmin_on_plateau:
        problems.append(f"x* = {found.x_star_rounded!r} is not on the plateau of smallest "
                        f"outputs [{found.plateau_lo!r}, {found.plateau_hi!r}]")
    if found.value_ulp_error > max_ulp:
        problems.append(f"the smallest output {found.value!r} is {found.value_ulp_error:.4g} ulp "
                        f"from the minimum {found.exact_value!r} (allowed {max_ulp:g})")
    if problems:
        raise AssertionError(f"{impl.name} {function.name} {fmt.name}: " + "; ".join(problems))
    return found
