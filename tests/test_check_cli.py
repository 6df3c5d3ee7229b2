"""gelucheck list / check / report / compare from the command line, and a user's own code."""
import json
import math
import sys
from pathlib import Path

import pytest

from gelucheck.backends import ImplementationError, find, load_user
from gelucheck.checks import accuracy
from gelucheck.cli import main
from gelucheck.errors import UsageError
from gelucheck.formats import FORMATS
from gelucheck.report import compare, jsonio
from gelucheck.results import AccuracyResult, ErrorFigures, Identity


def test_list_names_every_backend_and_why_unavailable(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("numpy", "scipy", "torch", "torch-cuda", "torch-compile", "jax", "variants"):
        assert f"\n{name}: " in "\n" + out
    assert "NumPy has no erf" in out


def test_user_implementation_round_trip(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    argv = ["check", "--impl", "user_impls:gelu_float64_then_round", "--function", "gelu",
            "--dtype", "float16", "--dtype", "float32", "--json", str(out_json), "--no-progress"]
    assert main(argv) == 0
    document = json.loads(out_json.read_text())
    assert document["schema_version"] == jsonio.SCHEMA_VERSION
    results = document["results"]
    by_dtype = {r["dtype"]: r for r in results}
    # float64 then one correct rounding: correctly rounded on every float16 input
    assert float(by_dtype["float16"]["max_ulp"]) <= 0.5
    assert float(by_dtype["float32"]["max_ulp"]) < 8
    for field in ("backend", "implementation", "function", "dtype", "device", "n_inputs",
                  "max_ulp", "mean_ulp", "worst_input", "worst_input_hex", "computed", "exact",
                  "max_abs_error", "regions", "minimum"):
        assert field in by_dtype["float16"], field
    for field in ("name", "lo", "hi", "n", "max_ulp", "worst_input"):
        assert field in by_dtype["float16"]["regions"][0]
    for field in ("plateau_lo", "plateau_hi", "value", "true_argmin_on_plateau",
                  "value_ulp_error"):
        assert field in by_dtype["float16"]["minimum"]
    assert by_dtype["float16"]["minimum"]["true_argmin_on_plateau"] is True


@pytest.mark.parametrize("spec, words", [
    ("user_impls:raises", "raised RuntimeError: kernel exploded"),
    ("user_impls:wrong_dtype", "returned float64 for float16 input"),
    ("user_impls:wrong_shape", "returned shape (1,)"),
])
def test_broken_implementations_are_reported_and_the_run_goes_on(spec, words, capsys):
    """Each dtype is tried and reported; the exit status (2) says something failed."""
    assert main(["check", "--impl", spec, "--function", "gelu", "--dtype", "float16",
                 "--dtype", "float32", "--no-progress"]) == 2
    out = capsys.readouterr().out
    assert out.count(f"ERROR user:{spec}") == 2 and words in out


def test_all_nan_is_reported(capsys):
    impl = load_user("user_impls:all_nan", "gelu")
    result = accuracy.measure(impl, FORMATS["bfloat16"])
    assert result.all_nan and math.isinf(result.figures.max_ulp)


@pytest.mark.parametrize("argv, words", [
    (["no_such_module:f"], "cannot import 'no_such_module'"),
    (["user_impls:missing"], "no callable 'missing'"),
    (["user_impls:not_callable"], "no callable 'not_callable'"),
    (["user_impls"], "expected the form package.module:callable"),
])
def test_bad_impl_specs(argv, words, capsys):
    assert main(["check", "--impl", *argv, "--function", "gelu"]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("argv, valid", [
    (["check", "--backend", "caffe"], "numpy, scipy, torch, torch-cuda"),
    (["check", "--backend", "numpy", "--function", "relu"], "phi, gelu, gelu_tanh"),
    (["report", "--dtype", "float8"], "float16, bfloat16, float32, float64"),
    (["check", "--impl", "a:b", "--framework", "tf"], "numpy, torch"),
])
def test_bad_names_list_the_valid_ones(argv, valid, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert valid in capsys.readouterr().err


def test_unknown_implementation_lists_what_the_backend_offers():
    with pytest.raises(UsageError, match="x\\*ndtr"):
        find("scipy:ndtri")


def test_torch_user_implementation():
    pytest.importorskip("torch", reason="torch is not installed")
    impl = load_user("user_impls:torch_gelu", "gelu", framework="torch")
    reference = find("torch:F.gelu", "gelu")[0]
    for dtype in (FORMATS["bfloat16"], FORMATS["float32"]):
        assert accuracy.measure(impl, dtype).figures.max_ulp == \
            accuracy.measure(reference, dtype).figures.max_ulp


def test_cuda_user_implementation_without_cuda_says_why():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.cuda.is_available():
        pytest.skip("CUDA is present: the error path cannot be shown")
    with pytest.raises(UsageError, match="CUDA is not available"):
        load_user("user_impls:torch_gelu", "gelu", framework="torch", device="cuda")


def test_wrong_dtype_raises_implementation_error():
    impl = load_user("user_impls:wrong_dtype", "gelu")
    import numpy as np

    with pytest.raises(ImplementationError, match="returned float64"):
        impl(np.zeros(3, np.float32))


@pytest.mark.slow  # a report of two backends rendered with a plot per result: seconds
def test_report_writes_json_markdown_and_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib (the plots extra) is not installed")
    argv = ["report", "--backend", "scipy", "--backend", "numpy", "--dtype", "bfloat16",
            "--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md"),
            "--plots", str(tmp_path / "plots"), "--no-progress", "--details"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Max / mean ulp error, all inputs (the mean of the finite errors)" in out
    assert "Drift of the tanh form" in out
    text = (tmp_path / "r.json").read_text()
    json.loads(text, parse_constant=_no_constant)  # strict JSON: no NaN, Infinity
    results = json.loads(text)["results"]
    assert {r["kind"] for r in results} == {"accuracy", "drift"}
    markdown = (tmp_path / "r.md").read_text()
    assert "| implementation | function | bfloat16 |" in markdown
    assert markdown.index("<b>Summary: ") < markdown.index("<b>Max / mean ulp error")  # whole
    pngs = list((tmp_path / "plots").glob("*.png"))
    accuracy = [r for r in results if r["kind"] == "accuracy"]  # one plot each
    assert len(accuracy) >= 8 and len(pngs) == len(accuracy)
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)


def _acc(max_ulp, dtype="float32", mean_ulp=0.0):
    figures = ErrorFigures(n_inputs=1, max_ulp=max_ulp, mean_ulp=mean_ulp, n_infinite=0,
                           not_correctly_rounded=0, worst_input=1.0,
                           worst_input_hex="0x3f800000", computed=1.0, exact=1.0,
                           max_abs_error=0.0, max_abs_at=1.0, regions=[])
    return AccuracyResult(Identity("b", "i", "gelu", dtype), "gelu", "native", "",
                          figures=figures)


def test_infinite_errors_are_strings_in_json(tmp_path):
    jsonio.write([_acc(math.inf, mean_ulp=math.nan)], tmp_path / "x.json")
    raw = json.loads((tmp_path / "x.json").read_text())["results"]
    assert raw[0]["max_ulp"] == "inf" and raw[0]["mean_ulp"] == "nan"
    back = jsonio.read(tmp_path / "x.json")[0]
    assert math.isinf(back.figures.max_ulp) and math.isnan(back.figures.mean_ulp)


def test_a_report_of_schema_1_is_still_read(tmp_path):
    """Reports written before schema_version existed were a bare list of results."""
    old = json.loads(jsonio.report_text([_acc(2.0)]))["results"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert jsonio.read(tmp_path / "old.json")[0].figures.max_ulp == 2.0


@pytest.mark.parametrize("content, words", [
    ('{"schema_version": 99, "results": []}', "newer than this gelucheck"),
    ('[{"kind": "banana"}]', "known kinds: accuracy, drift, sweep"),
    ('[{"kind": "accuracy"}]', "lacks or mangles a field"),
])
def test_compare_refuses_reports_it_cannot_read(tmp_path, capsys, content, words):
    (tmp_path / "r.json").write_text(content)
    assert main(["compare", str(tmp_path / "r.json"), str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "r.json" in err and words in err


@pytest.mark.parametrize("field, value, words", [
    ("max_ulp", "abc", "figures.max_ulp is 'abc', not float"),
    ("max_ulp", None, "figures.max_ulp is None, not float"),
    ("max_ulp", -3.0, "figures.max_ulp is -3.0: a count, an error or a time is never below 0"),
    ("n_inputs", -1, "figures.n_inputs is -1"),
    ("n_inputs", 1.5, "figures.n_inputs is 1.5, not int"),
    ("worst_input_hex", 7, "figures.worst_input_hex is 7, not str"),
])
def test_a_report_with_a_damaged_figure_is_refused_by_name(tmp_path, capsys, field, value,
                                                           words):
    """A figure of the wrong type, or a count or error below 0, is refused with the file and
    the field named - never compared, judged or drawn (it raised a traceback, or a
    negative max ulp compared as "better")."""
    report = json.loads(jsonio.report_text([_acc(2.0)]))
    report["results"][0][field] = value
    (tmp_path / "r.json").write_text(json.dumps(report))
    for argv in (["compare", "r.json", "r.json"], ["html", "r.json", "--out", "r.html"]):
        assert main([a if not a.startswith("r.") else str(tmp_path / a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert "r.json: an accuracy result's " + words in err
    assert not (tmp_path / "r.html").exists()


def test_a_figure_where_an_input_lies_may_be_negative(tmp_path):
    """Only counts, errors and times are held to 0 and above: the worst input, where the
    largest error lies, may be any float."""
    report = json.loads(jsonio.report_text([_acc(2.0)]))
    report["results"][0]["worst_input"] = -5
    (tmp_path / "r.json").write_text(json.dumps(report))
    assert jsonio.read(tmp_path / "r.json")[0].figures.worst_input == -5


def test_compare_finds_worse_and_better(tmp_path, capsys):
    old = [_acc(1.0), _acc(100.0, "float16"), _acc(3.0, "float64")]
    new = [_acc(1.5), _acc(2.0, "float16"), _acc(3.0, "float64")]
    diff = compare.compare(old, new)
    assert len(diff["worse"]) == 1 and "float32" in diff["worse"][0]
    assert len(diff["better"]) == 1 and "float16" in diff["better"][0]
    jsonio.write(old, tmp_path / "old.json")
    jsonio.write(new, tmp_path / "new.json")
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                 "--fail-on-regression"]) == 1
    assert "Worse (1)" in capsys.readouterr().out


def test_compare_reads_consistency_reports(tmp_path, capsys):
    """`gelucheck consistency --json` reports compare too: a path whose outputs differ from
    the bulk result in more places, or that no longer runs, is worse."""
    from gelucheck.results import ConsistencyResult, Identity, PathFigures

    def result(differ, error=None):
        return ConsistencyResult(Identity("b", "i", "gelu", "float32"), bulk_max_ulp=1.0,
                                 paths=[PathFigures("strided", 100, differ, 1.0, 1.5),
                                        PathFigures("0-d", 1, 0, error=error)])

    diff = compare.compare([result(3)], [result(5, error="raised")])
    assert diff["worse"] == ["consistency b:i gelu float32: 0-d outputs differing 0 -> inf",
                             "consistency b:i gelu float32: strided outputs differing 3 -> 5"]
    jsonio.write([result(3)], tmp_path / "old.json")
    jsonio.write([result(2)], tmp_path / "new.json")
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    assert "strided outputs differing 3 -> 2" in capsys.readouterr().out


def test_compare_rejects_a_file_that_is_not_a_report(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{}")
    assert main(["compare", str(tmp_path / "bad.json"), str(tmp_path / "bad.json")]) == 2
    assert "not a gelucheck JSON report" in capsys.readouterr().err


@pytest.mark.slow
def test_console_script_entry_point():
    import subprocess

    exe = Path(sys.executable).with_name("gelucheck")
    if not exe.exists():
        pytest.skip("the gelucheck console script is not installed next to this Python")
    out = subprocess.run([str(exe), "list"], capture_output=True, text=True, check=True).stdout
    assert "scipy: available" in out


def test_compare_ignores_noise_and_shows_the_digits_that_differ():
    old = [_acc(0.5), _acc(2.0, "float16")]
    new = [_acc(0.5 + 1e-9), _acc(2.00001, "float16")]
    diff = compare.compare(old, new)
    assert diff["worse"] == ["b:i gelu float16: max ulp 2 -> 2.00001"]


def test_a_report_explains_itself_and_ends_with_its_verdict(capsys, tmp_path):
    """A legend of its symbols first; last, how many results are within their budgets -
    counted here against gelucheck's own (scipy's three float16 GELUs have entries)."""
    assert main(["check", "--backend", "scipy", "--function", "gelu", "--dtype", "float16",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.index("Legend: ") < out.index("Summary: ")
    assert '"0.5+"' in out and "not measured" in out
    assert "Max / mean ulp error" not in out and "--details" in out  # one screen
    summary = out[out.index("Summary: "):]
    assert "scipy:x*ndtr" in summary and "within" in summary
    verdict = " ".join(out.rstrip().split("verdict: ")[-1].split())  # wrapped at 120 columns
    assert verdict.startswith("3 within budget, 0 worse than budget, 0 without a budget, "
                              "0 could not be measured")
    assert out.rstrip().endswith("--budgets FILE gates)")  # the verdict closes the report
    (tmp_path / "mine.py").write_text("import numpy as np\n\ndef g(x):\n    return x * 0\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        assert main(["check", "--impl", "mine:g", "--function", "gelu", "--dtype", "float16",
                     "--no-progress"]) == 0
    finally:
        sys.path.remove(str(tmp_path))
    out = capsys.readouterr().out
    assert "verdict: 0 within budget, 0 worse than budget, 1 without a budget" in out
    row = next(line for line in out.splitlines() if line.startswith("user:mine:g"))
    assert "no budget" in row and "(100%)" not in row  # x·0: right only where GELU rounds to 0


def test_details_show_every_table_after_the_summary(capsys):
    assert main(["check", "--backend", "scipy:x*ndtr", "--dtype", "float16", "--details",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.index("Summary: ") < out.index("Max / mean ulp error") < out.index("Worst inputs")


def test_the_summary_says_worse_and_names_the_defects_that_apply(capsys, tmp_path):
    from gelucheck import budgets

    own = budgets.load()
    worse = tmp_path / "worse.toml"
    text = budgets.DEFAULT_PATH.read_text()
    key = '["scipy:x*ndtr".gelu.float32]'
    start = text.index(key)
    line = next(i for i in range(start, len(text)) if text.startswith("max_ulp = ", i))
    end = text.index("\n", line)
    worse.write_text(text[:line] + "max_ulp = 1.0" + text[end:])
    assert main(["check", "--backend", "scipy:x*ndtr", "--dtype", "float32", "--budgets",
                 str(worse), "--no-progress"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("scipy:x*ndtr"))
    assert "WORSE" in row
    recorded = own.entries[("scipy:x*ndtr", "gelu", "float32")].get("defects", [])
    assert recorded and all(d in out for d in recorded)


@pytest.mark.slow  # three backends' whole report, twice: seconds
def test_no_line_of_a_report_is_wider_than_120_columns(capsys):
    assert main(["report", "--backend", "numpy", "--backend", "scipy", "--backend", "variants",
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert len(lines) > 10 and max(len(line) for line in lines) <= 120
    assert main(["report", "--backend", "numpy", "--backend", "scipy", "--backend", "variants",
                 "--details", "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert len(lines) > 100 and max(len(line) for line in lines) <= 120


def test_a_wide_table_is_stacked_in_blocks_that_keep_each_rows_name():
    from gelucheck.report.tables import plain

    header = ["implementation", "function"] + [f"column {i}" for i in range(12)]
    body = [["torch:F.gelu", "gelu"] + [f"1{i:02d}.{'9' * 8}" for i in range(12)],
            ["scipy:x*ndtr", "gelu"] + [f"-2{i:02d}e+300" for i in range(12)]]
    text = plain(header, body, width=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    for row in body:  # every figure is there whole, each once, beside its row's name
        for cell in row[2:]:
            (line,) = [line for line in lines if f" {cell}" in line]
            assert line.startswith(row[0])
    assert text.count("implementation") == len(text.split("\n\n")) > 1


def test_a_column_of_words_too_wide_for_the_line_wraps_at_its_spaces():
    """The summary's recorded defects of ONNX Runtime's FastGelu had made a 155-column line in
    `gelucheck report`: the words go on lines of their own under the column, none cut."""
    from gelucheck.report.tables import plain

    defects = ", ".join(f"defect-number-{i}" for i in range(12))
    body = [["onnxruntime:ms.FastGelu", "gelu_tanh", defects], ["numpy:tanh", "gelu_tanh", "-"]]
    lines = plain(["implementation", "function", "recorded defects"], body, width=60).splitlines()
    assert max(len(line) for line in lines) <= 60 and len(lines) > 4
    column = lines[0].index("recorded defects")
    assert lines[2].startswith("onnxruntime:ms.FastGelu") and lines[-1].startswith("numpy:tanh")
    wrapped = [line[column:] for line in lines[2:-1]]
    assert all(not line[:column].strip() for line in lines[3:-1])  # continuation lines
    assert " ".join(wrapped) == defects  # every word, in order, none cut


@pytest.mark.slow  # every installed backend, torch.compile's compiles included
def test_check_of_a_function_alone_measures_every_installed_backend(tmp_path, capsys):
    """`check --function erf --function erfc` measures every available backend that computes
    them; a backend that is not installed is a note, not an error, since none was named."""
    from gelucheck.backends.registry import backend_names, get_backend

    out_json = tmp_path / "erf.json"
    assert main(["check", "--function", "erf", "--function", "erfc", "--dtype", "float16",
                 "--no-progress", "--json", str(out_json)]) == 0
    measured = {r["backend"] for r in json.loads(out_json.read_text())["results"]
                if r["kind"] == "accuracy"}
    backends = [get_backend(name) for name in backend_names()]
    expected = {b.name for b in backends if b.available
                and any(i.function.name in ("erf", "erfc") and "float16" in
                        [d.name for d in i.dtypes] for i in b.implementations)}
    assert expected <= measured and {"scipy", "libm"} <= measured
    capsys.readouterr()
    assert main(["check", "--dtype", "float16"]) == 2  # nothing named at all: refused
    assert "name what to measure" in capsys.readouterr().err


def _no_constant(name):
    raise AssertionError(f"not strict JSON: {name}")


def test_compare_says_in_one_line_when_a_backend_ran_on_another_kernel_tier(tmp_path, capsys):
    """The tier travels in the JSON; two reports of different tiers are compared as they
    are, and said to be of different tiers first."""
    from dataclasses import replace

    def tiered(result, tier):
        return replace(result, identity=replace(result.identity, kernel_tier=tier))

    old = [tiered(_acc(2.7), "avx512_bf16"), _acc(1.0, "float16")]
    new = [tiered(_acc(7.3), "avx2"), _acc(1.0, "float16")]
    jsonio.write(old, tmp_path / "old.json")
    jsonio.write(new, tmp_path / "new.json")
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Measured on other kernel tiers (1):\n  b: kernel tier avx512_bf16 -> "
                          "avx2 (compared as measured")
    assert "b:i gelu float32: max ulp 2.7 -> 7.3" in out
    assert jsonio.read(tmp_path / "new.json")[0].identity.kernel_tier == "avx2"
    assert compare.compare(old, old)["tiers"] == []


def test_the_report_leaves_out_what_compiles_and_says_how_to_bring_it_back(tmp_path, capsys):
    """A new user's first report is not kept waiting a minute by torch.compile: its
    implementations are listed as left out, with the options that measure them."""
    pytest.importorskip("torch", reason="torch is not installed")
    out = tmp_path / "r.json"
    assert main(["report", "--function", "erf", "--dtype", "float16", "--no-progress",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("left out: torch-compile (1 implementation compiles before being measured, "
            "seconds to minutes): add --all or --backend torch-compile") in printed
    backends = {r["backend"] for r in json.loads(out.read_text())["results"]}
    assert "torch-compile" not in backends and {"torch", "scipy"} <= backends


@pytest.mark.compiles
def test_report_all_measures_what_compiles_too(tmp_path, capsys):
    pytest.importorskip("torch", reason="torch is not installed")
    out = tmp_path / "r.json"
    assert main(["report", "--all", "--function", "erf", "--dtype", "float16",
                 "--no-progress", "--json", str(out)]) == 0
    assert "left out" not in capsys.readouterr().out
    assert "torch-compile" in {r["backend"] for r in json.loads(out.read_text())["results"]}
