"""The sweep on a real Dask cluster (sweep/cluster.py): a `dask scheduler` and `dask worker`
processes on the loopback, the sweep run through --scheduler by the command line. A worker
killed during the run loses nothing (Dask runs its tasks again) and the figures are those of a
run without Dask; a worker with another version of the implementation is refused by name."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="dask.distributed is not installed: pip install "
                    "'gelucheck[cluster]'")
pytestmark = pytest.mark.slow  # a scheduler and workers of their own: seconds each

RANGE = "30000000:38000000"  # 8 tasks of 2^24 encodings
GELU = """import numpy as np
from scipy.special import ndtr

def gelu(x):
    x64 = x.astype(np.float64)
    return (x64 * ndtr(x64)).astype(x.dtype)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and its workers, each a process of this machine on the loopback."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.processes: list[subprocess.Popen] = []
        port = self.address.rpartition(":")[2]
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", port,
                                  "--no-dashboard"], folder)

    def _start(self, name: str, args: list[str], cwd: Path) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=cwd,
                                   stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def worker(self, name: str, cwd: Path) -> subprocess.Popen:
        return self._start(name, ["worker", self.address, "--nworkers", "1", "--nthreads", "1",
                                  "--no-dashboard", "--name", name], cwd)

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(count, timeout=60)

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


@pytest.fixture
def cluster(tmp_path):
    found = Cluster(tmp_path)
    yield found
    found.stop()


def _sweep(cwd: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gelucheck", "sweep", "--impl", "mymod:gelu",
                           "--function", "gelu", "--range", RANGE, "--no-progress", *options],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def _figures(path: Path) -> list[dict]:
    """The results without their timings (which no two runs share), the count of inputs
    computed in this run (the plugin's merge does not time its chunks) and how the run's
    tasks ran."""
    return [{k: v for k, v in r.items()
             if not k.endswith("_s") and k not in ("n_evaluated", "engine")}
            for r in json.loads(path.read_text())["results"]]


def test_a_worker_killed_mid_sweep_changes_no_figure(cluster, tmp_path):
    (tmp_path / "mymod.py").write_text(GELU)
    alone = _sweep(tmp_path, "--workers", "1", "--json", "alone.json")
    assert alone.returncode == 0, alone.stderr
    victim = cluster.worker("w0", tmp_path)
    cluster.worker("w1", tmp_path)
    cluster.wait_for_workers(2)
    checkpoints = tmp_path / "ckpt"
    run = subprocess.Popen([sys.executable, "-m", "gelucheck", "sweep", "--impl", "mymod:gelu",
                            "--function", "gelu", "--range", RANGE, "--no-progress",
                            "--scheduler", cluster.address, "--checkpoint", str(checkpoints),
                            "--json", "dask.json"], cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(list(checkpoints.glob("*.json"))) < 2:  # meta.json and one finished task
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "no task finished on the cluster"
        time.sleep(0.05)
    finished_at_kill = len(list(checkpoints.glob("*.json"))) - 1
    os.kill(victim.pid, signal.SIGKILL)
    _out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert finished_at_kill < 8, "the worker was killed after the sweep was done"
    assert victim.wait() == -signal.SIGKILL
    assert "Dask scheduler tcp://127.0.0.1:" in err
    assert _figures(tmp_path / "dask.json") == _figures(tmp_path / "alone.json")
    engine = json.loads((tmp_path / "dask.json").read_text())["results"][0]["engine"]
    assert engine["name"] == "dask" and engine["workers"] == 1  # the one left
    assert engine["tasks"] == 8 and engine["overhead_s"] >= 0  # all of them in this run


def test_the_plugin_s_exhaustive_items_run_their_chunks_on_the_cluster(cluster, tmp_path):
    """--gelucheck-scheduler: each exhaustive item's chunk on the cluster, merged by the
    controller into the figures `gelucheck sweep` gives without Dask."""
    cluster.worker("w0", tmp_path)
    cluster.wait_for_workers(1)
    span = "30000000:32000000"
    alone = subprocess.run([sys.executable, "-m", "gelucheck", "sweep", "--backend",
                            "scipy:ndtr", "--function", "phi", "--range", span, "--workers",
                            "1", "--no-progress", "--json", str(tmp_path / "alone.json")],
                           capture_output=True, text=True, timeout=600)
    assert alone.returncode == 0, alone.stderr
    tests = Path(__file__).resolve().parent
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-m", "exhaustive", str(tests / "test_exhaustive.py"),
                           "--gelucheck-backend", "scipy", "--gelucheck-function", "phi",
                           "--gelucheck-dtype", "float32", "--gelucheck-sweep-range", span,
                           "--gelucheck-scheduler", cluster.address,
                           "--gelucheck-sweep-json", str(tmp_path / "plugin.json")],
                          cwd=tests.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    ndtr = [r for r in _figures(tmp_path / "plugin.json") if r["implementation"] == "ndtr"]
    assert ndtr == _figures(tmp_path / "alone.json")


def test_a_worker_with_another_version_is_refused_by_name(cluster, tmp_path):
    """The worker imports its own mymod.py, whose source differs: its digest is part of the
    sweep's versions, so it refuses the task rather than sweep another implementation."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (here / "mymod.py").write_text(GELU)
    (there / "mymod.py").write_text(GELU.replace("x64 * ndtr(x64)", "x64 * ndtr(x64) * 1.0"))
    cluster.worker("odd", there)
    cluster.wait_for_workers(1)
    done = _sweep(here, "--scheduler", cluster.address)
    assert done.returncode == 2, done.stdout
    assert "has versions ['source sha256" in done.stderr
    assert "every worker needs the same gelucheck, libraries and kernel tier" in done.stderr
