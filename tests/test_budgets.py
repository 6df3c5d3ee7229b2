"""The budget judgement: worse fails, better is reported, better than a known defect fails."""
import math

import pytest

import built_results as built
from gelucheck import budgets, judge
from gelucheck.errors import UsageError
from gelucheck.results import (
    MinimumFinding,
    Region,
    SpecialOutcome,
)


def _budgets(**entry):
    b = budgets.Budgets(defects={"tail": {"reason": "r"}})
    base = {"max_ulp": 10.0, "regions": {"x<-5": 10.0}}
    base.update(entry)
    b.entries[("be:impl", "gelu", "float32")] = base
    return b


def _result(max_ulp=10.0, region=10.0, dtype="float32", **parts):
    figures = built.figures(
        max_ulp, [Region("x<-5", -math.inf, -5.0, 1, region, 1.0, -6.0, "0xc0c00000")],
        n_inputs=2, mean_ulp=1.0, not_correctly_rounded=1)
    return built.accuracy(figures, of=built.identity(dtype=dtype), **parts)


def _specials(**ok):
    return {k.replace("m", "-").replace("p", "+"): SpecialOutcome(0.0, 0.0, 0.0, v)
            for k, v in ok.items()}


def _minimum(value_ulp_error, on_plateau):
    return MinimumFinding(-0.75, -0.75, -0.75, -0.75, 1, True, 1, [-0.8, -0.7], -0.17, -0.17,
                          on_plateau, value_ulp_error)


def test_equal_passes():
    v = judge.judge(_result(), _budgets())
    assert not v.failed and not v.better


def test_worse_fails_overall_and_per_region():
    assert judge.judge(_result(max_ulp=10.5), _budgets()).failed
    v = judge.judge(_result(region=11.0), _budgets())
    assert v.failed and "x<-5" in v.message()


def test_better_is_reported_not_failed():
    v = judge.judge(_result(max_ulp=2.0, region=2.0), _budgets())
    assert not v.failed and v.better and "tightened" in v.message()


def test_better_than_a_known_defect_fails():
    v = judge.judge(_result(max_ulp=2.0, region=2.0), _budgets(defects=["tail"]))
    assert v.failed and "fixed?" in v.message()


def test_missing_budget_fails_with_the_command_to_write_it():
    v = judge.judge(_result(dtype="float16"), _budgets())
    assert v.failed and "gelucheck budgets --write" in v.message()


def test_infinite_budget_holds_an_infinite_error():
    assert not judge.judge(_result(max_ulp=math.inf), _budgets(max_ulp=math.inf)).failed


def test_specials_and_minimum():
    b = _budgets(specials_failing=["-inf"], minimum_value_ulp=0.5, true_argmin_on_plateau=True)
    ok = _specials(minf=False, pinf=True)
    assert list(ok) == ["-inf", "+inf"]
    assert not judge.judge(_result(specials=ok), b).failed
    worse = _specials(minf=False, pinf=False)
    assert judge.judge(_result(specials=worse), b).failed
    assert not judge.judge(_result(minimum=_minimum(0.4, True)), b).failed
    assert judge.judge(_result(minimum=_minimum(0.4, False)), b).failed


def test_round_up_never_below():
    for v in (0.123456, 16777216.0, 2.0436, 0.5, 1e-7):
        assert budgets.round_up(v) >= v
    assert budgets.round_up(2.0436) == 2.05


def test_write_and_read_back(tmp_path):
    b = _budgets(defects=["tail"], specials_failing=["+inf"])
    b.entries[("x:y", "phi", "float16")] = {"max_ulp": math.inf, "regions": {}}
    path = tmp_path / "b.toml"
    budgets.write(path, b)
    again = budgets.load(path)
    assert again.entries == b.entries and again.defects == b.defects


