"""The C library's erf family as a backend, and documented bounds beside measured figures."""
import ctypes
import ctypes.util
import math

import numpy as np
import pytest

from gelucheck import published
from gelucheck.backends.registry import get_backend
from gelucheck.functions import ERF, ERFC, GELU, PHI
from gelucheck.report import tables
from gelucheck.results import AccuracyResult, ErrorFigures, Identity


@pytest.fixture(scope="module")
def libm():
    backend = get_backend("libm")
    if not backend.available:
        pytest.skip(f"libm backend unavailable: {backend.reason}")
    return backend


def test_the_implementations_are_the_c_names_and_the_version_names_the_library(libm):
    assert sorted(i.name for i in libm.implementations) == ["erf", "erfc", "erfcf", "erff"]
    assert libm.version.split()[0] in ("glibc", "musl") or "libc" in libm.version
    import os
    if hasattr(os, "confstr"):
        assert os.confstr("CS_GNU_LIBC_VERSION") in libm.version


def test_the_compiled_loop_returns_what_the_c_function_returns(libm):
    """A few inputs through ctypes one by one (the C function itself) and through the loop."""
    c = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    x = np.array([-30.0, -3.9, -1.0, -1e-300, -0.0, 0.0, 5e-324, 0.5, 2.0, 9.9, 27.3],
                 dtype=np.float64)
    for impl in libm.implementations:
        cfunc = getattr(c, impl.name)
        single = impl.name in ("erff", "erfcf")
        ctype = ctypes.c_float if single else ctypes.c_double
        cfunc.argtypes, cfunc.restype = [ctype], ctype
        dtype = np.float32 if single else np.float64
        xs = x.astype(dtype)
        want = np.array([cfunc(float(v)) for v in xs], dtype=dtype)
        got = impl(xs)
        assert np.array_equal(got.view(f"u{dtype().itemsize}"),
                              want.view(f"u{dtype().itemsize}")), impl.name
        assert impl(xs.reshape(11, 1)).shape == (11, 1)


def _result(impl, function, dtype, max_ulp, backend="torch-cuda"):
    figures = ErrorFigures(n_inputs=1, max_ulp=max_ulp, mean_ulp=0.1, n_infinite=0,
                           not_correctly_rounded=1, worst_input=0.75, worst_input_hex="0x3f40",
                           computed=0.7, exact=0.7, max_abs_error=0.0, max_abs_at=0.75,
                           regions=[])
    return AccuracyResult(Identity(backend, impl, function, dtype), function, "native", "",
                          figures=figures)


def test_the_bounds_file_holds_the_cuda_guide_figures():
    """The CUDA math guide's table, as the issue quotes it: erff 2, erfcf 4, normcdff 5 ulps;
    double erf 2, erfc 5, normcdf 5."""
    by = {(b.library.split(", ")[-1], b.dtype): b.max_ulp for b in published.bounds()
          if b.library.startswith("CUDA")}
    assert by == {("erff", "float32"): 2, ("erfcf", "float32"): 4, ("normcdff", "float32"): 5,
                  ("erf", "float64"): 2, ("erfc", "float64"): 5, ("normcdf", "float64"): 5}
    assert all(b.source for b in published.bounds())


def test_a_measured_figure_above_its_documented_bound_is_shown_as_such():
    within = _result("erf", "erf", "float32", 1.9)
    above = _result("special.erfc", "erfc", "float64", 5.5)
    uncovered = _result("F.gelu", "gelu", "float32", 9.0)
    _, body = tables.documented_rows([within, above, uncovered])
    assert [(r[0], r[3], r[5]) for r in body] == [
        ("torch-cuda:erf", "2", "within"), ("torch-cuda:special.erfc", "5", "ABOVE at x = 0.75")]
    at = _result("erf", "erf", "float32", 2.0)  # a bound is the largest error allowed
    assert not published.bound_for(at).exceeded_by(at)


def test_impossible_results_by_hand():
    x = np.array([-2.0, -1e-30, 1e-30, 3.0, 0.0, -0.0])
    assert list(ERF.impossible(x, np.array([-1.0, -1e-30, -1e-30, 1.0000001, 0.0, 0.0]))) == [
        False, False, True, True, False, False]  # +tiny -> negative; above 1; zeros are fine
    assert list(ERFC.impossible(x, np.array([2.0, 1.0, 1.0, -1e-300, 1.0, 2.0000001]))) == [
        False, False, False, True, False, True]
    assert list(PHI.impossible(x, np.array([-0.0, 0.5, 0.5, 1.0, 0.5, 0.5]))) == [False] * 6
    assert list(GELU.impossible(x, np.array([1e-9, -0.0, 0.0, 3.0, 0.0, 0.0]))) == [
        True, False, False, False, False, False]
    nan = np.array([math.nan, -math.nan])  # NaN of either sign bit: the ulp error's job
    assert not ERF.impossible(np.array([1.0, 1.0]), nan).any()
    assert not ERFC.impossible(np.array([1.0, -1.0]), nan).any()


def test_the_json_report_carries_the_documented_bound_and_reads_back(tmp_path):
    from gelucheck.report import jsonio

    path = tmp_path / "r.json"
    jsonio.write([_result("erfc", "erfc", "float32", 4.5), _result("F.gelu", "gelu",
                                                                     "float32", 1.0)], path)
    import json
    rows = json.loads(path.read_text())["results"]
    assert rows[0]["documented"]["max_ulp"] == 4 and rows[0]["documented"]["above"] is True
    assert "CUDA" in rows[0]["documented"]["source"] and "documented" not in rows[1]
    again = jsonio.read(path)
    assert again[0].figures.max_ulp == 4.5 and published.bound_for(again[0]).max_ulp == 4
