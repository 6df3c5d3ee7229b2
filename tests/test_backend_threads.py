"""A sweep's or a search's worker runs each library's kernels on one thread, as it runs
torch's (backends/threads.py): the sessions ONNX Runtime makes there, and the setting given
back to a caller that ran the tasks in its own process. OpenVINO's compiled models:
tests/test_openvino_backend.py."""
import pytest

from gelucheck.backends import threads
from gelucheck.sweep import worker


@pytest.fixture
def library_default():
    """The libraries' own thread pools, whatever a test did; the setting before, after."""
    before = threads.set_one_thread(False)
    yield
    threads.set_one_thread(before)


def test_a_worker_takes_the_libraries_to_one_thread_and_gives_the_setting_back(
        library_default):
    saved = worker._tune_process()
    try:
        assert threads.one_thread()
    finally:
        worker._restore_threads(saved)
    assert not threads.one_thread()


def _erf_model() -> bytes:
    """One ONNX Erf node, built here with the onnx package."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Erf", ["x"], ["y"])], "erf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model.SerializeToString()


def test_onnx_runtime_sessions_made_in_a_worker_run_on_the_calling_thread(library_default):
    """Outside a worker a session keeps ORT's default (0 today: a pool of a thread per
    physical core in each session - two workers on two cores ran four threads, spinning
    between calls); in one, a single thread."""
    ort = pytest.importorskip("onnxruntime",
                              reason="onnxruntime is not installed (extra: onnxruntime)")
    pytest.importorskip("onnx", reason="onnx is not installed (extra: onnxruntime)")
    from gelucheck.backends.onnxruntime_backend import make_session

    model = _erf_model()
    library = ort.SessionOptions()  # ORT's own default, whatever its version makes it
    options = make_session(model).get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (
        library.intra_op_num_threads, library.inter_op_num_threads)
    threads.set_one_thread(True)
    options = make_session(model).get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
