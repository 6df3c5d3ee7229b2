"""Same input, same output: the consistency check's paths are the paths they name, and it
finds what differs. The full matrix: `gelucheck consistency` (or -m consistency)."""
import numpy as np
import pytest

from gelucheck import judge
from gelucheck.backends import Implementation, find, select
from gelucheck.checks import consistency, reference_data
from gelucheck.formats import FORMATS

F16, F32 = FORMATS["float16"], FORMATS["float32"]


def _subset(fmt, step=13):
    return reference_data.table(fmt, "gelu").x[::step]


@pytest.mark.parametrize("impl", [i for i in select(["numpy", "scipy", "variants"])
                                  .implementations if i.rows_batch], ids=lambda i: i.id)
def test_batched_rows_take_the_path_of_separate_arrays(impl):
    """Where an implementation says so (NumPy ufuncs), rows of a padded 2-D view give what
    separate arrays of that length give, bit for bit."""
    x = _subset(F16)
    paths = consistency.generic_paths(impl, F16)
    for n in (2, 5, 16, 17, 33, 65):
        batched = paths[f"length-{n}"](x)
        separate = consistency.separately(impl, x, n)
        assert np.array_equal(F16.bits_of(batched), F16.bits_of(separate)), n


# the backward's calls one input at a time take seconds: in the slow tier
@pytest.mark.parametrize("function", ["gelu", pytest.param("gelu_grad", marks=pytest.mark.slow)])
def test_torchs_own_short_tensors_are_separate_calls(function):
    """torch's paths build each short tensor on the tensor side (faster); they equal one call
    per NumPy array through the implementation, bit for bit."""
    pytest.importorskip("torch", reason="torch is not installed")
    impl = find("torch:F.gelu", function)[0]
    x = _subset(F16, 7)
    fast, generic = impl.paths(F16), consistency.generic_paths(impl, F16)
    for name in ("one-element", "0-d", "length-2", "length-33", "length-65"):
        assert np.array_equal(F16.bits_of(fast[name](x)),
                              F16.bits_of(generic[name](x))), (function, name)


def test_a_planted_single_element_path_is_found():
    """A kernel that is one ulp off only when called on one element: the one-element path
    differs at every input with a finite output, the 0-d path at every one it takes (one in
    consistency.SHARE), no other path anywhere."""
    base = find("scipy:x*ndtr", "gelu")[0]

    def kernel(x):
        y = base.kernel(x.astype(np.float64)).astype(x.dtype)
        if x.size == 1:
            y = np.nextafter(y, np.asarray(np.inf, y.dtype))
        return y

    impl = Implementation("test", "single-off", "gelu", kernel)
    x = _subset(F16, 97)
    result = consistency.check(impl, F16, inputs=x)
    by_name = {p.name: p for p in result.paths}
    finite = np.isfinite(base(x).astype(np.float64))
    assert by_name["one-element"].n_differ == np.count_nonzero(finite)
    assert by_name["0-d"].n_differ == np.count_nonzero(finite[consistency.subset("0-d")])
    assert all(p.n_differ == 0 for p in result.paths if p.name not in ("one-element", "0-d"))
    assert by_name["one-element"].max_ulp_difference >= 1
    from gelucheck import signatures

    (sig,) = signatures.diagnose_paths(result)  # the path-dependent signature, with its paths
    assert sig.name == "path-dependent" and "one-element" in sig.advice
    assert sig.count == by_name["one-element"].n_differ + by_name["0-d"].n_differ
    clean = consistency.check(base, F16, inputs=x)
    assert signatures.diagnose_paths(clean) == []


def _path_figures(result, name):
    return {p.name: p for p in result.paths}[name]


def _agrees_with_probe(figures, x, bulk, path):
    """A path's figures are what the implementation itself returned on the two paths: the
    count of outputs that differ bit for bit, and each example's values."""
    differ = F32.bits_of(bulk) != F32.bits_of(path)
    assert figures.n_differ == np.count_nonzero(differ)
    for e in figures.examples:
        i = int(np.flatnonzero(x == np.float32(e["x"]))[0])
        assert differ[i] and e["bulk"] == float(bulk[i]) and e["path"] == float(path[i])