def test_rewriting_keeps_comments_and_writes_valid_toml_for_any_reason(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('# my note on the file\n[defects.tail]\nreason = "r"\n\n'
                    '["be:impl".gelu.float32]  # measured on my laptop\nmax_ulp = 10.0\n'
                    'regions = { "x<-5" = 10.0 }\n')
    b = budgets.load(path)
    b.defects["odd"] = {"reason": 'two lines\nwith "quotes" and a \\ backslash'}
    b.entries[("be:impl", "gelu", "float32")]["max_ulp"] = 12.5
    b.entries[("be:other", "phi", "float16")] = {"max_ulp": math.inf, "regions": {}}
    budgets.write(path, b)
    text = path.read_text()
    assert "# my note on the file" in text and "# measured on my laptop" in text
    again = budgets.load(path)  # valid TOML, whatever the reason holds
    assert again.defects["odd"]["reason"] == b.defects["odd"]["reason"]
    assert again.entries == b.entries


def test_undefined_defect_is_an_error(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('["a:b".gelu.float32]\nmax_ulp = 1.0\ndefects = ["nope"]\n')
    with pytest.raises(UsageError, match="undefined defects"):
        budgets.load(path)


def test_the_project_budgets_file_loads_and_every_defect_has_a_reason():
    b = budgets.load()
    assert b.entries and all(d.get("reason") for d in b.defects.values())


def test_writing_one_backend_keeps_every_other_entry(tmp_path):
    """`gelucheck budgets --backend numpy` (how torch-cuda is recorded on a GPU machine):
    that backend's entries are measured and written, another backend's stay as they were."""
    from gelucheck.cli import main

    path = tmp_path / "b.toml"
    path.write_text('["elsewhere:gelu".gelu.float32]  # measured on another machine\n'
                    'max_ulp = 7.0\nregions = { "x<-5" = 7.0 }\n')
    assert main(["budgets", "--write", str(path), "--backend", "numpy"]) == 0
    written = budgets.load(path)
    assert written.entries[("elsewhere:gelu", "gelu", "float32")]["max_ulp"] == 7.0
    assert "# measured on another machine" in path.read_text()
    measured = {k for k in written.entries if k[0].startswith("numpy:")}
    assert measured and {k[0].split(":")[0] for k in written.entries} == {"numpy", "elsewhere"}


def test_writing_an_unavailable_backend_is_refused_before_any_work(tmp_path, capsys):
    from gelucheck.backends import get_backend
    from gelucheck.cli import main

    if get_backend("torch-cuda").available:
        pytest.skip("CUDA is present: torch-cuda is available")
    path = tmp_path / "b.toml"
    assert main(["budgets", "--write", str(path), "--backend", "torch-cuda"]) == 2
    assert "backend torch-cuda is unavailable" in capsys.readouterr().err
    assert not path.exists()


def test_budgets_from_a_saved_report_are_those_measured_directly(tmp_path):
    """A report measured elsewhere (a GPU machine) records the same budgets as measuring here."""
    from gelucheck.cli import main

    report = tmp_path / "numpy.json"
    assert main(["report", "--backend", "numpy", "--no-progress", "--json", str(report)]) == 0
    measured, read = tmp_path / "measured.toml", tmp_path / "read.toml"
    assert main(["budgets", "--write", str(measured), "--backend", "numpy"]) == 0
    assert main(["budgets", "--write", str(read), "--from-report", str(report)]) == 0
    assert budgets.load(read).entries == budgets.load(measured).entries


@pytest.mark.parametrize("argv, message", [
    (["--from-report", "{r}", "--backend", "numpy"], "give one"),
    (["--from-report", "{missing}"], "not a gelucheck JSON report"),
    (["--from-report", "{r}"], "no accuracy results to record"),
])
def test_budgets_from_report_refuses_what_it_cannot_record(tmp_path, capsys, argv, message):
    from gelucheck.cli import main

    report = tmp_path / "r.json"
    report.write_text('{"schema_version": 1, "results": []}')
    argv = [a.format(r=report, missing=tmp_path / "none.json") for a in argv]
    assert main(["budgets", "--write", str(tmp_path / "b.toml"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "b.toml").exists()
