"""The C library's erf family as a backend, and documented bounds beside measured figures."""
import ctypes
import ctypes.util
import dataclasses
import math

import numpy as np
import pytest
from packaging.version import Version

import built_results as built
from gelucheck import published
from gelucheck.backends.registry import get_backend
from gelucheck.functions import ERF, ERFC, GELU, PHI
from gelucheck.report import tables
from gelucheck.results import Identity


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
    figures = built.figures(max_ulp, [], n_inputs=1, not_correctly_rounded=1,
                            worst=(0.75, "0x3f40"), computed=0.7, exact=0.7)
    return built.accuracy(figures, of=built.identity(backend, impl, function, dtype))


def test_the_bounds_file_holds_the_cuda_guide_figures():
    """The CUDA math guide's table, as the issue quotes it: erff 2, erfcf 4, normcdff 5 ulps;
    double erf 2, erfc 5, normcdf 5."""
    by = {(b.library.split(", ")[-1], b.dtype): b.max_ulp for b in published.bounds()
          if b.library.startswith("CUDA")}
    assert by == {("erff", "float32"): 2, ("erfcf", "float32"): 4, ("normcdff", "float32"): 5,
                  ("erf", "float64"): 2, ("erfc", "float64"): 5, ("normcdf", "float64"): 5}
    assert all(b.source for b in published.bounds())


def test_a_measured_figure_above_its_documented_bound_is_shown_as_such():
    """CUDA counts from the correctly rounded result: 5.6 ulps from the exact value is 6 from
    it (one binade: the integer within 1/2), above 5; 2.4 is 2, the bound itself."""
    within = _result("erf", "erf", "float32", 1.9)
    above = _result("special.erfc", "erfc", "float64", 5.6)
    uncovered = _result("F.gelu", "gelu", "float32", 9.0)
    _, body = tables.documented_rows([within, above, uncovered])
    assert [tuple(r[:1] + r[3:7]) for r in body] == [
        ("torch-cuda:erf", "2", "rounded result", "2 (1.9 from exact, sample)",
         "none above on the sample"),
        ("torch-cuda:special.erfc", "5", "rounded result", "6 (5.6 from exact, sample)",
         "ABOVE at x = 0.75")]
    for at in (_result("erf", "erf", "float32", 2.4), _result("erf", "erf", "float32", 2.5)):
        assert not published.bound_for(at).exceeded_by(at)  # 2 (and 2 or 3 at the tie: 2)


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
    documented = rows[0]["documented"]
    assert documented["max_ulp"] == 4 and documented["above"] is False  # 4 or 5 at a tie
    assert documented["metric"] == "correctly-rounded" and documented["counted_at_worst"] == 4
    assert documented["counted_settled"] is False and documented["counted_at_most"] == 5
    assert "CUDA" in rows[0]["documented"]["source"] and "documented" not in rows[1]
    again = jsonio.read(path)
    assert again[0].figures.max_ulp == 4.5 and published.bound_for(again[0]).max_ulp == 4


def _versioned(backend, impl, function, dtype, version_line, max_ulp=0.6, worst=1.25):
    r = _result(impl, function, dtype, max_ulp, backend)
    return dataclasses.replace(
        r, identity=dataclasses.replace(r.identity, backend_version=version_line),
        figures=dataclasses.replace(r.figures, worst_input=worst))


# glibc's x86_64 libm-test-ulps read at each release tag, and the NEWS of 2.41 (erff and
# erfcf correctly rounded from CORE-MATH): (release, implementation, dtype) -> ulps
GLIBC_LISTS = {("2.27", "erf", "float64"): 1, ("2.27", "erfc", "float64"): 3,
               ("2.27", "erff", "float32"): 1, ("2.27", "erfcf", "float32"): 2,
               ("2.32", "erfc", "float64"): 3, ("2.32", "erfcf", "float32"): 3,
               ("2.36", "erf", "float64"): 1, ("2.36", "erfc", "float64"): 5,
               ("2.36", "erff", "float32"): 1, ("2.36", "erfcf", "float32"): 3,
               ("2.40", "erfcf", "float32"): 3, ("2.41", "erf", "float64"): 1,
               ("2.41", "erfc", "float64"): 5, ("2.41", "erff", "float32"): 0.5,
               ("2.41", "erfcf", "float32"): 0.5}


