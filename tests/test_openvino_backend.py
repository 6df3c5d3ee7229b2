"""The OpenVINO backend: one-op models of any rank, the lowered inference precisions as
consistency paths where the CPU offers them (the accuracy, fingerprints and budgets are the
shipped suite's, in `tox -e openvino`)."""
import numpy as np
import pytest

pytest.importorskip("openvino", reason="openvino is not installed (extra: openvino)")

from gelucheck.backends import get_backend
from gelucheck.formats import FLOAT16, FLOAT32


def _impls():
    backend = get_backend("openvino")
    assert backend.available, backend.reason
    return {i.name: i for i in backend.implementations}


@pytest.mark.parametrize("name", ["Gelu(erf)", "Gelu(tanh)", "Erf"])
def test_a_model_of_any_rank_gives_the_elementwise_outputs(name):
    """The CPU plugin takes no dynamic rank: a model per rank, each elementwise alike."""
    impl = _impls()[name]
    x = np.linspace(-4, 4, 60, dtype=np.float32)
    flat = impl(x)
    assert np.array_equal(impl(x.reshape(3, 4, 5)).reshape(-1), flat)
    assert np.array_equal(np.stack([impl(x[i:i + 1].reshape(())) for i in range(3)]), flat[:3])


def test_the_lowered_precisions_are_paths_of_float32_where_the_cpu_offers_them():
    import openvino as ov

    offered = set(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    want = {f"hint-{h}" for h, c in (("bf16", "BF16"), ("f16", "FP16")) if c in offered}
    for impl in _impls().values():
        assert set(impl.paths(FLOAT32)) == want
        assert impl.paths(FLOAT16) == {}


def test_its_tier_is_named_in_its_version_line():
    backend = get_backend("openvino")
    assert backend.tier is not None and f"kernels {backend.tier.name}" in backend.version


def test_a_model_compiled_in_a_sweeps_worker_runs_on_one_thread():
    """backends/threads.py's setting, as a sweep's or a search's worker sets it: the CPU
    plugin's default is a thread per core for each compiled model."""
    import openvino as ov
    from openvino import opset13

    from gelucheck.backends import threads
    from gelucheck.backends.openvino_backend import compile_config

    p = opset13.parameter([-1], np.float32)
    model = ov.Model([opset13.erf(p)], [p])
    before = threads.set_one_thread(True)
    try:
        compiled = ov.Core().compile_model(model, "CPU", compile_config("f32"))
    finally:
        threads.set_one_thread(before)
    assert int(compiled.get_property("INFERENCE_NUM_THREADS")) == 1
