"""`gelucheck search` end to end: planted bands of wrong encodings found, a correctly rounded
function with no false alarm, every reported figure settled by mpmath, the same result on any
number of workers, and bad input refused before any work."""
import json

import numpy as np
import pytest

import built_results
from gelucheck.cli import main
from gelucheck.formats import FLOAT64
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.ulp import Exact, ulp_error


def _search(tmp_path, impl, *argv, name="out.json"):
    out = tmp_path / name
    status = main(["search", "--impl", f"search_impls:{impl}", "--function", "erf",
                   "--no-progress", "--json", str(out), *argv])
    assert status == 0
    (result,) = json.loads(out.read_text())["results"]
    return result


def _mp_ulps(x, y):
    """The error of y at x by the reference of record: mpmath's correctly rounded value and
    residual (Ziv's loop), measured by ulp.py - not the search's fast reference."""
    rounded = correctly_rounded("erf", x, FLOAT64)
    exact = Exact(np.array([float(FLOAT64.from_bits(rounded.bits))]),
                  np.array([rounded.residual]))
    return float(ulp_error(np.array([y]), exact, FLOAT64)[0])


@pytest.mark.slow
@pytest.mark.parametrize(("impl", "first"), [("erf_wrong_below_one", 0x3FF0000000000000 - 300),
                                             ("erf_wrong_at_seam", 0x3FEB000000000000)])
def test_a_planted_band_of_a_few_hundred_encodings_is_found(tmp_path, impl, first):
    """At a binade's edge and at glibc's seam 0.84375: where implementations change."""
    r = _search(tmp_path, impl, "--evaluations", "1", "--workers", "1")
    x = float.fromhex(r["worst_input_hex"])
    assert first <= int(np.array([abs(x)]).view(np.uint64)[0]) < first + 300
    assert r["max_ulp"] > 1000
    assert r["max_ulp"] == pytest.approx(_mp_ulps(x, r["computed"]), rel=1e-9)
    assert isinstance(r["diagnosis"], list)  # looked for around it


@pytest.mark.slow
def test_a_correctly_rounded_erf_reports_at_most_half_an_ulp(tmp_path):
    r = _search(tmp_path, "erf_correctly_rounded", "--evaluations", "1", "--workers", "1")
    assert r["max_ulp"] <= 0.5
    assert r["diagnosis"] == []  # no signature around the worst input either
    assert r["evaluations"] > 100_000
    x = float.fromhex(r["worst_input_hex"])
    assert r["max_ulp"] == pytest.approx(_mp_ulps(x, r["computed"]), abs=1e-12)


