"""What a sweep's or search's fork server imports for its workers (sweep/worker.py): torch
only where the sweep's implementations are of it, since importing it delays every worker."""
import os
import subprocess
import sys

import pytest

from gelucheck.sweep import worker


def _builtin(impl):
    return {"kind": "builtin", "impl": impl, "function": "gelu"}


def _user(framework):
    return {"kind": "user", "impl": "sweep_impls:rounded_once", "function": "gelu",
            "framework": framework, "device": "cpu"}


@pytest.mark.parametrize(("specs", "modules"), [
    ([_builtin("torch:F.gelu")], ["torch"]), ([_builtin("torch-compile:F.gelu")], ["torch"]),
    ([_builtin("transformers:GELUActivation")], ["torch"]), ([_builtin("timm:GELU")], ["torch"]),
    ([_user("torch")], ["torch"]),
    ([_builtin("onnxruntime:Gelu")], ["ml_dtypes"]), ([_builtin("jax:nn.gelu")], ["ml_dtypes"]),
    ([_builtin("onnxruntime:Erf"), _builtin("torch:F.gelu"), _builtin("jax:lax.erf")],
     ["ml_dtypes", "torch"]),
    ([_builtin("scipy:x*ndtr")], []), ([_builtin("torchless:x")], []), ([_user("numpy")], []),
    ([_builtin("scipy:x*ndtr"), _builtin("torch:F.gelu")], ["torch"])],
    ids=["torch", "torch-compile", "transformers", "timm", "user-torch", "onnxruntime", "jax",
         "three-backends", "scipy", "a-name-that-starts-like-torch", "user-numpy",
         "one-of-two"])
def test_a_fork_server_preloads_what_the_implementations_import(specs, modules):
    """torch for torch's implementations; ml_dtypes, which onnx and JAX import, for theirs;
    nothing for SciPy's or a user's NumPy code - each name once."""
    assert worker.preloads(specs) == modules


@pytest.mark.slow  # a sweep's process and its two workers
def test_the_workers_of_a_sweep_without_torch_never_import_it(request):
    """Two tasks on two workers, forked from a fork server this process starts (a process of
    its own: pytest's may have started one with torch already): the implementation raises in
    a process that has torch loaded."""
    script = (
        "from gelucheck.sweep import runner\n"
        "runner.TASK = 1 << 14\n"
        "spec = [{'kind': 'user', 'impl': 'sweep_impls:refuses_torch', 'function': 'gelu',"
        " 'framework': 'numpy', 'device': 'cpu'}]\n"
        "(out,) = runner.sweep(spec, 'gelu', (0x3F800000, 0x3F808000), workers=2,"
        " progress=False)\n"
        "print(out.figures.n_inputs, out.engine['name'], out.engine['workers'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(request.config.rootpath / "tests"),
                               os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(0x8000), "local", "2"]
