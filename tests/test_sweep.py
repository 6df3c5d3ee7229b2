"""The exhaustive float32 sweep: its fast reference, its chunks, resuming, bad input."""
import json
import re

import mpmath
import numpy as np
import pytest

from gelucheck.backends import find, load_user
from gelucheck.checks import reference_data
from gelucheck.checks.regions import REGIONS, mask
from gelucheck.cli import main
from gelucheck.commands.sweep import _timing
from gelucheck.formats import FLOAT32, FLOAT64
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.sweep import chunk, edges, fastref, loops, proofs, reference, runner, scoring
from gelucheck.sweep import stats as sweep_stats
from gelucheck.sweep.checkpoint import CheckpointError
from gelucheck.sweep.known import known_part
from gelucheck.sweep.stats import merge_all
from sweep_figures import plain

FUNCTIONS = ("phi", "gelu", "gelu_tanh", "phi_grad", "gelu_grad", "gelu_tanh_grad")


def _size(function, x, exact):
    """What the bound is relative to: the value, or - for the derivatives, whose terms cancel
    at x* - the size of their terms (docs/design.md, The sweep)."""
    from gelucheck.functions import get_function

    f = get_function(function)
    size = fastref.SMOOTH[f](x.astype(np.float64))[1] if f in fastref.SMOOTH else np.abs(exact)
    return np.maximum(size, FLOAT32.smallest_normal)


@pytest.fixture(autouse=True)
def _importable(monkeypatch, request):
    monkeypatch.syspath_prepend(str(request.config.rootpath / "tests"))


def _bound_holds(function, x, exact):
    fast = reference.values(function, x)[0]
    scale = _size(function, x, exact)
    # the fast value, or mpmath's where it was uncertain: within the bound (plus float64's
    # own rounding of the exact value)
    bound = reference.relative_bound(function)
    return np.abs(fast - exact) <= bound * scale + 2.0**-53 * np.abs(exact)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_bound_holds_on_the_stored_reference(function, sweep_path):
    tab = reference_data.table("float32", "gelu")
    ok = _bound_holds(function, tab.x, tab.exact(function))
    assert ok.all(), tab.x[~ok][:5]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_bound_holds_on_a_fresh_random_sample_against_mpmath(function, sweep_path):
    """1,500 random encodings (every binade equally likely) and 1,500 values in [-15, 15]."""
    rng = np.random.default_rng(2026)
    bits = rng.integers(0, 0xFF800000, 1500, dtype=np.uint64).astype(np.uint32)
    bits = bits[(bits < 0x7F800000) | (bits >= 0x80000000)]
    x = np.concatenate([bits.view(np.float32), rng.uniform(-15, 15, 1500).astype(np.float32)])
    x = np.sort(x)
    exact = np.array([float(FLOAT64.from_bits(correctly_rounded(function, float(v), FLOAT32)
                                              .float64_bits)) for v in x])
    ok = _bound_holds(function, x, exact)
    assert ok.all(), x[~ok][:5]


def test_measured_worst_error_is_well_inside_the_bound(sweep_path):
    """The margin the docstrings promise: the fast float64 path is 2^4 or more inside."""
    tab = reference_data.table("float32", "gelu")
    for function in FUNCTIONS:
        v = reference.values(function, tab.x)[0]
        e = tab.exact(function)
        rel = np.abs(v - e) / _size(function, tab.x, e)
        assert rel.max() < reference.relative_bound(function) / 16, function


def test_units_agree_with_the_stored_residuals(sweep_path):
    """float32's ulp of the exact value, from the fast path, is the one the stored
    (rounded, residual) pair implies - at powers of two and around 1/2 included."""
    from gelucheck.ulp import _ulp_of_exact

    tab = reference_data.table("float32", "gelu")
    for function in FUNCTIONS:
        _, unit, _ = reference.values(function, tab.x)
        exact = reference_data.exact(tab, function)
        assert np.array_equal(unit, _ulp_of_exact(exact, FLOAT32)), function


@pytest.mark.parametrize("function", ["gelu_grad", "gelu_tanh_grad"])
def test_the_series_about_x_star_is_exact_to_far_below_the_bound(function):
    """Around x*, where the formula's terms cancel, the Taylor series is accurate relative to
    the value itself (2^-51 measured): so fractional ulps stay good there too."""
    from gelucheck.functions import get_function

    f = get_function(function)
    centre = fastref._series(f)[0]
    tab = reference_data.table("float32", "gelu")
    x64 = tab.x.astype(np.float64)
    near = np.abs(x64 - centre) < fastref.SERIES_WINDOW
    v = fastref._about_x_star(f, x64[near])
    e = tab.exact(f)[near]
    assert near.sum() > 5000
    assert np.max(np.abs(v - e) / np.abs(e)) < 2.0**-48


def _window_around_minimum():
    tab = reference_data.table("float32", "gelu")
    start = int(FLOAT32.bits_of(np.float32(-0.7517915)))
    lo, hi = start - 2000, start + 2000  # inside the stored window of 4,097 values
    x = FLOAT32.from_bits(np.arange(lo, hi, dtype=np.uint32))
    index = np.searchsorted(tab.x.astype(np.float64), x.astype(np.float64)[::-1])
    assert np.array_equal(tab.x[index], x[::-1])
    return lo, hi


@pytest.mark.parametrize("spec, function", [("scipy:x*ndtr", "gelu"), ("torch:F.gelu", "gelu"),
                                            ("torch:F.gelu", "gelu_grad"),
                                            ("torch:F.gelu", "gelu_tanh_grad")])
def test_chunk_equals_the_stored_reference_on_shared_inputs(spec, function):
    """Around x*: for the derivatives the hardest place, where their terms cancel."""
    if spec.startswith("torch"):
        pytest.importorskip("torch", reason="torch is not installed")
    impls = find(spec, function)
    lo, hi = _window_around_minimum()
    swept = chunk.evaluate(impls, function, lo, hi).implementations[f"{spec}/{function}"].whole
    tab = reference_data.table("float32", "gelu")
    x = tab.x.astype(np.float64)
    shared = (x <= float(FLOAT32.from_bits(lo))) & (x >= float(FLOAT32.from_bits(hi - 1)))
    from gelucheck.ulp import ulp_error

    err = ulp_error(impls[0](tab.x[shared]), reference_data.exact(tab, function)[shared], FLOAT32)
    assert swept.n == np.count_nonzero(shared) == hi - lo
    # the fast reference is within 2^-40 relative, so within 2^-40 * 2^24 = 2^-16 ulps
    assert swept.max_ulp == pytest.approx(err.max(), abs=2.0**-16)
    assert swept.not_correctly_rounded == np.count_nonzero(err > 0.5)
    assert swept.sum_ulp == pytest.approx(err.sum(), abs=len(err) * 2.0**-16)


def test_a_planted_error_is_found():
    from sweep_impls import PLANTED

    impl = load_user("sweep_impls:planted", "gelu")
    r = chunk.evaluate([impl], "gelu", 0x3F800000, 0x3F900000).implementations
    stats = r[f"{impl.id}/gelu"].whole
    assert stats.worst_bits == PLANTED
    assert 0.5 < stats.max_ulp <= 1.5
    clean = load_user("sweep_impls:rounded_once", "gelu")
    base = chunk.evaluate([clean], "gelu", 0x3F800000, 0x3F900000).implementations
    assert stats.not_correctly_rounded == base[f"{clean.id}/gelu"].whole.not_correctly_rounded + 1


