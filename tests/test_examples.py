"""docs/examples: what README tells users to run with them works, and shows what it says."""
import json

import numpy as np
import pytest

from gelucheck.cli import main

# each sweeps through torch and compiles the sweep's loops for its function: seconds apiece
pytestmark = pytest.mark.slow


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


def _inputs(span):
    start, stop = (int(e, 16) for e in span.split(":"))
    return np.arange(start, stop, dtype=np.uint32).view(np.float32)


def _torch_bulk(function, x):
    """torch's F.gelu (or its backward) on one contiguous tensor, as the sweep calls it: what
    the report must say about torch is read off torch itself, whatever kernel it runs."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(x.copy()).requires_grad_(function == "gelu_grad")
    y = F.gelu(t)
    if function == "gelu":
        return y.detach().numpy()
    y.backward(torch.ones_like(y))
    return t.grad.numpy()


def test_torch_s_own_gelu_is_finite_where_onednn_s_overflows(examples, tmp_path):
    """From 2^127 up GELU(x) = x (Φ(x) is 1 far below float32's rounding): torch's own
    kernel (the example) gives x, and the sweep's figures for torch's bulk call (oneDNN's
    kernel in torch 2.13, +inf for the 16 inputs from 0x7f000000) count what that call
    returns."""
    span = "0x7efffff0:0x7f000010"
    by = _sweep(tmp_path, "gelu", span)
    assert by["user"]["max_ulp"] == 0 and by["user"]["n_infinite"] == 0
    bulk = _torch_bulk("gelu", _inputs(span))
    assert by["torch"]["n_infinite"] == np.count_nonzero(~np.isfinite(bulk))
    if not np.all(np.isfinite(bulk)):
        assert float(by["torch"]["max_ulp"]) == np.inf


def test_torch_s_own_gelu_grad_is_not_zero_in_the_tail(examples, tmp_path):
    """GELU′(x) = Φ(x) + x·φ(x) is about -3.7e-9 at x = -6.375, a normal float32 throughout
    the range: torch's own backward (the example) returns a number within a million ulps;
    where torch's bulk backward returns 0 (oneDNN's, in torch 2.13), the sweep says 2^23
    ulps or more."""
    span = "0xc0cc0000:0xc0cc0100"  # from x = -6.375 down
    by = _sweep(tmp_path, "gelu_grad", span)
    assert by["user"]["max_ulp"] < 1e6
    zeros = np.count_nonzero(_torch_bulk("gelu_grad", _inputs(span)) == 0)
    if zeros:
        assert float(by["torch"]["max_ulp"]) >= 2**23