@pytest.mark.slow  # every path of torch's GELU over the float32 inputs near 2^127: seconds
def test_the_one_element_path_is_what_torch_returns_near_2p127():
    """docs/design.md (measured on torch 2.13 CPU): F.gelu gave 1.7014e38 for a one-element
    tensor holding 2^127 and +inf inside a longer one. Whatever this torch does there, the
    one-element path reports what torch returns for one element and in bulk."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import torch.nn.functional as F

    impl = find("torch:F.gelu", "gelu")[0]
    tab = reference_data.table(F32, "gelu")
    x = tab.x[np.abs(tab.x.astype(np.float64)) >= 2.0**126]
    result = consistency.check(impl, F32, inputs=x, lengths=False)
    bulk = F.gelu(torch.from_numpy(x.copy())).numpy()
    alone = np.array([F.gelu(torch.from_numpy(x[i:i + 1].copy())).numpy()[0]
                      for i in range(len(x))], dtype=np.float32)
    _agrees_with_probe(_path_figures(result, "one-element"), x, bulk, alone)


@pytest.mark.slow  # every path of torch's GELU, with oneDNN on and off: seconds
def test_the_path_without_onednn_is_torch_s_own_kernel():
    """PyTorch (2.13) hands a contiguous float32 tensor of two or more elements to oneDNN's
    GELU, whose x·(1+erf) overflowed from 2^127, and runs its own kernel where oneDNN is
    turned off. The path reports what torch returns with oneDNN off against its bulk call,
    whatever either kernel does, and turns oneDNN back on after."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import torch.nn.functional as F

    impl = find("torch:F.gelu", "gelu")[0]
    x = np.array([2.0**127, 2.0**126, 1.0, -1.0], dtype=np.float32)
    result = consistency.check(impl, F32, inputs=x, lengths=False)
    assert torch.backends.mkldnn.enabled  # the path turned it back on
    bulk = F.gelu(torch.from_numpy(x.copy())).numpy()
    torch.backends.mkldnn.enabled = False  # (its flags() context warns about Intel GPUs)
    try:
        own = F.gelu(torch.from_numpy(x.copy())).numpy()
    finally:
        torch.backends.mkldnn.enabled = True
    assert own[0] == 2.0**127  # GELU(2^127) = 2^127: Φ is 1 far below float32's rounding
    _agrees_with_probe(_path_figures(result, "without-onednn"), x, bulk, own)


def test_the_path_without_onednn_turns_it_back_on_when_the_call_fails():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from gelucheck.backends.tensors import torch_layout_paths

    def fails(t):
        assert not torch.backends.mkldnn.enabled  # the path's own setting, seen by the call
        raise RuntimeError("planted")

    with pytest.raises(RuntimeError, match="planted"):
        torch_layout_paths(fails)(F32)["without-onednn"](np.ones(4, dtype=np.float32))
    assert torch.backends.mkldnn.enabled


@pytest.mark.parametrize("spec, function", [
    # torch's one-element path is 63,488 calls (its backward's still slower): slow tier
    pytest.param("torch:F.gelu", "gelu", marks=pytest.mark.slow),
    pytest.param("torch:F.gelu", "gelu_grad", marks=pytest.mark.slow),
    ("scipy:x*ndtr", "gelu")])
def test_consistency_within_budget(spec, function, gelucheck_budgets):
    """A representative subset: float16, every path; the counts that differ from the bulk
    result are the ones recorded (known inconsistencies with reasons)."""
    if spec.startswith("torch"):
        pytest.importorskip("torch", reason="torch is not installed")
    impl = find(spec, function)[0]
    result = consistency.check(impl, F16)
    verdict = judge.judge_consistency(result, gelucheck_budgets)
    assert not verdict.missing, "record it: gelucheck consistency --write-budgets FILE"
    assert not verdict.failed, verdict.message()