def test_histogram_and_regions_are_consistent():
    impls = find("scipy:x*erf", "gelu")  # erf's cancellation: errors of every size about -5
    r = chunk.evaluate(impls, "gelu", 0xC0A00000 - 3000, 0xC0A00000 + 3000)  # around x = -5
    s = r.implementations["scipy:x*erf/gelu"]
    assert s.whole.not_correctly_rounded > 1000
    assert sum(s.histogram) == s.whole.n == 6000
    assert s.histogram[0] == s.whole.n - s.whole.not_correctly_rounded
    assert set(s.regions) == {"x<-5", "-5<=x<-1"}
    x = FLOAT32.from_bits(np.arange(0xC0A00000 - 3000, 0xC0A00000 + 3000, dtype=np.uint32))
    for name, lo, hi in REGIONS:
        if name in s.regions:
            assert s.regions[name].n == np.count_nonzero(mask(x, lo, hi))


def _spec(impl="scipy:x*erf"):
    return [{"kind": "builtin", "impl": impl, "function": "gelu"}]


def test_interrupted_sweep_resumes_to_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "TASK", 1 << 14)
    span = (0xBF000000, 0xBF000000 + (1 << 16))
    whole = runner.sweep(_spec(), "gelu", span, workers=1, progress=False)
    calls = {"n": 0}
    real = runner._run_task

    def dies_after_two(task):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt  # Ctrl-C, or a killed worker
        return real(task)

    monkeypatch.setattr(runner, "_run_task", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        runner.sweep(_spec(), "gelu", span, workers=1, checkpoint=tmp_path, progress=False)
    assert len(list(tmp_path.glob("task_*.json"))) == 2
    monkeypatch.setattr(runner, "_run_task", real)
    resumed = runner.sweep(_spec(), "gelu", span, workers=1, checkpoint=tmp_path,
                           progress=False)
    for a, b in zip(whole, resumed):
        assert a.figures == b.figures and a.histogram == b.histogram


def test_parallel_equals_serial(monkeypatch):
    monkeypatch.setattr(runner, "TASK", 1 << 15)
    span = (0x3F800000, 0x3F800000 + (1 << 17))
    serial = runner.sweep(_spec("scipy:x*ndtr"), "gelu", span, workers=1, progress=False)
    merged = merge_all([chunk.evaluate(find("scipy:x*ndtr", "gelu"), "gelu", a, b)
                        for a, b in reversed(runner.tasks(*span))])
    s = merged.implementations["scipy:x*ndtr/gelu"].whole
    assert s.max_ulp == serial[0].figures.max_ulp and s.n == serial[0].figures.n_inputs


def test_a_checkpoint_of_another_sweep_is_refused(tmp_path):
    runner.sweep(_spec(), "gelu", (0x3F800000, 0x3F801000), checkpoint=tmp_path, progress=False)
    with pytest.raises(CheckpointError, match="different sweep.*implementations"):
        runner.sweep(_spec("scipy:x*ndtr"), "gelu", (0x3F800000, 0x3F801000),
                     checkpoint=tmp_path, progress=False)
    with pytest.raises(CheckpointError, match="range"):
        runner.sweep(_spec(), "gelu", (0x3F800000, 0x3F802000), checkpoint=tmp_path,
                     progress=False)


@pytest.mark.parametrize("argv, words", [
    (["--dtype", "float16"], "gelucheck check --dtype float16"),
    (["--dtype", "float64"], "2^64 inputs cannot be swept"),
    (["--range", "3f800000"], "expected START:STOP"),
    (["--range", "0x40000000:0x3f800000"], "START < STOP"),
    (["--backend", "nope"], "valid choices"),
])
def test_bad_input(argv, words, capsys):
    assert main(["sweep", "--function", "gelu", "--backend", "scipy:x*ndtr", *argv]) == 2
    assert words in capsys.readouterr().err


def test_cli_sweep_writes_the_check_schema_plus_histogram(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["sweep", "--backend", "scipy:x*erf", "--impl", "sweep_impls:rounded_once",
                 "--function", "gelu", "--range", "0x3f800000:0x3f810000", "--workers", "1",
                 "--json", str(out), "--no-progress"]) == 0
    results = json.loads(out.read_text())["results"]
    assert [r["backend"] for r in results] == ["scipy", "user"]
    for r in results:
        for k in ("max_ulp", "mean_ulp", "worst_input", "worst_input_hex", "regions",
                  "histogram", "not_correctly_rounded", "n_slow_reference"):
            assert k in r
        assert r["n_inputs"] == 1 << 16
    assert re.search(r"\(\d[\d,.]* (M )?inputs/s computed now\)", capsys.readouterr().out)


def test_the_sweep_says_its_mean_is_of_the_finite_errors_where_some_are_infinite(capsys):
    """A GELU that is +inf from 2^127 (planted: the 16 encodings from 0x7f000000 here, where
    GELU(x) = x) and x itself below: the finite errors are 0, the 16 others infinite."""
    assert main(["sweep", "--impl", "sweep_impls:overflows_from_2p127", "--function", "gelu",
                 "--range", "0x7efffff0:0x7f000010", "--workers", "1", "--no-progress"]) == 0
    assert "max inf ulp at 1.7014118346046923e+38 (0x7f000000), mean 0 over the finite " \
           "errors (16 infinite)," in capsys.readouterr().out


@pytest.mark.parametrize("wall_s, computed, said", [
    (5.0, 16, "5.0 s (3 inputs/s computed now)"),
    (0.0197, 16, "0.02 s (812 inputs/s computed now)"),
    (1.0, 999_999, "1.0 s (999,999 inputs/s computed now)"),
    (2.0586, 4_278_190_080, "2.1 s (2078.2 M inputs/s computed now)")])
def test_the_sweep_says_its_time_and_rate_with_their_digits(wall_s, computed, said):
    """Millions a second only where there are that many, and a time under a second in two
    significant digits: a range of 16 inputs had read "0.0 s (0.0 M inputs/s ...)"."""
    assert _timing(wall_s, computed) == said


@pytest.mark.slow
def test_exhaustive_items_under_xdist_merge_into_the_sweep_result(tmp_path, request):
    """pytest -n 2 -m exhaustive: chunks on two workers, merged by the controller, equal to
    ``gelucheck sweep`` over the same range (which crosses a task boundary: two items)."""
    import subprocess
    import sys

    span = "0x3fff0000:0x40010000"
    out = tmp_path / "merged.json"
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-m", "exhaustive",
           "-p", "no:cacheprovider", str(request.config.rootpath / "tests/test_exhaustive.py"),
           "--gelucheck-backend", "torch", "--gelucheck-function", "gelu",
           "--gelucheck-sweep-range", span, "--gelucheck-sweep-json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=request.config.rootpath)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gelucheck exhaustive float32 sweep" in done.stdout
    from gelucheck.report import jsonio

    merged = {r.identity.implementation: r for r in jsonio.read(out)}
    direct = runner.sweep([{"kind": "builtin", "impl": f"torch:{n}", "function": "gelu"}
                           for n in ("F.gelu", "x*erf")], "gelu", runner.parse_range(span),
                          progress=False)
    for r in direct:
        m = merged[r.identity.implementation]
        assert m.figures.n_inputs == r.figures.n_inputs == 0x20000
        assert m.figures == r.figures and m.histogram == r.histogram


def test_mpmath_is_the_fallback_near_midpoints():
    """An input whose float64 value lies within the bound of a float32 midpoint is resolved
    by mpmath: GELU(x) for a subnormal odd x is a hair above the tie x/2 (by x²φ(0))."""
    x = FLOAT32.from_bits(np.array([0x00000003, 0x80000003], dtype=np.uint32))
    v, unit, _ = reference.values("gelu", x)
    with mpmath.mp.workprec(400):
        exact = [mpmath.mpf(float(t)) * mpmath.ncdf(mpmath.mpf(float(t))) for t in x]
    for vi, e, xi in zip(v, exact, x):
        assert (vi > float(xi) / 2) == (e > mpmath.mpf(float(xi)) / 2)
    assert np.all(unit == 2.0**-149)


def test_histogram_bins_by_hand():
    err = np.array([0.6, 1.0, 1.5, 3.0, 2.0**40, np.inf])
    counts = sweep_stats.histogram(err)
    edges = sweep_stats.histogram_edges()
    assert counts[1] == 1 and counts[2] == 2 and counts[3] == 1  # (1/2,1), [1,2), [2,4)
    assert counts[sweep_stats.BINS - 2] == 1 and counts[sweep_stats.BINS - 1] == 1  # >= 2^33, inf
    for k, e in enumerate(err[:4]):
        b = [1, 2, 2, 3][k]
        assert edges[b] <= e < edges[b + 1] or (b == 1 and 0.5 < e < 1)


def test_histogram_matches_the_edges_on_many_errors():
    """Errors over every bin, repeated (as a bad implementation makes them), counted against
    the edges one by one."""
    rng = np.random.default_rng(5)
    err = np.concatenate([0.5 + rng.random(3000) / 2, 2.0 ** rng.uniform(0, 40, 3000),
                          [1.0, 2.0**33, 2.0**34, np.inf, np.inf, 3.0, 3.0, 3.0]])
    edges = sweep_stats.histogram_edges()
    expected = [0] * sweep_stats.BINS
    last = sweep_stats.BINS - 1
    for e in err:  # bin 1 is (1/2, 1), bin k >= 2 [edge k, edge k+1), the second last open
        b = last if e == np.inf else next(k for k in range(1, last) if edges[k + 1] > e
                                          or k == last - 1)
        expected[b] += 1
    assert sweep_stats.histogram(err).tolist() == expected


GATE_RANGE = "0x3f810000:0x3f820000"  # holds sweep_impls.PLANTED


def _gate_budgets(tmp_path):
    """A budgets file with the float32 entry the sweep figures are recorded in."""
    path = tmp_path / "b.toml"
    path.write_text('["user:sweep_impls:maybe_planted".gelu.float32]\nmax_ulp = 1.0\n')
    return path


def _gate(tmp_path, *extra):
    return main(["sweep", "--impl", "sweep_impls:maybe_planted", "--function", "gelu",
                 "--range", GATE_RANGE, "--workers", "1", "--no-progress", *extra])


def test_a_sweep_gate_fails_on_a_planted_regression(tmp_path, monkeypatch, capsys):
    budgets_file = _gate_budgets(tmp_path)
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    assert _gate(tmp_path, "--write-budgets", str(budgets_file)) == 0
    assert 'range = ["0x3f810000", "0x3f820000"]' in budgets_file.read_text()
    assert _gate(tmp_path, "--budgets", str(budgets_file)) == 0
    monkeypatch.setenv("GELUCHECK_TEST_PLANT", "1")
    capsys.readouterr()
    assert _gate(tmp_path, "--budgets", str(budgets_file)) == 1
    out = capsys.readouterr().out
    assert "worse than budget: correctly rounded" in out or "max ulp" in out
    assert "BUDGET sweep user:sweep_impls:maybe_planted gelu float32" in out


def _exhaustive_items(request, impl: str, span: str, *options: str, **env: str):
    """pytest -m exhaustive on tests/test_exhaustive.py for a user's implementation, in a
    process of its own (its workers import the implementation from tests/)."""
    import os
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "exhaustive", "-p", "no:cacheprovider",
           str(request.config.rootpath / "tests/test_exhaustive.py"), "--gelucheck-impl", impl,
           "--gelucheck-function", "gelu", "--gelucheck-sweep-range", span, *options]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=request.config.rootpath,
                          env={**os.environ, "PYTHONPATH": str(request.config.rootpath /
                                                               "tests"), **env})