@pytest.mark.parametrize(("release", "impl", "dtype"), sorted(GLIBC_LISTS))
def test_a_c_library_bound_is_the_one_its_release_documents(release, impl, dtype):
    function = "erfc" if impl.startswith("erfc") else "erf"
    line = f"glibc {release} (x86_64), numba 0.68.1"
    bound = published.bound_for(_versioned("libm", impl, function, dtype, line))
    assert bound is not None and bound.max_ulp == GLIBC_LISTS[release, impl, dtype]


def test_a_c_library_bound_holds_only_for_its_releases_and_machine():
    def bound(line, impl="erfcf", function="erfc", dtype="float32"):
        return published.bound_for(_versioned("libm", impl, function, dtype, line))

    assert bound("glibc 2.26 (x86_64)") is None  # before the lists read
    assert bound("glibc 2.36 (aarch64)") is None  # another architecture's list
    assert bound("glibc 2.41 (aarch64)").max_ulp == 0.5  # correctly rounded everywhere
    assert bound("musl 1.2.4 (x86_64)") is None and bound("") is None
    assert bound("glibc 2.36 (x86_64)", "erfc", "erfc", "float32") is None  # double erfc
    assert bound("glibc 2.36 (x86_64)", "erfcf", "erfc", "float16") is None


def test_no_two_bounds_cover_one_result():
    for release in [f"2.{minor}" for minor in range(20, 50)]:
        for machine in ("x86_64", "aarch64"):
            for impl, function, dtype in (("erf", "erf", "float64"), ("erfc", "erfc", "float64"),
                                          ("erff", "erf", "float32"),
                                          ("erfcf", "erfc", "float32")):
                r = _versioned("libm", impl, function, dtype, f"glibc {release} ({machine})")
                assert sum(b.covers(r) for b in published.bounds()) <= 1, (release, impl)


def test_torch_s_erf_is_held_to_mkl_s_high_accuracy_mode_only_where_torch_uses_mkl():
    with_mkl = "2.13.0+cpu, CPU AVX512, MKL 2024.2, MKL up to SSE4_2"
    for impl, function in (("erf", "erf"), ("special.erfc", "erfc")):
        for dtype in ("float32", "float64"):
            bound = published.bound_for(_versioned("torch", impl, function, dtype, with_mkl))
            assert bound.max_ulp == 1 and "HA" in bound.library
    assert published.bound_for(_versioned("torch", "erf", "erf", "float16", with_mkl)) is None
    no_mkl = "2.13.0, CPU DEFAULT"  # an aarch64 build: SLEEF, no MKL
    assert published.bound_for(_versioned("torch", "erf", "erf", "float32", no_mkl)) is None
    capped_only = "2.13.0+cpu, CPU AVX512, MKL up to SSE4_2"  # names no release
    assert published.bound_for(_versioned("torch", "erf", "erf", "float32", capped_only)) is None


def test_torch_s_version_names_the_mkl_release_it_was_built_with():
    from gelucheck.backends.tensors import mkl_release

    show = ("PyTorch built with:\n  - Intel(R) oneAPI Math Kernel Library Version "
            "2024.2-Product Build 20240605 for Intel(R) 64 architecture applications\n")
    assert mkl_release(show) == "MKL 2024.2"
    assert mkl_release("PyTorch built with:\n  - GCC 13.3\n") == "MKL"


def test_a_malformed_versions_field_is_refused_with_the_file_named():
    from gelucheck.errors import GelucheckError

    entry = ('[[bound]]\nfunction = "erf"\ndtype = "float32"\nmax_ulp = 1\nlibrary = "x"\n'
             'source = "y"\nmetric = "exact"\nversions = "{}"\n')
    assert published.parse(entry.format("glibc >=2.33,<2.41"), "b.toml")[0].versions
    for bad in ("glibc", "glibc ", ">=2.33", "glibc newest", "glibc newest >=2.33"):
        with pytest.raises(GelucheckError, match=r"b\.toml: versions must read"):
            published.parse(entry.format(bad), "b.toml")


