"""What a sweep's or search's worker loads (sweep/worker.py): torch only where the sweep's
implementations are of it, since importing it delays every worker."""
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


@pytest.mark.parametrize("specs", [
    [_builtin("torch:F.gelu")], [_builtin("torch-compile:F.gelu")],
    [_builtin("transformers:GELUActivation")], [_builtin("timm:GELU")],
    [_user("torch")], [_builtin("scipy:x*ndtr"), _builtin("torch:F.gelu")]],
    ids=["torch", "torch-compile", "transformers", "timm", "user-torch", "one-of-two"])
def test_a_sweep_of_torchs_implementations_preloads_torch(specs):
    assert worker.loads_torch(specs)


@pytest.mark.parametrize("specs", [
    [_builtin("scipy:x*ndtr")], [_builtin("onnxruntime:Gelu")], [_builtin("jax:nn.gelu")],
    [_builtin("torchless:x")], [_user("numpy")]],
    ids=["scipy", "onnxruntime", "jax", "a-name-that-starts-like-torch", "user-numpy"])
def test_a_sweep_of_other_implementations_does_not(specs):
    assert not worker.loads_torch(specs)


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
