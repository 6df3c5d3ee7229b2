"""The measuring scripts the README gives for the sweep's time run and print what they say,
on one task in 48 (each kind of block among them: runs of the closed forms near zero, far
left and right, the middle and the subnormals): they reach into the sweep's internals, which
change under them."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the scripts are run on torch's GELU")
pytest.importorskip("numba", reason="the scripts time the sweep's compiled loops")

SCRIPTS = Path(__file__).parents[1] / "scripts"


def _run(*argv: str, env: dict | None = None) -> str:
    done = subprocess.run([sys.executable, str(SCRIPTS / argv[0]), *argv[1:]], text=True,
                          capture_output=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_sweep_time_by_part_splits_the_time_and_times_torch_alone():
    """Every input of the tasks falls in a kind, the closed forms' runs among them, and the
    sweep takes longer than torch alone on them."""
    out = _run("sweep-time-by-part.py", "torch:F.gelu", "gelu", "48", "--tasks")
    shares = [float(s) for s in re.findall(r"^\w+ +([\d.]+)% of inputs", out, re.M)]
    assert sum(shares) == pytest.approx(100, abs=0.2)
    assert re.search(r"^known +[1-9]", out, re.M) and re.search(r"^compiled +[1-9]", out, re.M)
    ratio = re.search(r"^all: [\d.]+ per 2\^24, the implementation [\d.]+: ([\d.]+)x", out, re.M)
    alone = re.search(r"the sweep is ([\d.]+)x that \(([\d.]+)x\)", out)
    assert ratio and alone and float(ratio.group(1)) > 1 and float(alone.group(2)) > 1


@pytest.mark.slow
def test_sweep_ab_runs_each_setting_in_its_workers():
    """One line per setting, each with its three rounds, from two worker processes - a span
    above the default too, which reaches the task's input array (set in chunk alone, each
    span was called on a slice of itself; now refused by the array)."""
    out = _run("sweep-ab.py", "torch:F.gelu", "gelu", "48", "KNOWN_SPAN=2^18",
               "KNOWN_SPAN=2^20")
    lines = re.findall(r"^KNOWN_SPAN=2\^(\d+): ([\d.]+) s per 2\^24, .*\(rounds: (.*)\); "
                       r"wall [\d.]+ s, 2 processes$", out, re.M)
    assert [line[0] for line in lines] == ["18", "20"]
    for _, seconds, rounds in lines:
        assert float(seconds) > 0 and len(rounds.split(", ")) == 3


@pytest.mark.slow  # a process of its own
@pytest.mark.parametrize(("setting", "said"), [
    ("SPAN=2^19", "SPAN: not a setting of gelucheck.sweep.chunk"),
    ("replay.SPAN=1", "replay.SPAN: not a setting of gelucheck.sweep.replay"),
    ("nowhere.SPAN=1", "nowhere.SPAN: no module gelucheck.sweep.nowhere"),
])
def test_sweep_ab_refuses_an_unknown_setting(setting, said):
    done = subprocess.run([sys.executable, str(SCRIPTS / "sweep-ab.py"), "torch:F.gelu", "gelu",
                           "48", setting], text=True, capture_output=True, timeout=120)
    assert done.returncode != 0 and said in done.stderr


@pytest.mark.slow
def test_sweep_against_alone_times_both_over_every_input():
    """One round: torch alone over every finite input in two processes, then the sweep, and
    their ratio - above 1, as gelucheck's passes are added to torch's."""
    out = _run("sweep-against-alone.py", "torch:F.gelu", "gelu", "2", "1")
    found = re.search(r"alone \(blocks of 2\^\d+\): ([\d.]+) s per 2\^24, [\d.]+ s wall; the "
                      r"sweep: ([\d.]+) s per 2\^24, [\d.]+ s wall - ([\d.]+)x in CPU", out)
    assert found, out
    alone, swept, ratio = map(float, found.groups())
    assert swept > alone > 0 and ratio == pytest.approx(swept / alone, rel=0.05)


@pytest.mark.slow
def test_sweep_floor_times_the_passes_every_check_must_make():
    """Two implementations over a few spans of the saturated right: each output read, then
    each call's inputs too, then those rewritten as the next span's - each adds to the
    implementations' own time."""
    out = _run("sweep-floor.py", "torch:F.gelu", "2", "1", "4")
    found = re.findall(r"^round 1, (each output read.*): 2 x torch:F.gelu ([\d.]+) ns an input, "
                       r"the passes ([\d.]+) -> ([\d.]+)x$", out, re.M)
    assert [f[0] for f in found] == [
        "each output read", "each output read, each call's inputs read",
        "each output read, each call's inputs read and the next span's written"], out
    for _, calls, passes, ratio in found:
        assert float(calls) > 0 and float(passes) > 0
        assert float(ratio) == pytest.approx((float(calls) + float(passes)) / float(calls),
                                             abs=0.01)
    assert re.search(r"^median over 1: [\d.]+x each output read, [\d.]+x each output read, "
                     r"each call's inputs read, [\d.]+x .* next span's written$", out, re.M)


