"""The backends against the reference: ulp error per region, special inputs and the negative
minimum against the budgets; tanh drift against mathematics. Parametrized by the gelucheck
plugin over --gelucheck-backend/-dtype/-function/-impl.

A recorded known defect is shown as an expected failure with its reason, decided inside the
test so that the regression gate stays: a figure worse than its budget fails; within budget
with a recorded defect, xfail; clearly better than a recorded defect, a failure that says the
record is out of date (the strict-xfail rule: an unexpected pass is an error).
"""
import warnings

import numpy as np
import pytest

from gelucheck import judge, signatures
from gelucheck.backends import identity
from gelucheck.checks import (
    accuracy,
    consistency,
    drift,
    fingerprint,
    minimum,
    reference_data,
    sign,
    specials,
)
from gelucheck.checks.case import Case
from gelucheck.functions import GELU
from gelucheck.pytest_plugin import only_functions
from gelucheck.results import AccuracyResult, MinimumFinding, SignFinding


def _judge(result, gelucheck_budgets, record_gelucheck, explain=lambda: ""):
    verdict = judge.judge(result, gelucheck_budgets)
    if verdict.missing_tier:  # recorded on other kernel tiers only: which, and how it fares
        record_gelucheck(result)
        pytest.fail(f"{result.label}: {verdict.message()}", pytrace=False)
    if verdict.missing:  # never skipped into green: held to the stated default
        record_gelucheck(result)
        default = gelucheck_budgets.default_max_ulp
        held = judge.judge_default(result, default)
        assert not held.failed, (
            f"{result.label}: no budget recorded, so held to --gelucheck-max-ulp {default:g} "
            f"(special inputs at their limits): {'; '.join(held.worse)}. Record its budget with "
            f"`gelucheck budgets --write FILE --impl MOD:FN --function "
            f"{result.identity.function}` and pass it with --gelucheck-budgets FILE"
            + explain())
        return
    note = verdict.message() if verdict.better and not verdict.failed else None
    record_gelucheck(result, note)
    if note:
        warnings.warn(note, stacklevel=2)
    assert not verdict.failed, verdict.message() + explain()
    if verdict.defects:
        reasons = "; ".join(f"{d}: {gelucheck_budgets.defects[d].get('reason', '')}"
                            for d in verdict.defects)
        pytest.xfail(f"known defect, within its budget - {reasons}")


def test_ulp(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, fmt = accuracy_case
    case = Case.load(impl, fmt)
    result = accuracy.measure_case(case)
    assert result.failure is None, result.failure.reason
    # a failure says the mechanism too (gelucheck.signatures), computed only then
    _judge(result, gelucheck_budgets, record_gelucheck,
           explain=lambda: signatures.text(signatures.of_result(case, result)))


def test_specials(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, fmt = accuracy_case
    result = AccuracyResult(identity(impl, fmt), impl.reference_function.name,
                            impl.how(fmt), impl.description, specials=specials.check(impl, fmt))
    _judge(result, gelucheck_budgets, record_gelucheck)


@only_functions("gelu", "gelu_tanh")
def test_minimum(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, fmt = accuracy_case
    found = minimum.check(impl, fmt)
    assert isinstance(found, MinimumFinding), found
    # the smallest output is within the window and the window brackets x*
    assert found.window[0] < found.x_star < found.window[1]
    assert found.plateau_lo <= found.plateau_hi
    result = AccuracyResult(identity(impl, fmt), impl.reference_function.name,
                            impl.how(fmt), impl.description, minimum=found)
    _judge(result, gelucheck_budgets, record_gelucheck)


def test_tanh_drift(drift_case):
    """The drift a backend shows stays within its two implementations' own errors of the
    mathematical drift: | max|a-b| - max|A-B| | <= max|a-A| + max|b-B| on the same inputs."""
    exact_impl, tanh_impl, fmt = drift_case
    tab = reference_data.table(fmt, GELU)
    x = tab.x
    a = exact_impl(x).astype(np.float64) if exact_impl else tab.rounded(GELU).astype(np.float64)
    b = tanh_impl(x).astype(np.float64)
    A, B = tab.exact(GELU), tab.exact(tanh_impl.reference_function)
    finite = np.isfinite(a) & np.isfinite(b)
    # errors near float64's largest (a clipped stand-in, a float32 inside float64) may
    # overflow the slack to inf: the bound then holds trivially
    with np.errstate(over="ignore"):
        measured = np.max(np.abs(a - b)[finite])
        truth = np.max(np.abs(A - B)[finite])
        slack = np.max(np.abs(a - A)[finite]) + np.max(np.abs(b - B)[finite])
        assert abs(measured - truth) <= slack * (1 + 1e-12) + 1e-300
    result = drift.backend_drift(exact_impl, tanh_impl, fmt)
    assert result.figures is not None, result.failure
    assert result.figures.max_abs == pytest.approx(measured, rel=1e-12)
    assert 0 <= result.figures.differ_fraction <= 1


@only_functions("gelu_grad", "gelu_tanh_grad")
def test_sign(accuracy_case, gelucheck_budgets, record_gelucheck):
    """A derivative's sign: wrong signs and false zeros within budget, and the change of
    sign where the exact derivative has its zero (x*)."""
    impl, fmt = accuracy_case
    found = sign.check(impl, fmt)
    assert isinstance(found, SignFinding), found
    result = AccuracyResult(identity(impl, fmt), impl.reference_function.name,
                            impl.how(fmt), impl.description, sign=found)
    _judge(result, gelucheck_budgets, record_gelucheck)


@only_functions("gelu", "gelu_tanh")
def test_fingerprint(accuracy_case, gelucheck_budgets, record_gelucheck):
    """The formula the outputs compute (exact, tanh, x·σ(1.702x), x·σ(1.773x)) is the one
    declared - or a recorded defect - and the one recorded in the budget."""
    impl, fmt = accuracy_case
    found = fingerprint.check(Case.load(impl, fmt))
    assert found is not None and found.n_inputs > 0
    result = AccuracyResult(identity(impl, fmt), impl.reference_function.name,
                            impl.how(fmt), impl.description, fingerprint=found)
    _judge(result, gelucheck_budgets, record_gelucheck)


_CONSISTENCY: dict = {}  # per worker: every path of a case is computed once, judged per item


def test_consistent(consistency_case, gelucheck_budgets):
    """One call path against the bulk result: no more outputs differ than the budget records
    for that path (a path not recorded: none may)."""
    impl, fmt, path = consistency_case
    key = (impl.id, impl.function.name, fmt.name)
    if key not in _CONSISTENCY:
        _CONSISTENCY[key] = consistency.check(impl, fmt)
    result = _CONSISTENCY[key]
    assert result.failure is None, result.failure.reason
    verdict = judge.judge_consistency(result, gelucheck_budgets)
    if verdict.missing_tier:
        pytest.fail(verdict.missing_tier, pytrace=False)
    entry = gelucheck_budgets.get(result)
    recorded = (entry or {}).get("inconsistent", {}).get(path, 0)
    figures = next(p for p in result.paths if p.name == path)
    assert figures.error is None, figures.error
    assert figures.n_differ <= recorded, (
        f"{figures.n_differ} of {figures.n_inputs} outputs differ from the bulk result "
        f"(recorded: {recorded}); e.g. {figures.examples[:1]}")
    if figures.n_differ < recorded:
        pytest.fail(f"fewer outputs differ than recorded ({figures.n_differ} < {recorded}): "
                    "update the budget (gelucheck consistency --write-budgets)")