def test_a_sweep_is_compared_with_its_documented_bound_as_the_document_counts(tmp_path):
    """glibc 2.36's erfcf: 3.126 ulps from the exact value at x = 1.3260872 over every
    float32 input (the figure mpmath gives that input: 3.1257), where its list reads 3. The
    list counts from the correctly rounded result (the ceiling of glibc's ULPDIFF), and
    there 3.126 is 3: not above. Elsewhere a result straddling a power of two could count
    3.5, so neither is it 'within'; 3.6 is 4, above; 2.9 is at most 3, within."""
    from gelucheck.report import jsonio
    from gelucheck.results import SweepResult

    line = "glibc 2.36 (x86_64), numba 0.68.1"
    figures = _versioned("libm", "erfcf", "erfc", "float32", line, 3.1257, 1.3260872).figures
    identity = Identity("libm", "erfcf", "erfc", "float32", backend_version=line)
    sweep = SweepResult(identity, "erfc", "native", ["0x00000000", "0x100000000"], 448,
                        figures=figures)
    assert published.beside(sweep) == (
        "documented 3 ulp from the correctly rounded result, measured 3 at the worst input "
        "(3.126 from the exact value, every input): not above at the worst input "
        "(glibc 2.32-2.40, x86_64, erfcf)")
    path = tmp_path / "sweep.json"
    jsonio.write([sweep], path)
    import json
    documented = json.loads(path.read_text())["results"][0]["documented"]
    assert documented["max_ulp"] == 3 and documented["above"] is False
    assert documented["measured_over"] == "every input"
    above = dataclasses.replace(sweep, figures=dataclasses.replace(figures, max_ulp=3.6))
    assert published.verdict(published.bound_for(above), above) == "ABOVE at x = 1.3260872"
    sweep = dataclasses.replace(sweep, figures=dataclasses.replace(figures, max_ulp=2.9))
    assert published.beside(sweep).endswith("(2.9 from the exact value, every input): within "
                                            "(glibc 2.32-2.40, x86_64, erfcf)")
    part = dataclasses.replace(sweep, range=["0x3f800000", "0x40000000"])
    assert published.verdict(published.bound_for(part), part) == "none above in the range"


def test_a_sample_below_a_documented_bound_is_never_called_within():
    """A float64 figure is the maximum over a sample, a lower bound of the true one: below the
    documented bound it says so (glibc's double erf: 0.968 on the sample, documented 1, while
    the published search finds inputs above 1), and only a 16-bit dtype's every input or a
    whole sweep may read "within"."""
    line = "glibc 2.36 (x86_64), numba 0.68.1"
    sample = _versioned("libm", "erf", "erf", "float64", line, 0.968, 0.5)
    assert published.coverage(sample) == "sample"
    assert published.beside(sample).startswith(
        "documented 1 ulp from the correctly rounded result, measured 1 at the worst input "
        "(0.968 from the exact value, sample): none above on the sample (glibc")
    from gelucheck.report import tables

    _, body = tables.documented_rows([sample])
    assert body[0][4:7] == ["rounded result", "1 (0.968 from exact, sample)",
                            "none above on the sample"]


def test_the_installed_c_library_has_its_documented_bounds(libm):
    """Where this machine's glibc is one the lists cover, the version line the libm backend
    writes is read as such: each C function in its own format gets its bound."""
    import platform

    release = libm.version.split()[1] if libm.version.startswith("glibc ") else ""
    if platform.machine() != "x86_64" or not release or Version(release) < Version("2.27"):
        pytest.skip(f"no list recorded for {libm.version} on {platform.machine()}")
    for impl in libm.implementations:
        (dtype,) = impl.native  # erff and erfcf take float32, erf and erfc float64
        r = _versioned("libm", impl.name, impl.function.name, dtype.name, libm.version)
        assert published.bound_for(r) is not None, (impl.name, libm.version)


ENTRY = ('[[bound]]\nfunction = "{function}"\ndtype = "{dtype}"\nmax_ulp = {max_ulp}\n'
         'library = "x"\nsource = "y"\nmetric = "exact"\n'
         'implementations = ["erf", "special.erf"]\n')


def test_a_bounds_file_is_read_entry_by_entry():
    (bound,) = published.parse(ENTRY.format(function="erf", dtype="float32", max_ulp=2), "b.toml")
    assert (bound.function, bound.dtype, bound.max_ulp) == ("erf", "float32", 2)
    assert bound.implementations == ("erf", "special.erf") and bound.versions == ""