@pytest.mark.slow
def test_the_exhaustive_pytest_items_are_a_gate_too(tmp_path, monkeypatch, request):
    budgets_file = _gate_budgets(tmp_path)
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    assert _gate(tmp_path, "--write-budgets", str(budgets_file)) == 0
    gate = ("-n", "2", "--gelucheck-budgets", str(budgets_file))
    clean = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE, *gate)
    assert clean.returncode == 0, clean.stdout[-3000:]
    planted = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE, *gate,
                                GELUCHECK_TEST_PLANT="1")
    assert planted.returncode == 1, planted.stdout[-3000:]
    assert "FAILED sweep user:sweep_impls:maybe_planted gelu float32" in planted.stdout


@pytest.mark.slow
def test_three_local_gateways_merge_to_the_single_process_sweep(tmp_path, request):
    """pytest-xdist over three gateways (--tx 3*popen, as over three machines with ssh=...):
    the merged report equals one gelucheck sweep of the same range (three tasks)."""
    span = "0x3ffff000:0x41000010"  # crosses two task boundaries: three items
    out = tmp_path / "merged.json"
    done = _exhaustive_items(request, "sweep_impls:rounded_once", span, "--dist", "load",
                             "--tx", "3*popen", "--gelucheck-sweep-json", str(out))
    assert done.returncode == 0, done.stdout[-3000:]
    assert "3 passed" in done.stdout
    from gelucheck.report import jsonio

    (merged,) = jsonio.read(out)
    (direct,) = runner.sweep([{"kind": "user", "impl": "sweep_impls:rounded_once",
                               "function": "gelu", "framework": "numpy", "device": "cpu"}],
                             "gelu", runner.parse_range(span), workers=1, progress=False)
    assert merged.figures == direct.figures and merged.histogram == direct.histogram