@pytest.mark.slow
def test_sweep_middle_floor_runs_a_task_three_ways():
    """A task of GELU's series through chunk.evaluate, then the passes with and without the
    proofs: three positive times and the two shares they imply."""
    out = _run("sweep-middle-floor.py", "torch:F.gelu", "gelu", "36", "--rounds=1")
    found = re.search(r"^task 0x36: evaluate ([\d.]+) ms \(([\d.]+) ns an input\), the passes "
                      r"and proofs ([\d.]+) ms .*, the passes alone ([\d.]+) ms .*; bookkeeping "
                      r"(-?\d+)% of the task, proofs (-?\d+)%$", out, re.M)
    assert found, out
    whole, per_input, proved, alone, bookkeeping, proofs = map(float, found.groups())
    assert min(whole, proved, alone) > 0
    assert per_input == pytest.approx(whole * 1e6 / (1 << 24), abs=0.01)
    assert bookkeeping == pytest.approx(100 * (whole - proved) / whole, abs=1)
    assert proofs == pytest.approx(100 * (proved - alone) / whole, abs=1)


@pytest.mark.parametrize("task, why", [("60", "is scored in closed form"),
                                       ("c1", "is no compiled run of gelu")])
def test_sweep_middle_floor_refuses_a_task_outside_the_compiled_middle(task, why):
    """A task of the saturated right (closed form), or one across two pieces of the loops
    (-8 to -32: phi_direct, then R's table), is no task of the compiled middle: said before
    anything is timed."""
    result = subprocess.run([sys.executable, str(SCRIPTS / "sweep-middle-floor.py"),
                             "torch:F.gelu", "gelu", task], capture_output=True, text=True)
    assert result.returncode != 0 and f"task 0x{task}: " in result.stderr, result.stderr
    assert why in result.stderr, result.stderr


@pytest.mark.slow
def test_search_band_samples_only_its_band_and_settles_the_worst_with_mpmath():
    """The worst input lies in the band, and its figure is mpmath's: recomputed here from the
    C library's output and mpmath at 200 bits."""
    import ctypes
    import ctypes.util

    import mpmath

    if not ctypes.util.find_library("m"):
        pytest.skip("no C math library to call")
    out = _run("search-band.py", "libm:erfc", "erfc", "1.2495", "10", "3", "--seed", "1")
    assert re.search(r"^band \[0x1\.3fc0000000000p\+0, 0x1\.3ffffffffffffp\+0\]: "
                     r"4,398,046,511,104 encodings, 1024 cells$", out, re.M), out
    found = re.search(r"^worst: ([\d.]+) ulp \(mpmath\) at x = \S+ \((\S+)\): returned (\S+),",
                      out, re.M)
    assert found, out
    figure, x, returned = float(found[1]), float.fromhex(found[2]), float.fromhex(found[3])
    assert 1.2490234375 <= x < 1.25
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.erfc.restype, libm.erfc.argtypes = ctypes.c_double, [ctypes.c_double]
    assert libm.erfc(x) == returned
    with mpmath.workprec(200):
        exact = mpmath.erfc(mpmath.mpf(x))
        unit = mpmath.ldexp(1, int(mpmath.floor(mpmath.log(abs(exact), 2))) - 52)
        assert figure == pytest.approx(float(abs(mpmath.mpf(returned) - exact) / unit),
                                       abs=5e-5)


@pytest.mark.slow
def test_band_tail_counts_a_band_whose_largest_error_is_mpmaths():
    """One block of 2^20 inputs in the band below 1.25: its largest error, recomputed here
    from the C library's output and mpmath at 200 bits, and the counts falling with the
    threshold."""
    import ctypes
    import ctypes.util

    import mpmath

    if not ctypes.util.find_library("m"):
        pytest.skip("no C math library to call")
    out = _run("band-tail.py", "libm:erfc", "erfc", "1.2495", "10", "--bands", "1",
               "--blocks", "1")
    row = re.search(r"^\[0x1\.3fc0000000000p\+0, 0x1\.3ffffffffffffp\+0\] +1,048,576 "
                    r"((?:\d+ +){7})([\d.]+) (\S+)$", out, re.M)
    assert row, out
    counts = [int(c) for c in row[1].split()]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    figure, x = float(row[2]), float.fromhex(row[3])
    assert 1.2490234375 <= x < 1.25
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.erfc.restype, libm.erfc.argtypes = ctypes.c_double, [ctypes.c_double]
    with mpmath.workprec(200):
        exact = mpmath.erfc(mpmath.mpf(x))
        unit = mpmath.ldexp(1, int(mpmath.floor(mpmath.log(abs(exact), 2))) - 52)
        assert float(abs(mpmath.mpf(libm.erfc(x)) - exact) / unit) == pytest.approx(
            figure, abs=1e-3)


