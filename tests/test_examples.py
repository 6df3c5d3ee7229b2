"""docs/examples: what README tells users to run with them works, and shows what it says."""
import json

import pytest

from gelucheck.cli import main


@pytest.fixture
def examples(monkeypatch, request):
    pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.syspath_prepend(str(request.config.rootpath / "docs" / "examples"))


def _sweep(tmp_path, function, span):
    out = tmp_path / "s.json"
    assert main(["sweep", "--impl", f"torch_without_onednn:{function}", "--framework", "torch",
                 "--backend", "torch:F.gelu", "--function", function, "--range", span,
                 "--workers", "1", "--no-progress", "--json", str(out)]) == 0
    return {r["backend"]: r for r in json.loads(out.read_text())["results"]}


def test_torch_s_own_gelu_is_finite_where_onednn_s_overflows(examples, tmp_path):
    """From 2^127 up GELU(x) = x (Φ(x) is 1 far below float32's rounding): oneDNN's kernel,
    torch's in bulk, gives +inf for the 16 inputs from 0x7f000000; torch's own gives x."""
    by = _sweep(tmp_path, "gelu", "0x7efffff0:0x7f000010")
    assert by["torch"]["n_infinite"] == 16
    assert by["user"]["max_ulp"] == 0 and by["user"]["n_infinite"] == 0


def test_torch_s_own_gelu_grad_is_not_zero_in_the_tail(examples, tmp_path):
    """GELU′(x) = Φ(x) + x·φ(x) is about -3.7e-9 at x = -6.375, a normal float32 throughout
    the range: oneDNN's backward returns 0 there (2^23 ulps and more), torch's own a number
    within a million ulps."""
    by = _sweep(tmp_path, "gelu_grad", "0xc0cc0000:0xc0cc0100")  # from x = -6.375 down
    assert by["torch"]["max_ulp"] >= 2**23
    assert by["user"]["max_ulp"] < 1e6
