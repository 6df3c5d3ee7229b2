"""Results per CPU dispatch level, each measured in a process of its own (slow: each level
starts a process that imports torch)."""
import json

import pytest

from gelucheck.cli import main

pytestmark = pytest.mark.slow


def test_an_unsupported_or_unknown_level_is_refused(capsys):
    pytest.importorskip("torch", reason="torch is not installed")
    assert main(["check", "--backend", "torch", "--cpu-capability", "default,sse9"]) == 2
    assert "valid choices: default, avx2, avx512" in capsys.readouterr().err


def test_each_level_is_measured_labelled_and_compared(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("no vector capability here")
    out = tmp_path / "levels.json"
    assert main(["check", "--backend", "torch", "--function", "phi", "--dtype", "float16",
                 "--cpu-capability", "default,avx2", "--json", str(out)]) == 0
    results = json.loads(out.read_text())["results"]
    accuracy = [r for r in results if r["kind"] == "accuracy"]
    assert {r["backend"] for r in accuracy} == {"torch@default", "torch@avx2"}
    assert any("kernels avx2 (ATen avx2" in r["backend_version"] for r in accuracy)
    assert any(r["kernel_tier"] == "avx2" for r in accuracy)
    compared = [r for r in results if r["kind"] == "consistency"]
    assert compared and all(p["name"] == "level avx2 vs default" and p["n_inputs"] == 63488
                            for r in compared for p in r["paths"])
    # each level row's figures are what the levels measured: the path's max ulp is avx2's,
    # the bulk's the default level's (they had read 0 and None)
    own = {(r["backend"], r["implementation"], r["function"]): r["max_ulp"] for r in accuracy}
    for r in compared:
        (path,) = r["paths"]
        key = (r["implementation"], r["function"])
        assert path["max_ulp"] == own[("torch@avx2", *key)]
        assert r["bulk_max_ulp"] == own[("torch@default", *key)]
        if path["n_differ"]:
            assert path["examples"] and "path_ulp" in path["examples"][0]
