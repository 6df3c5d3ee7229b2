"""Defect signatures: each found in a planted implementation of it, in float16, bfloat16 and
float32, and none in a correctly rounded one; the JSON carries them; the budgets' recorded
defects and the signatures found on this machine's backends agree."""
import json

import pytest

from gelucheck import budgets, measurement, signatures
from gelucheck.backends import UserOptions, implementations, load_user
from gelucheck.cli import main
from gelucheck.formats import FORMATS

# (planted implementation, the function it computes, the signature it must show)
PLANTED = [("flush_to_zero", "gelu", "flush-to-zero"), ("overflow", "gelu", "overflow"),
           ("nan_at_infinity", "gelu", "nan-at-infinity"), ("nan", "gelu", "nan"),
           ("tail_cancellation", "phi", "tail-cancellation"),
           ("absolute_error", "erf", "absolute-error"),
           ("low_precision", "gelu", "low-precision"), ("biased", "gelu", "biased"),
           ("wrong_form", "gelu", "wrong-form"), ("out_of_range", "erf", "out-of-range"),
           ("not_monotone", "phi", "not-monotone"), ("step_down", "phi", "not-monotone"),
           ("wrong_sign", "gelu_grad", "wrong-sign"),
           ("false_zero", "gelu_grad", "false-zero")]
DTYPES = ["float16", "bfloat16", "float32"]
# Where a signature cannot show in a dtype, left out of the cases: low-precision in bfloat16
# (no format is narrower), wrong-form in bfloat16 (its ulp near 1, 2^-7, is wider than the
# forms' largest difference, 4.7e-4: the fingerprint cannot tell them apart), step_down in
# float32 (the stored sample does not hold x = 2.5)
CANNOT = {("low_precision", "bfloat16"), ("wrong_form", "bfloat16"), ("step_down", "float32")}
CASES = [(*p, d) for p in PLANTED for d in DTYPES if (p[0], d) not in CANNOT]



def _found(name: str, function: str, dtype: str) -> list:
    impl = load_user(f"signature_impls:{name}", function)
    result = measurement.evaluate(impl, FORMATS[dtype])
    assert result.failure is None, result.failure
    return result.diagnosis


@pytest.mark.parametrize("name, function, signature, dtype", CASES,
                         ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_a_planted_defect_shows_its_signature(name, function, signature, dtype):
    found = _found(name, function, dtype)
    assert signature in [s.name for s in found], [s.line() for s in found]
    sig = next(s for s in found if s.name == signature)
    assert sig.count >= 1 and sig.advice


def test_every_signature_has_a_planted_defect():
    assert {p[2] for p in PLANTED} | {"path-dependent"} == set(signatures.NAMES)  # (paths:
    # test_consistency's planted single-element path)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("function", ["gelu", "phi", "erf", "gelu_grad"])
def test_a_correctly_rounded_implementation_shows_none(function, dtype):
    assert _found(function, function, dtype) == []


def test_the_evidence_is_where_the_defect_is():
    sig = next(s for s in _found("false_zero", "gelu_grad", "float32") if s.name == "false-zero")
    assert 1 < sig.first < 2 and 1 < sig.worst < 2 and sig.region == "1<=x<5"
    seam = next(s for s in _found("not_monotone", "phi", "float32") if s.name == "not-monotone")
    # a turn back is named at the lower output of the pair: the first correct input after a
    # seam (x = 0.5, -0.74) is where its last high output comes back down
    planted = lambda x: 0.25 <= x <= 0.5 or -0.76 <= x <= -0.74
    assert planted(seam.first) and planted(seam.worst)
    low = next(s for s in _found("low_precision", "gelu", "float32") if s.name == "low-precision")
    assert low.detail == "bfloat16 inside float32"


def test_check_json_lists_the_signatures_and_the_summary_names_them(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["check", "--impl", "signature_impls:flush_to_zero", "--impl",
                 "signature_impls:gelu", "--function", "gelu", "--dtype", "bfloat16",
                 "--json", str(out), "--no-progress"]) == 0
    results = {r["implementation"]: r for r in json.loads(out.read_text())["results"]}
    planted = results["signature_impls:flush_to_zero"]["diagnosis"]
    assert [d["name"] for d in planted] == ["flush-to-zero"]
    assert planted[0]["count"] > 0 and planted[0]["worst"] is not None
    assert results["signature_impls:gelu"]["diagnosis"] == []
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("user:signature_impls:flush_to_zero"))
    assert "flush-to-zero" in row