@pytest.mark.parametrize("start", [0x3F800000, 0xC0A00000 - 0x8000, 0x00000000, 0x7F000000])
def test_bit_space_scoring_equals_measuring_every_input(start):
    """With several implementations the comparison starts in bit space (scoring.Rounded); it
    must give what measuring every input in float64 gives (scoring.dense_figures), for outputs that
    are correctly rounded, off by an ulp, NaN, of the other zero's sign, or wholly wrong."""
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = reference.values("gelu", x, monotone=True)
    regions = chunk.region_slices(x)
    rounded = v.astype(np.float32)
    rng = np.random.default_rng(start)
    few = rounded.copy()
    at = rng.choice(len(x), 40, replace=False)
    few[at[:20]] = np.nextafter(few[at[:20]], np.float32(np.inf))
    few[at[20:25]] = np.nan
    few[at[25:30]] = -few[at[25:30]]
    many = np.where(rng.random(len(x)) < 0.3, np.float32(0), rounded)  # dense fallback
    # wrong in the first outputs alone, which decide the path before the whole block is
    # rounded (dense there, few over the block), or wrong only after them (many)
    first = rounded.copy()
    first[:scoring.SAMPLE // 4] = 0
    after = np.where(np.arange(len(x)) >= scoring.SAMPLE, np.float32(0), rounded)
    # in either order: the rounded results are scored only once an output needs them
    for order in ((rounded, few, many, first, after), (first, after, many, few, rounded)):
        shared = scoring.Rounded(v, unit, int(bits[0]), regions)
        for y in order:
            _assert_bit_space_scores_as_dense(shared, y, v, unit, bits, regions)


def _assert_bit_space_scores_as_dense(shared, y, v, unit, bits, regions):
    fast = plain(shared.score(y))
    slow = plain(scoring.dense_figures(y, v, unit, int(bits[0]), regions))
    assert fast["sum_ulp"] == pytest.approx(slow["sum_ulp"], rel=1e-12)
    for name in slow["regions"]:
        assert fast["regions"][name]["sum_ulp"] == pytest.approx(
            slow["regions"][name]["sum_ulp"], rel=1e-12)
        fast["regions"][name]["sum_ulp"] = slow["regions"][name]["sum_ulp"]
    fast["sum_ulp"] = slow["sum_ulp"]
    a, b = fast.pop("max_abs"), slow.pop("max_abs")  # NaN for a NaN output, in both
    assert a == b or (np.isnan(a) and np.isnan(b))
    assert fast == slow


def test_profile_prints_where_the_time_went(capsys):
    assert main(["sweep", "--backend", "scipy:x*erf", "--backend", "scipy:x*ndtr",
                 "--function", "gelu", "--range", "0x3f800000:0x3f820000", "--workers", "1",
                 "--no-progress", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "reference" in out and "(once for all 2)" in out
    assert "scipy:x*erf: implementation" in out and "scipy:x*ndtr: implementation" in out
    assert "x the implementations' own time" in out
    # the parts and what none of them covers add up to the total, the tasks' whole time
    import re

    figures = lambda pattern: [float(f) for f in re.findall(pattern, out)]
    parts = (figures(r"reference (\d+\.\d+)") + figures(r"implementation (\d+\.\d+)")
             + figures(r"comparison (\d+\.\d+)") + figures(r"input guard (\d+\.\d+)"))
    (other,), (total,) = figures(r"other \(merging blocks, bookkeeping\) (-?\d+\.\d+)"), \
        figures(r"total (\d+\.\d+)")
    assert other >= 0 and sum(parts) + other == pytest.approx(total, abs=0.0004)
    # one task, run here: the engine's cost is what the run took beyond the task
    assert re.search(r"engine: 1 tasks in this process, 1 worker\(s\): \d+\.\d{3} s per task",
                     out)


def test_the_compile_time_is_shown_apart_and_kept_in_the_json(tmp_path, capsys, sweep_path):
    """The compiled loops' compile (or cache load) happens before the sweep and is printed
    apart from the per-2^24 figures; without numba there is nothing to show."""
    path = tmp_path / "s.json"
    assert main(["sweep", "--backend", "scipy:x*ndtr", "--function", "gelu", "--range",
                 "0x3f800000:0x3f810000", "--workers", "1", "--no-progress", "--profile",
                 "--json", str(path)]) == 0
    out = capsys.readouterr().out
    compiled = sweep_path == "compiled"
    assert ("the compiled loops ready in" in out) == compiled
    (result,) = json.loads(path.read_text())["results"]
    assert ("compile_s" in result) == compiled
    assert not compiled or 0 < result["compile_s"] < 120
    assert result["engine"]["name"] == "here" and result["engine"]["tasks"] == 1
    assert result["engine"]["overhead_s"] >= 0
    from gelucheck.results import SweepResult

    assert SweepResult.from_json(result).engine == result["engine"]


# Blocks wholly in the far left (x <= -20; the tanh form's from -12) or in the right part
# (x > 9; φ's from 20): just past -20 and 20, and the largest binade.
EXACT_PART_BLOCKS = {"far": 0xC1A00000 + 0x40000, "right": 0x41A00000 + 0x40000,
                     "huge": 0x7F000000}
# Blocks near zero, where the results and errors follow Taylor's first term: x near 2^-40,
# x from -2^-40 (GELU's exact value lies below the power of two x/2 there: half the unit),
# x near -2^-100 and 2^-120 (float64 loses GELU's x² term against x/2), and the last binade
# below 2^-26 (the reference is float64 SciPy there), from its power of two on both sides
TINY_BLOCKS = {"tiny": 0x2B810000, "tiny-power": 0xAB800000, "tiny-deep": 0x8D030000,
               "tiny-deepest": 0x04000000, "tiny-top": 0x327E0000, "tiny-top-power": 0xB2000000,
               "tiny-top-positive-power": 0x32000000}


def _known_tiny_edge(function):
    from gelucheck.functions import get_function

    return int(np.float32(reference.spec(get_function(function)).known_tiny).view(np.uint32))


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("where", sorted(EXACT_PART_BLOCKS))
def test_the_exact_part_is_the_reference_rounded(function, where):
    """known_part stands in for the reference where its results are a signed zero,
    1 or x: those must be the reference's float64 values rounded, signs of zero included -
    and the float64 values lie off them on the exact value's side (ONE_DOWN's comment): the
    next float64 beyond 1 or x, TAIL_FLOOR beyond 0 (the side by mpmath)."""
    from gelucheck.functions import get_function

    start = EXACT_PART_BLOCKS[where]
    x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    known = known_part(function, x)
    v, _, _ = reference.values(function, x, monotone=True)
    assert known is not None and known.offset == known.slope == 0
    results = known.expected(x)
    assert np.array_equal(results.view(np.uint32), v.astype(np.float32).view(np.uint32))
    r = results.astype(np.float64)
    # the exact value's side of the results at the block's ends (the top binade's as
    # 20.25's: the same saturated side, where mpmath's erfc would take minutes)
    probe = x if where != "huge" else np.arange(EXACT_PART_BLOCKS["right"], EXACT_PART_BLOCKS[
        "right"] + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    f, expected = get_function(function), known.expected(probe)
    with mpmath.workdps(400):  # Φ(20.25) = 1 - 1e-91, the tanh form 1 - 1e-271 there
        sides = {int(mpmath.sign(f.mp(mpmath.mpf(float(probe[i]))) - float(expected[i])))
                 for i in (0, len(x) - 1)}
    (side,) = sides
    assert side != 0
    beyond = np.where(r == 0, fastref.TAIL_FLOOR, np.abs(np.nextafter(r, side * np.inf) - r))
    assert np.array_equal(v, r + side * beyond)


def _mp_errors(function, x, y):
    """|y - f(x)| in float32 ulps of the exact value, from mpmath alone."""
    return np.array([float(e) for e in _mp_exact_errors(function, x, y)])


def _mp_exact_errors(function, x, y, digits=60):
    """_mp_errors as mpmath numbers of ``digits`` digits: 1 - 2^-140 is not 1."""
    from gelucheck.functions import get_function

    f = get_function(function)
    out = []
    with mpmath.workdps(digits):
        for xi, yi in zip(x.tolist(), y.tolist()):
            exact = f.mp(mpmath.mpf(xi))
            e = max(int(mpmath.floor(mpmath.log(abs(exact), 2))), -126)
            out.append(abs(mpmath.mpf(yi) - exact) / mpmath.ldexp(1, e - 23))
    return out


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("where", sorted(TINY_BLOCKS) + ["below-edge", "below-edge-power"])
def test_tiny_closed_form_is_mpmath_s(function, where):
    """Near zero the expected results are the correctly rounded ones and the closed-form
    figures - sum, largest error and where, largest absolute error - are mpmath's, on a run
    of 512 inputs from the block's start (a binade's first float for "power"); "below-edge":
    the last 512 floats below the function's KNOWN_TINY, "-power" the first of that binade,
    negative."""
    edge = _known_tiny_edge(function)
    start = {**TINY_BLOCKS, "below-edge": edge - 512,
             "below-edge-power": (edge - 0x800000) | 0x80000000}[where]
    bits = np.arange(start, start + 512, dtype=np.uint32)
    x = bits.view(np.float32)
    known = known_part(function, x)
    assert known is not None
    for i in (0, 1, 255, 511):
        assert known.expected(x).view(np.uint32)[i] == correctly_rounded(
            function, float(x[i]), FLOAT32).bits
    errors = _mp_errors(function, x, known.expected(x))
    (name, _), = chunk.region_slices(x)
    got = plain(scoring.known_figures(known, x, int(bits[0]), name))
    assert got["not_correctly_rounded"] == 0 and errors.max() < 0.5
    assert got["histogram"][0] == got["n"] == got["n_finite"] == 512
    assert got["sum_ulp"] == pytest.approx(errors.sum(), rel=1e-9)
    assert got["max_ulp"] == pytest.approx(errors.max(), rel=1e-9)
    if function != "phi_grad":  # φ's error is constant to 2^-36 ulp there: its first input
        assert got["worst_bits"] == bits[int(np.argmax(errors))]
    assert got["regions"][name]["sum_ulp"] == got["sum_ulp"]
    with mpmath.workdps(40):  # the exact value reported at the worst input is mpmath's
        worst = float(FLOAT32.from_bits(got["worst_bits"]))
        assert got["exact"] == pytest.approx(
            float(fastref.get_function(function).mp(mpmath.mpf(worst))), rel=2.0**-50)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_no_known_part_where_the_reference_is_computed(function):
    edge = edges.far_left(fastref.get_function(function))  # the block ends just past it
    start = int(np.float32(edge).view(np.uint32)) - chunk.BLOCK // 2
    x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    assert known_part(function, x) is None
    edge = _known_tiny_edge(function)
    for start in (0x3F800000,  # x near 1: computed everywhere
                  edge - 8, edge, edge | 0x80000000,  # across and past KNOWN_TINY
                  0x2B800000 - 8,  # across a binade near zero
                  0x00000000, 0x01000000 - 8):  # subnormals and the lowest binades
        x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
        assert known_part(function, x) is None, hex(start)


class _Returns:
    """An implementation that returns what it is given, computed once (for evaluate_block)."""

    def __init__(self, function, y):
        from gelucheck.functions import get_function

        self.id, self.function, self.y = "test:returns", get_function(function), y

    def __call__(self, x, intact=None):
        assert intact is None or intact(x)
        return self.y.copy()


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("where", sorted(EXACT_PART_BLOCKS) + sorted(TINY_BLOCKS))
@pytest.mark.parametrize("outputs", ["rounded", "one-off", "nan"])
def test_a_block_scored_without_the_reference_equals_one_measured(function, where, outputs,
                                                                  monkeypatch):
    """An implementation returning the correctly rounded results is scored in closed form
    without any float64 pass; whether or not the shortcut is taken, the block's figures are
    those of measuring every input (scoring.dense_figures) - exactly where the errors are
    zero, to the float64 reference's accuracy (2^-16 ulp an input) near zero."""
    calls = []
    values = reference.values
    monkeypatch.setattr(reference, "values", lambda *a, **k: calls.append(1) or
                        values(*a, **k))
    start = {**EXACT_PART_BLOCKS, **TINY_BLOCKS}[where]
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = values(function, x, monotone=True)
    y = v.astype(np.float32)
    if outputs == "one-off":
        y[123] = np.nextafter(y[123], np.float32(np.inf))
    elif outputs == "nan":
        y[7] = np.nan
    block = chunk.evaluate_block([_Returns(function, y)], fastref.get_function(function),
                                  start, start + chunk.BLOCK)
    (got,) = plain(block)["implementations"].values()
    want = plain(scoring.dense_figures(y, v, unit, int(bits[0]), chunk.region_slices(x)))
    for k in ("computed", "exact"):
        got.pop(k, None)
    assert len(calls) == (0 if outputs == "rounded" else 1)
    if outputs == "rounded":  # the closed form against float64's (beside 1, x or 0 where
        # those are the results: 2^-29 ulp from them, 2^-51 from 0)
        (region,) = got["regions"]
        for closed, measured in ((got, want), (got["regions"][region], want["regions"][region])):
            for figures in (closed, measured):  # float64's errors are flat at 2^-29 below
                for k in ("worst_bits", "max_abs_bits", "max_abs"):  # 2^-53: not where
                    figures.pop(k, None)
            assert closed.pop("max_ulp") == pytest.approx(measured.pop("max_ulp"), abs=2.0**-16)
            assert closed.pop("sum_ulp") == pytest.approx(measured.pop("sum_ulp"),
                                                          abs=len(x) * 2.0**-16)
    else:
        a, b = got.pop("max_abs"), want.pop("max_abs")
        assert a == b or (np.isnan(a) and np.isnan(b))
    assert got == want


@pytest.mark.parametrize("function", FUNCTIONS)
def test_arb_and_mpmath_resolve_the_close_calls_alike(function, monkeypatch):
    """The inputs whose float64 value is too close to call go to Arb where python-flint is
    installed, else to mpmath: both give the same float32, float64 and side, on every such
    input of four blocks (4 to 20 a function, by the NumPy reference's wider bound)."""
    from gelucheck.functions import get_function

    monkeypatch.setattr(loops, "kernels", lambda: None)
    f = get_function(function)
    close = []
    for start in (0x3F900000, 0xBF900000, 0xC0900000, 0xBF400000):
        x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
        x64 = np.sort(x.astype(np.float64))
        v, unit = np.empty_like(x64), np.empty_like(x64)
        close += x64[fastref.fill(f, x64, v, unit)].tolist()
    assert len(close) >= 3
    for xi in close:
        mp = correctly_rounded(f, xi, FLOAT32)
        bits, bits64, side = proofs.arbref.rounded(f, xi, FLOAT32)
        assert (bits, bits64) == (mp.bits, mp.float64_bits), xi
        assert np.sign(side) == np.copysign(1.0, mp.residual), xi


def test_the_reference_without_arb_is_the_same(monkeypatch):
    """Without python-flint the close calls go to mpmath: the reference is bit for bit the same
    (the NumPy reference, whose wider bound leaves close calls in one block)."""
    monkeypatch.setattr(loops, "kernels", lambda: None)
    x = np.arange(0xC0900000, 0xC0900000 + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    with_arb = reference.values("gelu", x, monotone=True)
    monkeypatch.setattr(proofs, "arb_installed", lambda: False)
    without = reference.values("gelu", x, monotone=True)
    assert with_arb[2] == without[2] > 0
    for a, b in zip(with_arb[:2], without[:2]):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))


def test_outputs_seen_before_in_a_block_are_scored_once(monkeypatch):
    """Two implementations returning the same floats (an alias) get the figures of the first,
    without a second comparison; each equals its outputs measured alone."""
    counted = []
    score = scoring.Rounded.score
    monkeypatch.setattr(scoring.Rounded, "score",
                        lambda self, y: counted.append(1) or score(self, y))
    start = 0xBF900000
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = reference.values("gelu", x, monotone=True)
    y = v.astype(np.float32)
    y[::50] = np.nextafter(y[::50], np.float32(np.inf))
    other = y.copy()
    other[77] = np.nextafter(other[77], np.float32(-np.inf))
    impls = [_Returns("gelu", y), _Returns("gelu", y.copy()), _Returns("gelu", other)]
    for i, impl in enumerate(impls):
        impl.id = f"test:{i}"
    block = chunk.evaluate_block(impls, fastref.get_function("gelu"), start, start + chunk.BLOCK)
    assert len(counted) == 2
    for impl, outputs in zip(impls, (y, y, other)):
        got = plain(block.implementations[f"{impl.id}/gelu"])
        want = plain(scoring.dense_figures(outputs, v, unit, int(bits[0]),
                                           chunk.region_slices(x)))
        for k in ("computed", "exact"):
            got.pop(k, None)
        for a, b in [(got, want)] + [(got["regions"][r], want["regions"][r])
                                     for r in want["regions"]]:
            assert a.pop("sum_ulp") == pytest.approx(b.pop("sum_ulp"), rel=1e-12)
        assert got == want


def _spans(blocks: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """block_plan' blocks, each run of closed-form spans cut into its spans."""
    return [(a, min(a + chunk.KNOWN_SPAN, b)) for first, b, _ in blocks
            for a in range(first, b, chunk.KNOWN_SPAN)]


def _assert_same_figures(whole, parts) -> None:
    """Two merged statistics of the same inputs are the same but for their timings, and
    their sums of errors to float64's rounding (a run's closed form sums at once what spans
    sum in parts)."""
    whole, parts = plain(whole), plain(parts)  # (without their timings)
    for key, want in parts["implementations"].items():
        got = whole["implementations"].get(key, {})
        for a, b in [(got, want)] + [(got.get("regions", {}).get(r, {}), r_want)
                                     for r, r_want in want.get("regions", {}).items()]:
            if "sum_ulp" in b:
                assert a.pop("sum_ulp") == pytest.approx(b.pop("sum_ulp"), rel=1e-12)
    assert whole == parts


def test_a_known_span_scores_as_its_blocks_do():
    """evaluate() takes a span known in closed form as one; the figures are those of its
    blocks of BLOCK merged (SciPy's x*ndtr, near 2^-40 and in the far left)."""
    from gelucheck.functions import get_function

    impls, f = find("scipy:x*ndtr", "gelu"), get_function("gelu")
    for start in (0x2B800000, 0xC1B00000):
        _assert_same_figures(chunk.evaluate(impls, f, start, start + chunk.KNOWN_SPAN),
                             merge_all([chunk.evaluate_block(impls, f, a, a + chunk.BLOCK)
                                        for a in range(start, start + chunk.KNOWN_SPAN,
                                                       chunk.BLOCK)]))
    with pytest.raises(ValueError, match="at most"):
        chunk.evaluate_block(impls, f, 0, chunk.KNOWN_SPAN + 1)


@pytest.mark.parametrize("names", [["rounded_gelu"], ["off_gelu"], ["returns_its_input"],
                                   ["rounded_gelu", "in_place_gelu"],
                                   ["in_place_gelu", "off_gelu", "returns_its_input"]])
@pytest.mark.parametrize("edge, known_first", [(0x33000000, True), (0xC1A00000, False)])
def test_a_task_scores_as_its_blocks_do_with_inputs_of_their_own(names, edge, known_first,
                                                                 sweep_path):
    """evaluate() keeps one input array per task, and the test that a block's last
    implementation left it intact rewrites it as the next block's inputs: the figures are
    those of each block given inputs of its own - for outputs scored in closed form, outputs
    that need the reference after the rewrite (one ulp off), outputs in the inputs' own
    memory, and an implementation that writes to its inputs, last or first. Two closed-form
    spans, then blocks of the middle (below |x| = 2^-25), or the other way round (the far
    left, x <= -20: the next block longer than the array holds)."""
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    impls, f = [load_user(f"sweep_impls:{name}", "gelu") for name in names], get_function("gelu")
    if known_first:
        start, stop = edge - 2 * chunk.KNOWN_SPAN, edge + 2 * chunk.COMPILED_BLOCK
    else:
        start, stop = edge - 2 * chunk.COMPILED_BLOCK, edge + 2 * chunk.KNOWN_SPAN
    blocks = chunk.block_plan(f, start, stop)
    run = blocks[0] if known_first else blocks[-1]  # the two spans: one run
    assert run[1] - run[0] == 2 * chunk.KNOWN_SPAN and run[2] and len(blocks) > 2
    whole = chunk.evaluate(impls, f, start, stop)
    _assert_same_figures(whole, merge_all([chunk.evaluate_block(impls, f, a, b)
                                           for a, b in _spans(blocks)]))
    if "in_place_gelu" in names:
        assert "modified its input in place" in whole.implementations[
            "user:sweep_impls:in_place_gelu/gelu"].error


@pytest.mark.parametrize("function", ["gelu", "phi", "gelu_grad"])
@pytest.mark.parametrize("start, spans", [(0x2B800000, 4),  # |x| in [2^-40, 2^-39): tiny
                                          (0xAB800000, 4),  # its negative side
                                          (0x2B812345, 3),  # a range's start, not a span's
                                          (0xC1C00000, 3),  # x = -24..: the far left
                                          (0x41C00000, 3)])  # x = 24..: the saturated right
def test_a_run_of_known_spans_scores_as_its_spans_do(function, start, spans):
    """Consecutive spans known in closed form go as one run (block_plan), each implementation
    called span by span and its figures computed once: they are those of each span evaluated
    alone and merged - the sums to float64's rounding of a longer sum - with the outputs at
    the worst input too. Correctly rounded outputs (SciPy's, rounded once), so every span
    matches the closed form."""
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    impls = [load_user(f"sweep_impls:rounded_{function}", function)]
    f, stop = get_function(function), start + spans * chunk.KNOWN_SPAN
    assert chunk.block_plan(f, start, stop) == [(start, stop, True)]
    _assert_same_figures(chunk.evaluate(impls, f, start, stop),
                         merge_all([chunk.evaluate_block(impls, f, a, b)
                                    for a, b in _spans([(start, stop, True)])]))


@pytest.mark.parametrize("names", [["planted_tiny"], ["rounded_gelu", "planted_tiny"],
                                   ["planted_tiny", "rounded_gelu"], ["raises_at_planted_tiny"],
                                   ["rounded_gelu", "raises_at_planted_tiny", "rounded_gelu_tanh"],
                                   ["returns_its_input", "planted_tiny"],
                                   ["planted_tiny", "returns_its_input"]])
def test_a_run_stops_where_outputs_leave_the_closed_form(names, monkeypatch):
    """A run of closed-form spans stops at the first span where an implementation's outputs
    are not the closed form's results (one ulp off at one input; x itself, not x/2) or where
    it raises: the spans before it are scored as a run, that span and the rest span by span -
    the figures those of each span alone, the error recorded. Each implementation is called
    once a span: the calls the run made on its last span are used, not made again - but for
    the one that raised, and for all of them where an output is the inputs' own memory."""
    import sweep_impls
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    calls = []
    monkeypatch.setattr(sweep_impls, "CALLS", calls)
    impls = [load_user(f"sweep_impls:{name}", "gelu") for name in names]
    f, start = get_function("gelu"), 0x2B800000
    stop = start + 4 * chunk.KNOWN_SPAN
    assert start < sweep_impls.PLANTED_TINY < stop - chunk.KNOWN_SPAN
    whole = chunk.evaluate(impls, f, start, stop)
    counted = calls[:]
    _assert_same_figures(whole, merge_all([chunk.evaluate_block(impls, f, a, b)
                                           for a, b in _spans([(start, stop, True)])]))
    planted = next(k for k in whole.implementations if "planted_tiny" in k)
    if "raises" in planted:
        assert "planted" in whole.implementations[planted].error
    else:
        assert whole.implementations[planted].whole.worst_bits == sweep_impls.PLANTED_TINY
    hit = sweep_impls.PLANTED_TINY - (sweep_impls.PLANTED_TINY - start) % chunk.KNOWN_SPAN
    again = [hit] if "raises" in planted else []
    if names == ["planted_tiny", "returns_its_input"]:  # x itself stops the run at once
        again = [start]
    assert sorted(counted) == sorted([a for a, _ in _spans([(start, stop, True)])] + again)


@pytest.mark.parametrize("side_known", [False, True])
def test_uncertain_is_its_definition_at_every_edge(side_known):
    """fastref._uncertain tests its ranges by one comparison modulo their width; on encodings
    at and beside every edge of the ranges (both signs, random exponents) it flags exactly
    what the two-sided definition does: the 29 bits below float32's last place within SLACK
    of a midpoint or of a float32 (0, or all ones just below the next), or (unless the side
    is known) a fraction within SLACK of a power of two."""
    slack, width, mask = fastref.SLACK, fastref.DROPPED, fastref.FRACTION_MASK
    half, full = 1 << (width - 1), 1 << width
    rng = np.random.default_rng(7)
    offsets = [0, slack - 1, slack, slack + 1, mask - slack - 2, mask - slack - 1, mask - slack,
               mask]
    for high in rng.integers(0, 1 << (52 - width), 40).tolist():
        for low in (half - slack - 1, half - slack, half - slack + 1, half, half + slack - 1,
                    half + slack, half + slack + 1, 0, slack, slack + 1, full - slack - 1,
                    full - slack, full - 1, half // 2):
            offsets.append((high << width) | low)
    exponents = rng.integers(897, 2046, 300).astype(np.int64) << 52  # normal float32 range
    bits = (exponents[:, None] | np.array(offsets, dtype=np.int64)[None, :]).reshape(-1)
    bits = np.concatenate([bits, bits | np.int64(-(2**63))])
    v = bits.view(np.float64)
    dropped, fraction = bits & ((1 << width) - 1), bits & mask
    want = ((dropped >= half - slack) & (dropped <= half + slack)) | (dropped <= slack) | (
        dropped >= full - slack)
    if not side_known:
        want |= (fraction <= slack) | (fraction >= mask - slack)
    got = fastref._uncertain(v, side_known)
    assert np.array_equal(got, want)
    assert 0 < want.sum() < len(want)


def test_a_sweep_of_an_unknown_implementation_is_refused_before_the_loops_load(monkeypatch):
    """The implementations are resolved first: a name that is not there is refused, naming
    the valid ones, before the compiled loops load (or compile, the first time)."""
    from gelucheck.errors import UsageError

    loaded = []
    monkeypatch.setattr(runner, "warm", lambda *a: loaded.append(1))
    with pytest.raises(UsageError, match="numpy offers"):
        runner.sweep([{"kind": "builtin", "impl": "numpy:nothing", "function": "gelu"}],
                     "gelu", (0x3F800000, 0x3F810000), progress=False)
    assert not loaded


@pytest.mark.slow
def test_workers_started_with_the_sweep_stop_when_it_is_refused_or_done():
    """The workers start with the tasks, forked from a server that imports torch while this
    process resolves the implementations: a refused sweep starts none, a finished one stops
    them - no worker is left behind either way."""
    import multiprocessing

    from gelucheck.errors import UsageError

    before = set(multiprocessing.active_children())
    two_tasks = (0x3F000000, 0x3F000000 + 2 * runner.TASK)  # one task would spawn no worker
    with pytest.raises(UsageError, match="numpy offers"):
        runner.sweep([{"kind": "builtin", "impl": "numpy:nothing", "function": "gelu"}],
                     "gelu", two_tasks, workers=2, progress=False)
    assert set(multiprocessing.active_children()) <= before
    spec = [{"kind": "builtin", "impl": "scipy:ndtr", "function": "phi"}]
    out = runner.sweep(spec, "phi", two_tasks, workers=2, progress=False)
    alone = runner.sweep(spec, "phi", two_tasks, workers=1, progress=False)
    assert set(multiprocessing.active_children()) <= before
    assert out[0].figures.max_ulp == alone[0].figures.max_ulp
    assert out[0].figures.n_inputs == alone[0].figures.n_inputs == 2 * runner.TASK


@pytest.mark.parametrize("through", ["environment", "working directory"])
def test_workers_take_their_sweeps_environment_and_directory(through, monkeypatch, request,
                                                             tmp_path):
    """Workers forked from the fork server, which a first sweep started with its own
    environment and working directory: a later sweep's workers see that sweep's (an
    implementation plants its error only where $GELUCHECK_TEST_PLANT is set, or where the
    working directory holds PLANT), as spawned ones would."""
    monkeypatch.setattr(runner, "TASK", 1 << 14)  # two tasks: two workers
    monkeypatch.syspath_prepend(str(request.config.rootpath / "tests"))
    from sweep_impls import PLANTED
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    monkeypatch.chdir(tmp_path)
    impl = "maybe_planted" if through == "environment" else "planted_here"
    span = (0x3F810000, 0x3F818000)  # holds sweep_impls.PLANTED, 0x3f812345
    spec = [{"kind": "user", "impl": f"sweep_impls:{impl}", "function": "gelu",
             "framework": "numpy", "device": "cpu"}]
    clean = runner.sweep(spec, "gelu", span, workers=2, progress=False)
    if through == "environment":
        monkeypatch.setenv("GELUCHECK_TEST_PLANT", "1")
    else:
        (tmp_path / "marked").mkdir()
        (tmp_path / "marked" / "PLANT").touch()
        monkeypatch.chdir(tmp_path / "marked")
    planted = runner.sweep(spec, "gelu", span, workers=2, progress=False)
    assert clean[0].figures.not_correctly_rounded == 0
    assert planted[0].figures.not_correctly_rounded == 1
    assert planted[0].figures.worst_input_hex == f"0x{PLANTED:08x}"


def test_a_sweep_run_in_this_process_leaves_torchs_threads_as_they_were():
    """Tasks run here (one worker) take torch to one thread, as in a worker; a library's
    caller - the pytest plugin, a user's test - gets its thread count back afterwards."""
    torch = pytest.importorskip("torch", reason="torch not installed: no threads to keep")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runner.sweep([{"kind": "builtin", "impl": "scipy:ndtr", "function": "phi"}], "phi",
                     (0x3F800000, 0x3F810000), workers=1, progress=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_outputs_are_aliases_only_when_equal_throughout():
    """The alias test decides on a prefix only when that differs: outputs equal for the first
    thousand and different at the last are not aliases; ±0 are alike, NaN never."""
    a = np.linspace(-3, 3, 5000, dtype=np.float32)
    b = a.copy()
    assert chunk._same(a, b)
    b[-1] = np.nextafter(b[-1], np.float32(0))
    assert not chunk._same(a, b)
    c, d = np.zeros(300, np.float32), -np.zeros(300, np.float32)
    assert chunk._same(c, d)
    c[299] = d[299] = np.nan
    assert not chunk._same(c, d)


Q = 2.0**-149  # float32's quantum
# (function, first input's encoding, outputs, what lies there): outputs one float32 step
# from a correctly rounded result that is a float32 the exact value approaches from one
# side - 1 (Φ from below, GELU′ from above), x (GELU and its tanh form, from below), 1/2
# (Φ and GELU′ near 0, on x's side), 0 (the tails, with the function's sign) - so that each
# error is a whole or half number of ulps and a little more or, as here, a little less:
# every output errs by more than 1/2 ulp (not correctly rounded) and less than 1.
ONE_STEP_TOWARDS = [
    ("gelu_grad", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "flat right: 1/2+"),
    ("gelu_grad", 0x41200000, lambda x: np.full_like(x, 1 + 2.0**-23), "flat right: 1-"),
    ("gelu_grad", 0x41080000, lambda x: np.full_like(x, 1 - 2.0**-24), "middle, 8.5: 1/2+"),
    ("gelu_grad", 0x21800000, lambda x: np.full_like(x, 0.5 - 2.0**-25), "x = 2^-60: 1/2+"),
    ("phi", 0x21800000, lambda x: np.full_like(x, 0.5 - 2.0**-25), "x = 2^-60: 1/2+"),
    ("phi", 0x21800000, lambda x: np.full_like(x, 0.5 + 2.0**-24), "x = 2^-60: 1-"),
    ("phi", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "right: 1-"),
    ("phi", 0x41080000, lambda x: np.full_like(x, 1 - 2.0**-24), "middle, 8.5: 1-"),
    ("gelu", 0x41200000, lambda x: np.nextafter(x, np.float32(0)), "right: 1-"),
    ("gelu", 0x41080000, lambda x: np.nextafter(x, np.float32(0)), "middle, 8.5: 1-"),
    ("gelu_tanh", 0x41200000, lambda x: np.nextafter(x, np.float32(0)), "right: 1-"),
    ("gelu_tanh", 0xC1500000, lambda x: np.full_like(x, -Q), "far left, -13: 1-"),
    ("gelu_tanh", 0xC1300000, lambda x: np.full_like(x, -Q), "middle, -11: 1-"),
    ("gelu_tanh_grad", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "flat right: 1/2+"),
    ("gelu_tanh_grad", 0x41080000, lambda x: np.full_like(x, 1 + 2.0**-23), "middle, 8.5: 1-"),
    ("phi", 0xC1A80000, lambda x: np.full_like(x, Q), "far left, -21: 1-"),
    ("gelu", 0xC1A80000, lambda x: np.full_like(x, -Q), "far left, -21: 1-"),
    ("gelu", 0xC1980000, lambda x: np.full_like(x, -Q), "middle, -19: 1-"),
    ("gelu_grad", 0xC1980000, lambda x: np.full_like(x, -Q), "middle, -19: 1-"),
    ("phi_grad", 0x41A80000, lambda x: np.full_like(x, Q), "right, 21: 1-"),
]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("function, start, outputs, where", ONE_STEP_TOWARDS,
                         ids=[f"{c[0]}-{c[3]}" for c in ONE_STEP_TOWARDS])
def test_an_error_of_a_whole_or_half_ulp_and_a_little_is_binned_by_its_little(
        function, start, outputs, where, compiled, monkeypatch):
    """Where the reference's float64 value is, or rounds to, the float32 the exact value
    approaches, an output one step from it errs by 1/2 or 1 ulp in float64 - but by a little
    more or less in fact, and that decides whether it is correctly rounded (1/2) and its bin
    (1): all are outputs not correctly rounded in the bin (1/2, 1), as mpmath says of the
    first, middle and last."""
    if not compiled:
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed: no compiled loops")
    n = 2000
    bits = np.arange(start, start + n, dtype=np.uint32)
    x = bits.view(np.float32)
    y = outputs(x).astype(np.float32)
    errors = _mp_exact_errors(function, x[[0, n // 2, n - 1]], y[[0, n // 2, n - 1]], 120)
    assert all(0.5 < e < 1 for e in errors), errors  # what the figures must say
    block = chunk.evaluate_block([_Returns(function, y)], fastref.get_function(function),
                                  start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["not_correctly_rounded"] == n
    assert got["histogram"][1] == n, got["histogram"][:4]
    assert 0.5 < got["max_ulp"] <= 1


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_an_error_a_billionth_below_one_ulp_is_binned_below_one(compiled, monkeypatch):
    """Found by the compiled GELU′: torch's GELU′ at x = 0.43656546 (0x3edf8582) is
    0.8271204233169556, 1 - 1.3e-9 ulp from the exact value (mpmath) - the float64 reference
    lies within its bound of a float32 there, and said 1 ulp."""
    if not compiled:
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed: no compiled loops")
    import sweep_impls

    start, n, at = 0x3EDF8582 - 1000, 2000, 1000
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    y = sweep_impls.rounded_gelu_grad(x)
    y[at] = np.float32(0.8271204233169556)
    error = _mp_errors("gelu_grad", x[[at]], y[[at]])[0]
    assert 1 - 2e-9 < error < 1  # what the figures must say
    block = chunk.evaluate_block([_Returns("gelu_grad", y)], fastref.get_function("gelu_grad"),
                                  start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["histogram"][2:] == [0] * (len(got["histogram"]) - 2)
    assert got["max_ulp"] < 1 and got["worst_bits"] == start + at


@pytest.mark.parametrize("start", [0x41100001, 0x41080000, 0x40E00000], ids=["9+", "8.5", "7"])
def test_a_drift_variants_histogram_is_mpmaths_output_for_output(start):
    """quick_gelu, x·σ(1.702x), returns x less a few ulps where GELU has all but saturated:
    errors of k ulps less a little, for k = 1, 2, 4 ... - a bin lower than k. Over 1000
    inputs from just past 9 (the closed form's part), 8.5 (the compiled middle, kept below
    x) and 7, the block's histogram and counts are those of mpmath's errors, binned one by
    one."""
    from gelucheck.sweep.stats import BINS

    (impl,) = find("variants:quick_gelu", "gelu")
    n = 1000
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    y = impl(x)
    exact = _mp_exact_errors("gelu", x, y, 80)
    want = [0] * BINS
    for e in exact:
        k = 0 if e <= 0.5 else 1 if e < 1 else 2 + int(mpmath.floor(mpmath.log(e, 2)))
        want[min(k, BINS - 2)] += 1
    assert sum(want[2:]) > n // 10  # errors of 1 ulp and more, near whole numbers
    block = chunk.evaluate_block([impl], fastref.get_function("gelu"), start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["histogram"] == want
    assert got["not_correctly_rounded"] == n - want[0]