@pytest.mark.slow
def test_search_reference_rate_prints_each_path_beside_arb():
    """One rate per path, each as a multiple of Arb's (the figure the issue asks for), the
    whole cell's fused scoring among them."""
    out = _run("search-reference-rate.py", "--function", "erfc", "--at", "1.2345")
    rows = re.findall(r"^  (.+?) +([\d.]+) M values/s +([\d.]+)x Arb$", out, re.M)
    assert [r[0] for r in rows] == [
        "Arb, 120 bits, point by point", "the search's Arb path (192 bits, double-double)",
        "expansions, 2^20 consecutive inputs", "expansions, inputs spread over 2^-6 of a binade",
        "a whole cell's value and error in one loop",
        "the same, each segment built first (cold)"]
    assert rows[0][2] == "1.0" and all(float(r[1]) > 0 for r in rows)


def _every_ratio(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / "sweep-every-ratio.py"), *argv],
                          text=True, capture_output=True, timeout=600)


@pytest.mark.slow
def test_sweep_every_ratio_lists_each_implementation_with_its_profile():
    """One row per implementation the registry offers of the function, highest ratio first,
    each ratio its total over the implementation's own time, marked where above the limit."""
    from gelucheck.backends.registry import select
    from gelucheck.functions import get_function

    offered = {f"{i.backend}:{i.name}" for i in select(["torch"], [get_function("erf")])
               .implementations}
    done = _every_ratio("--backend", "torch", "--function", "erf", "--range",
                        "0x3d000000:0x3d080000", "--limit", "1.0")
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^\| (\S+) erf \| ([\d.]+)x( \(above 1.0\))? \| ([\d.]+) \| ([\d.]+) \|$",
                      done.stdout, re.M)
    assert {r[0] for r in rows} == offered and len(rows) == len(offered)
    ratios = [float(r[1]) for r in rows]
    assert ratios == sorted(ratios, reverse=True)
    for _, ratio, mark, total, own in rows:
        assert float(ratio) == pytest.approx(float(total) / float(own), abs=0.02)
        assert bool(mark) == (float(ratio) > 1.0)
    assert f"{len(rows)} sweeps measured" in done.stdout


def _every_ratio_module():
    spec = importlib.util.spec_from_file_location("sweep_every_ratio",
                                                  SCRIPTS / "sweep-every-ratio.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweep_every_ratio_reads_a_refused_sweep_as_failed():
    """The sweep's own refusal (an implementation torch does not offer) is read as a
    failure with its reason, not as figures."""
    said = _every_ratio_module().profile("torch:nosuch", "erf", None)
    assert isinstance(said, str), said
    assert re.fullmatch(r"failed \(exit [1-9]\d*\): .*unknown implementation 'torch:nosuch'.*",
                        said), said


def test_sweep_every_ratio_shows_a_failed_sweep_as_not_measured(monkeypatch, capsys):
    """A sweep that failed is a row of its own, not measured, beside the measured ones, and
    the script exits 1."""
    module = _every_ratio_module()
    outcomes = {"torch:erf": "failed (exit 2): it broke", "torch:special.erf": (2.0, 1.0, 2.0)}
    monkeypatch.setattr(module, "profile", lambda spec, function, span: outcomes[spec])
    assert module.main(["--backend", "torch", "--function", "erf"]) == 1
    out = capsys.readouterr().out
    assert "| torch:erf erf | failed (exit 2): it broke | not measured | not measured |" in out
    assert "| torch:special.erf erf | 2.00x (above 1.5) | 2.0000 | 1.0000 |" in out
    assert "1 sweeps measured, 1 above 1.5x; CPU seconds per 2^24 inputs; 1 failed" in out


@pytest.mark.parametrize(("argv", "said"), [
    (["--function", "erf", "--function", "erf"], "--function 'erf' is given twice"),
    (["--backend", "torch", "--backend", "torch"], "--backend 'torch' is given twice"),
    (["--backend", "nosuch"], "unknown backend 'nosuch'; valid choices: numpy"),
    (["--range", "0x7fc00000:0x7fc00010"], "holds only inf and NaN encodings"),
    (["--range", "nohex"], "expected START:STOP as float32 bit patterns in hex"),
])
def test_sweep_every_ratio_refuses_bad_input_before_any_sweep(argv, said):
    done = _every_ratio(*argv)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "|" not in done.stdout