@pytest.mark.slow
def test_the_same_seed_and_budget_give_the_same_result_on_any_number_of_workers(tmp_path):
    argv = ["--backend", "scipy:special.erf", "--evaluations", "400000", "--seed", "7"]
    runs = []
    for workers, engine in (("1", "local"), ("2", "local"), ("2", "dask")):
        if engine == "dask":
            pytest.importorskip("distributed", reason="--engine dask needs gelucheck[cluster]")
        out = tmp_path / f"{workers}-{engine}.json"
        assert main(["search", "--function", "erf", "--no-progress", "--json", str(out),
                     "--workers", workers, "--engine", engine, *argv]) == 0
        (r,) = json.loads(out.read_text())["results"]
        runs.append((r["evaluations"], r["candidates"], r["max_ulp"]))
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.slow
def test_what_is_reported_is_settled_by_mpmath(tmp_path):
    r = _search(tmp_path, "erf_wrong_below_one", "--evaluations", "1", "--workers", "1",
                "--seed", "3")
    assert r["settled"] >= 8
    for c in r["candidates"][:4]:
        x, y = float.fromhex(c["x"]), float.fromhex(c["computed"])
        assert c["ulp"] == pytest.approx(_mp_ulps(x, y), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("argv", "message"), [
    (["--function", "erf", "--dtype", "float32", "--backend", "libm"], "for float64"),
    (["--function", "erf"], "name what to search"),
    (["--function", "erf", "--backend", "nosuch"], "nosuch"),
])
def test_bad_input_is_refused_before_any_work(argv, message, capsys):
    assert main(["search", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_a_recorded_search_gates_the_same_search_and_says_another_is_not_comparable(
        tmp_path, capsys):
    from importlib import resources

    import tomlkit

    budgets = tmp_path / "budgets.toml"
    budgets.write_text((resources.files("gelucheck") / "data" / "budgets.toml").read_text())
    argv = ["search", "--backend", "scipy:special.erf", "--function", "erf", "--no-progress",
            "--evaluations", "1", "--workers", "1"]
    assert main([*argv, "--write-budgets", str(budgets)]) == 0
    capsys.readouterr()
    assert main([*argv, "--budgets", str(budgets)]) == 0
    assert "BUDGET" not in capsys.readouterr().out
    document = tomlkit.parse(budgets.read_text())
    table = next(t for t in _tables(document) if "search" in t)
    table["search"]["max_ulp"] = 0.25
    budgets.write_text(tomlkit.dumps(document))
    assert main([*argv, "--budgets", str(budgets)]) == 1
    assert "max ulp found" in capsys.readouterr().out
    assert main([*argv, "--seed", "9", "--budgets", str(budgets)]) == 0
    assert "no search budget for seed 9" in capsys.readouterr().out


def _tables(node):
    """Every table of a TOML document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _tables(value)


def test_a_search_is_shown_as_a_lower_bound_beside_the_documented_figure():
    from gelucheck import published
    from gelucheck.report import jsonio, tables

    r = built_results.search(1.375)
    _, rows = tables.search_rows([r])
    assert rows[0][2] == "1.375" and rows[0][3] == r.figures.worst_input_hex
    assert "1 (1.375 from exact, search)" in tables.documented_rows([r])[1][0]
    # glibc's list counts from the correctly rounded result: 1.375 is 1 there, its figure
    assert published.verdict(published.bound_for(r), r) == "none above in the search"
    above = built_results.search(1.6)  # 2 from the correctly rounded result
    assert published.verdict(published.bound_for(above), above).startswith("ABOVE")
    assert jsonio.loads(jsonio.dumps([r])) == [r]
    assert rows[0][-1] == "not measured"  # no signatures were looked for


def test_the_signatures_around_a_searchs_worst_input_are_shown_and_read_back():
    from dataclasses import replace

    from gelucheck.report import jsonio, tables
    from gelucheck.results import Signature

    sig = Signature("tail-cancellation", 2049, -8.6, -8.6, "x<-5", "use erfc")
    r = replace(built_results.search(3.0), diagnosis=[sig])
    assert tables.search_rows([r])[1][0][-1] == "tail-cancellation"
    assert tables.signature_rows([r])[1][0][2] == "float64 (search)"
    assert jsonio.loads(jsonio.dumps([r])) == [r]
    none = replace(r, diagnosis=[])
    assert tables.search_rows([none])[1][0][-1] == "none"
    assert jsonio.loads(jsonio.dumps([none]))[0].diagnosis == []


@pytest.mark.slow
@pytest.mark.parametrize("function", ["erf", "erfc"])
def test_the_shipped_search_budgets_of_the_c_library_hold(function, capsys):
    """glibc's double erf and erfc as recorded (seed 0, 1,000,000 evaluations asked): the same
    search finds the same, on the release it was recorded with. The rounds, and so the
    evaluations, are the seed's and the code's alone: a search that finds no budget to
    compare with has changed its rounds without the budgets being recorded again."""
    from importlib import resources

    shipped = resources.files("gelucheck") / "data" / "budgets.toml"
    status = main(["search", "--backend", f"libm:{function}", "--function", function,
                   "--evaluations", "1000000", "--no-progress", "--workers", "1",
                   "--budgets", str(shipped)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "no search budget" not in out and "BUDGET" not in out, out


@pytest.mark.slow
def test_an_implementation_returning_inf_is_infinitely_wrong_and_no_gap_is_made_up(tmp_path):
    r = _search(tmp_path, "erf_infinite", "--evaluations", "1", "--workers", "1")
    assert r["max_ulp"] in (float("inf"), "inf")
    assert r["reference_gap"] is None  # not measured, never NaN or 0


def test_without_arb_the_search_is_refused_naming_the_extra(monkeypatch, capsys):
    from gelucheck.reference import arbref

    monkeypatch.setattr(arbref, "available", lambda: False)
    assert main(["search", "--backend", "scipy", "--function", "erf"]) == 2
    assert "pip install 'gelucheck[search]'" in capsys.readouterr().err


@pytest.mark.slow
def test_a_search_gate_holds_an_implementation_with_no_budget_to_the_default(tmp_path, capsys):
    """Not passed unjudged: an erf that returns +inf everywhere, with no budget at all, fails
    the gate against the stated default; a correctly rounded one passes it."""
    empty = tmp_path / "b.toml"
    empty.write_text("")
    argv = ["search", "--function", "erf", "--no-progress", "--evaluations", "1",
            "--workers", "1", "--budgets", str(empty)]
    assert main([*argv, "--impl", "search_impls:erf_infinite"]) == 1
    out = capsys.readouterr().out
    assert ("BUDGET search user:search_impls:erf_infinite erf float64: no budget recorded, so "
            "held to the default max ulp 0.5: at least inf") in out
    assert main([*argv, "--impl", "search_impls:erf_correctly_rounded"]) == 0
    assert "within it" in capsys.readouterr().out


@pytest.mark.parametrize(("extra", "started"), [
    (["--workers", "2"], [["torch"]]),
    (["--workers", "1"], []),
    (["--workers", "2", "--engine", "dask"], []),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], []),  # refused before it is asked
], ids=["two-workers", "one-worker", "dask", "scheduler"])
def test_the_search_starts_its_fork_server_before_it_resolves_the_implementations(
        extra, started, monkeypatch):
    """The fork server imports what the workers will need (torch here) while the command
    resolves the implementations itself - where workers will be forked from it."""
    from gelucheck.sweep import worker
    from sweep_support import fork_server_then

    pytest.importorskip("flint", reason="python-flint is not installed: no search")
    calls = fork_server_then(monkeypatch, worker, "resolve")
    assert main(["search", "--backend", "torch:F.gelu", "--function", "gelu",
                 "--no-progress", *extra]) == 2
    assert calls == [*started, "resolve"]
