"""The transformers backend: every GELU-like entry of the installed ACT2FN is measured or
listed as missing with its reason, and the entries that call torch's kernels give torch's
outputs bit for bit (the accuracy, fingerprints and drift are the shipped suite's)."""
import numpy as np
import pytest

pytest.importorskip("transformers", reason="transformers is not installed (extra: transformers)")

from gelucheck.backends import get_backend
from gelucheck.checks import reference_data


def test_every_gelu_entry_of_act2fn_is_measured():
    """A release that adds a GELU variant to ACT2FN fails here until the backend declares
    what it computes."""
    from transformers.activations import ACT2CLS

    backend = get_backend("transformers")
    assert backend.available, backend.reason
    measured = {i.name for i in backend.implementations}
    gelus = {name for name in ACT2CLS if "gelu" in name}
    assert gelus <= measured | set(backend.unavailable), gelus - measured


@pytest.mark.parametrize("name, approximate", [("gelu", "none"),
                                               ("gelu_pytorch_tanh", "tanh")])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_the_entries_on_torch_kernels_are_torch_s_own(name, approximate, dtype):
    import torch

    from gelucheck.backends.tensors import from_tensor, to_tensor

    (impl,) = [i for i in get_backend("transformers").implementations if i.name == name]
    x = reference_data.table(dtype, impl.function).x
    with torch.no_grad():
        expected = from_tensor(torch.nn.functional.gelu(to_tensor(x), approximate=approximate))
    assert np.array_equal(impl(x).view(np.uint8), expected.view(np.uint8))


def test_the_stand_ins_are_declared_as_such():
    by_name = {i.name: i for i in get_backend("transformers").implementations}
    assert by_name["quick_gelu"].approximates.name == "gelu"
    assert by_name["quick_gelu"].formula == "sigmoid_1.702"
    assert by_name["gelu_10"].approximates.name == "gelu"
    assert {i.function.name for i in by_name.values() if i.approximates is None} == {
        "gelu", "gelu_tanh"}