@pytest.mark.parametrize("function, dtype, max_ulp", [
    ("erfx", "float32", 2), ("erf", "float8", 2), ("erf", "float32", 0)])
def test_an_entry_with_one_wrong_field_is_refused_with_the_file_named(function, dtype, max_ulp):
    from gelucheck.errors import GelucheckError

    text = ENTRY.format(function=function, dtype=dtype, max_ulp=max_ulp)
    with pytest.raises(GelucheckError, match=r"^b\.toml: a bound names an unknown function"):
        published.parse(text, "b.toml")


def test_a_file_that_is_not_a_list_of_bounds_is_refused_with_the_file_named():
    from gelucheck.errors import GelucheckError

    for text in ("[[bound]\n", "[[other]]\nx = 1\n", ENTRY.format(
            function="erf", dtype="float32", max_ulp=2) + "colour = 'red'\n"):
        with pytest.raises(GelucheckError, match=r"^b\.toml: not a list of \[\[bound\]\] entries"):
            published.parse(text, "b.toml")


def test_a_library_without_specifiers_says_so():
    with pytest.raises(ValueError, match="no specifiers after the library's name: 'glibc'"):
        published.library_and_specifiers("glibc")
    name, specifiers = published.library_and_specifiers(" MKL >=2021 ")
    assert name == "MKL" and "2024.2" in specifiers and "2020.4" not in specifiers


def test_specifiers_may_be_written_with_spaces():
    text = ENTRY.format(function="erf", dtype="float32", max_ulp=1) + \
        'versions = "glibc >=2.32, <2.41"\n'
    (bound,) = published.parse(text, "b.toml")
    assert bound.holds_for("glibc 2.36 (x86_64)") and not bound.holds_for("glibc 2.41")
    assert not bound.holds_for("glibc 2.31 (x86_64)")


def test_a_result_that_was_not_measured_is_set_beside_no_bound():
    from gelucheck.results import Failure

    covered = _versioned("libm", "erfcf", "erfc", "float32", "glibc 2.36 (x86_64)")
    assert published.beside(covered) is not None
    failed = dataclasses.replace(covered, figures=None, failure=Failure("it raised"))
    assert published.beside(failed) is None


def test_a_bound_without_its_metric_is_refused_naming_the_choices():
    from gelucheck.errors import GelucheckError

    text = ENTRY.format(function="erf", dtype="float32", max_ulp=1)
    for bad in (text.replace('metric = "exact"\n', ""),
                text.replace('"exact"', '"relative"')):
        with pytest.raises(GelucheckError, match=r"b\.toml: .*must be one of exact, "
                                                 r"correctly-rounded"):
            published.parse(bad, "b.toml")


F32_ULP_BELOW_ONE, F32_ULP_AT_ONE = 2.0**-24, 2.0**-23


@pytest.mark.parametrize(("computed", "exact", "error", "counted"), [
    # one binade: 4.487 ulps from the exact value is 4 from the correctly rounded result
    # (CUDA's erfcf at x = 2.717708: 0.000121331694 for 0.000121331726)
    (0.00012133169366279617, 0.0001213317263080023, 4.4867, 4.0),
    # r = 1 - 2^-24 just below 1 and a result two steps above 1: 1 + 4 steps of 2^-24 below
    # is 5 ulps of r, an integer (the steps above 1 are two of r's), e = 5 too
    (1 + 2 * F32_ULP_AT_ONE, 1 - F32_ULP_BELOW_ONE, 5.0, 5.0),
    # r = 1 exactly and a result three steps below it: 3 * 2^-24 = 1.5 ulps of 1 (2^-23),
    # a half-integer count, e = 1.5 as well (v is 1: its ulp is 1's)
    (1 - 3 * F32_ULP_BELOW_ONE, 1.0, 1.5, 1.5),
])
def test_the_count_from_the_correctly_rounded_result_is_bracketed_by_hand(
        computed, exact, error, counted):
    """|y - r| / ulp(r), derived by hand for each case, lies within what gelucheck infers from
    the error against the exact value; in one binade it is the worst input's settled count."""
    got = published.from_rounded(error, computed, exact, "float32")
    assert got.at_worst <= counted <= got.at_most
    if got.settled:
        assert got.at_worst == counted
    assert got.settled == (counted == 4.0)  # only the one-binade case is settled