def test_a_report_read_back_keeps_its_diagnosis(tmp_path):
    from gelucheck.report import jsonio

    out = tmp_path / "r.json"
    assert main(["check", "--impl", "signature_impls:overflow", "--function", "gelu",
                 "--dtype", "float16", "--json", str(out), "--no-progress"]) == 0
    (result,) = jsonio.read(out)
    assert [s.name for s in result.diagnosis] == ["overflow"]


def test_a_defect_with_no_signature_must_say_why():
    from gelucheck.budgets import Budgets

    class _R:  # a stand-in result with one signature
        pass

    own = budgets.load()
    assert all("signatures" in d for d in own.defects.values())
    assert all(d["signatures"] or d.get("no_signature") for d in own.defects.values())
    bare = Budgets(defects={"mystery": {"reason": "x"}})
    assert signatures.cross_check([], bare) == ([], [])  # nothing measured: nothing to say


@pytest.mark.slow  # every installed backend measured (seconds)
def test_every_recorded_defect_is_found_and_every_signature_explained():
    chosen = implementations(None, [], None, UserOptions(), every_backend=True)
    results = measurement.run(chosen.implementations, list(FORMATS.values()), with_drift=False,
                              progress=False)
    unmatched, unexplained = signatures.cross_check(results, budgets.load())
    assert not unmatched, unmatched
    assert not unexplained, unexplained


def test_a_users_failing_assertion_names_the_mechanism():
    from gelucheck.testing import assert_max_ulp
    from signature_impls import flush_to_zero

    with pytest.raises(AssertionError) as failed:
        assert_max_ulp(flush_to_zero, "gelu", "bfloat16", 0.5, specials=False)
    assert "not correctly rounded" in str(failed.value)
    assert "signature flush-to-zero" in str(failed.value)


@pytest.mark.slow  # pytest in a process of its own: seconds
def test_the_shipped_suite_names_the_mechanism_when_it_fails(pytester):
    pytester.syspathinsert(str(pytester.path))
    (pytester.path / "planted.py").write_text(
        (__import__("pathlib").Path(__file__).parent / "signature_impls.py").read_text())
    result = pytester.runpytest_subprocess("--pyargs", "gelucheck.suite", "--gelucheck-impl",
                                "planted:overflow", "--gelucheck-function", "gelu",
                                "--gelucheck-dtype", "float16", "-k", "test_ulp", "-p",
                                "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*signature overflow*"])


def test_budgets_write_proposes_a_defect_for_each_unexplained_signature(tmp_path, capsys):
    path = tmp_path / "b.toml"
    assert main(["budgets", "--write", str(path), "--impl", "signature_impls:overflow",
                 "--impl", "signature_impls:gelu", "--function", "gelu"]) == 0
    out = capsys.readouterr().out
    assert "proposed defect proposed-overflow for" in out
    written = budgets.load(path)
    proposed = written.defects["proposed-overflow"]
    assert proposed["signatures"] == ["overflow"] and "review, reword" in proposed["reason"]
    planted = written.entries[("user:signature_impls:overflow", "gelu", "float32")]
    assert planted["defects"] == ["proposed-overflow"]
    clean = written.entries[("user:signature_impls:gelu", "gelu", "float32")]
    assert "defects" not in clean  # nothing found, nothing proposed
    # recorded so, the cross-check holds: the proposal names what was found
    impls = [load_user(f"signature_impls:{n}", "gelu") for n in ("overflow", "gelu")]
    results = measurement.run(impls, [FORMATS["float32"]], with_drift=False, progress=False)
    assert signatures.cross_check(results, written) == ([], [])


def test_a_signature_named_nan_keeps_its_name_through_json():
    """Non-finite figures travel as the strings "nan" and "inf"; the signature whose name is
    "nan" must come back as that name, not as a float (budgets --from-report and the
    recording of kernel tiers read results back from JSON)."""
    from gelucheck.report import jsonio
    from gelucheck.results import AccuracyResult, Identity, Signature

    sig = Signature("nan", 3, float("-inf"), float("nan"), "x<-5", "advice")
    result = AccuracyResult(Identity("scipy", "ndtr", "phi", "float32"), "phi", "", "",
                            diagnosis=[sig])
    (back,) = jsonio.loads(jsonio.dumps([result]))
    assert back.diagnosis[0].name == "nan"
    assert back.diagnosis[0].first == float("-inf") and back.diagnosis[0].worst != 0
