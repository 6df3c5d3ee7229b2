"""`gelucheck drift A B`: two implementations against each other. Expected figures: zero for an
implementation against itself; for exact GELU against the tanh form, mpmath's largest gap
between the two forms, 4.7324e-4 at |x| ≈ 2.699 (tests/test_study.py derives the same)."""
import json

import pytest

from gelucheck.cli import main

FORMS_GAP = 4.7324e-4  # mpmath: max over x of |GELU(x) - tanh form(x)|


def _run(tmp_path, *argv):
    out = tmp_path / "d.json"
    code = main(["drift", *argv, "--json", str(out)])
    return code, (json.loads(out.read_text())["results"] if code == 0 else None)


def test_an_implementation_against_itself_differs_nowhere(tmp_path):
    code, results = _run(tmp_path, "scipy:x*ndtr", "scipy:x*ndtr", "--dtype", "float16")
    assert code == 0
    (r,) = results
    assert (r["differ_fraction"], r["max_abs"], r["max_ulp"]) == (0.0, 0.0, 0.0)
    assert r["pair"] == "runtimes" and r["minimum_shift"] == 0.0


def test_exact_against_tanh_form_is_the_forms_gap(tmp_path):
    code, results = _run(tmp_path, "scipy:x*ndtr", "numpy:tanh", "--dtype", "float32")
    assert code == 0
    (r,) = results
    assert FORMS_GAP - 3e-6 < r["max_abs"] <= FORMS_GAP + 1e-6
    assert abs(abs(r["at"]) - 2.699) < 0.02
    assert r["tanh_implementation"] == "numpy:tanh@gelu_tanh"


def test_trained_in_torch_served_in_onnxruntime(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed: pip install "
                        "'gelucheck[onnxruntime]'")
    code, results = _run(tmp_path, "torch:F.gelu@gelu", "onnxruntime:Gelu@gelu")
    assert code == 0
    assert [r["dtype"] for r in results] == ["float16", "float32"]  # ORT: no bfloat16, float64
    for r in results:  # both compute exact GELU: closer than exact is to the tanh form
        assert r["max_abs"] < FORMS_GAP


@pytest.mark.parametrize("argv, message", [
    (["scipy:ndt", "numpy:tanh"], "unknown implementation 'scipy:ndt'"),  # (scipy: always)
    (["nope:x", "numpy:tanh"], "unknown backend 'nope'; valid choices: numpy"),
    (["scipy:ndtr", "numpy:tanh"], "scipy:ndtr computes phi and numpy:tanh gelu_tanh"),
    (["numpy:tanh", "numpy:tanh", "--dtype", "bfloat16"], None),
])
def test_pairs_that_cannot_be_measured_are_refused(argv, message, capsys):
    code = main(["drift", *argv])
    if message is None:  # numpy's tanh takes bfloat16 through float32: measured, not refused
        assert code == 0
        return
    assert code == 2 and message in capsys.readouterr().err
