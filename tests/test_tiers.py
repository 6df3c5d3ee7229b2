"""Kernel tiers (tiers.py): the caps each tier sets, and the tier read back from what the
libraries took - oneDNN's own log, ATen's capability, MKL's cap, XLA's flag and the CPU."""
import os
import platform
import subprocess
import sys

import pytest

from gelucheck import tiers
from gelucheck.errors import UsageError

# What a child process reports of torch's kernels after the caps of a tier were set.
_TIER_OF_TORCH = "from gelucheck import tiers; print(tiers.torch_tier().name); " \
                 "print(tiers.torch_tier().parts)"


def _torch_tier_at(tier: str) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", _TIER_OF_TORCH], capture_output=True,
                          text=True, env=tiers.environment(tier), check=True)
    name, parts = done.stdout.strip().splitlines()[-2:]
    return name, parts


def _x86_with(flags: set[str]) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.backends.mkldnn.is_available():
        pytest.skip("this torch has no oneDNN")
    missing = flags - tiers._cpuinfo()[1]
    if missing:
        pytest.skip(f"this CPU lacks {sorted(missing)}")


def test_the_avx2_tier_caps_every_library_at_avx2():
    env = tiers.environment("avx2", {"XLA_FLAGS": "--xla_cpu_max_isa=AVX512 --xla_dump_to=/d",
                                     "PATH": "/bin"})
    assert env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert env["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    # MKL's erf gives the same bits on Intel and AMD only on its SSE4.2 path
    assert env["MKL_ENABLE_INSTRUCTIONS"] == "SSE4_2"
    # the other XLA flags are kept, the earlier cap is replaced, not left to compete
    assert env["XLA_FLAGS"].split() == ["--xla_dump_to=/d", "--xla_cpu_max_isa=AVX2"]
    assert env["PATH"] == "/bin"


def test_the_avx512_tiers_differ_in_onednn_s_extensions_only():
    plain, bf16 = tiers.environment("avx512", {}), tiers.environment("avx512_bf16", {})
    assert plain["ATEN_CPU_CAPABILITY"] == bf16["ATEN_CPU_CAPABILITY"] == "avx512"
    assert (plain["ONEDNN_MAX_CPU_ISA"], bf16["ONEDNN_MAX_CPU_ISA"]) == ("AVX512_CORE",
                                                                         "AVX512_CORE_BF16")
    assert "XLA_FLAGS" not in plain  # XLA compiles for the host there


def test_native_clears_every_cap():
    env = tiers.environment("native", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS":
                                       "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                                       "XLA_FLAGS": "--xla_cpu_max_isa=AVX2"})
    assert env == {}


def test_an_unknown_tier_is_refused_with_the_valid_choices():
    with pytest.raises(UsageError, match=r"unknown kernel tier 'avx3'.*native, avx2, avx512"):
        tiers.environment("avx3")


def test_the_assignments_a_user_can_paste_set_the_same_caps():
    text = tiers.assignments("avx2")
    assert text.startswith("env ") and "ONEDNN_MAX_CPU_ISA=AVX2" in text
    assert tiers.assignments("native") == ("env -u ATEN_CPU_CAPABILITY -u ONEDNN_MAX_CPU_ISA "
                                           "-u MKL_ENABLE_INSTRUCTIONS -u XLA_FLAGS")


def test_the_tiers_a_cpu_reaches_are_those_whose_instructions_it_has(monkeypatch):
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset({"avx2", "fma"})))
    assert tiers.reachable() == ["native", "avx2"]
    avx512 = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset(avx512)))
    assert tiers.reachable() == ["native", "avx2", "avx512"]
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset(
        avx512 | {"avx512_vnni", "avx512_bf16"})))
    assert tiers.reachable() == ["native", "avx2", "avx512", "avx512_bf16"]


def test_xla_s_tier_is_its_last_cap_within_what_the_host_has(monkeypatch):
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset({"avx2", "avx512f"})))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX512 --xla_cpu_max_isa=AVX2")
    assert tiers.xla_tier().name == "avx2"
    assert "XLA up to AVX2" in tiers.xla_tier().parts
    monkeypatch.delenv("XLA_FLAGS")
    assert tiers.xla_tier().name == "avx512"
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset(
        {"avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile"})))
    assert tiers.xla_tier().name == "avx512+bf16+fp16+amx"  # LLVM uses them: not avx512's
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset({"avx2"})))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX512")
    assert tiers.xla_tier().name == "avx2"  # a cap cannot lift the host


def test_openvino_s_tier_is_its_onednn_cap_within_what_the_host_has(monkeypatch):
    """OpenVINO's CPU plugin runs oneDNN: ONEDNN_MAX_CPU_ISA caps it (its outputs change with
    it), never above the host; uncapped, the host's best with its AMX and FP16 named."""
    avx512 = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}
    bf16 = avx512 | {"avx512_vnni", "avx512_bf16"}
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset(bf16)))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert tiers.openvino_tier().name == "avx2"
    assert "oneDNN up to AVX2" in tiers.openvino_tier().parts
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE")
    assert tiers.openvino_tier().name == "avx512"
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
    assert tiers.openvino_tier().name == "avx512_bf16"
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset(bf16 | {"amx_tile"})))
    assert tiers.openvino_tier().name == "avx512_bf16+amx"
    monkeypatch.setattr(tiers, "_cpuinfo", lambda: ("x", frozenset({"avx2", "fma"})))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    assert tiers.openvino_tier().name == "avx2"  # a cap cannot lift the host


def test_a_library_loaded_before_the_caps_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", object())
    for variable in (*tiers.CAP_VARIABLES, "XLA_FLAGS"):
        monkeypatch.setenv(variable, os.environ.get(variable, ""))  # restored afterwards
    assert "jax" in tiers.apply("avx2")
    assert os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert not tiers.took("jax", "avx2")  # XLA cannot be asked: never assumed to follow


def test_at_the_avx2_tier_torch_runs_onednn_s_avx2_gelu():
    """Read back from oneDNN's own verbose log, not from the caps that were asked for."""
    _x86_with({"avx2", "fma"})
    name, parts = _torch_tier_at("avx2")
    assert name == "avx2"
    assert "ATen avx2" in parts and "oneDNN jit:avx2," in parts and "MKL up to SSE4_2" in parts


@pytest.mark.slow  # torch in two more child processes
def test_each_avx512_tier_reads_back_as_itself_and_native_names_mkl_s_own_path():
    _x86_with(tiers.NEEDS["avx512_bf16"])
    assert _torch_tier_at("avx512")[0] == "avx512"
    assert _torch_tier_at("avx512_bf16")[0] == "avx512_bf16"
    name, parts = _torch_tier_at("native")
    assert f"+mkl-native-{tiers.vendor()}" in name and "MKL uncapped" in parts


def test_torch_s_version_line_names_the_tier_this_run_is_capped_at():
    """The default run is capped at the AVX2 tier (pyproject.toml's addopts): every torch
    result of it names that tier and what each library took."""
    _x86_with({"avx2", "fma"})
    if os.environ.get("ONEDNN_MAX_CPU_ISA") != "AVX2":
        pytest.skip("this run is not capped at the AVX2 tier")
    from gelucheck.backends import get_backend

    torch_backend = get_backend("torch")
    assert torch_backend.tier.name == "avx2"
    assert "kernels avx2 (ATen avx2, oneDNN jit:avx2" in torch_backend.version
    assert "MKL 20" in torch_backend.version  # the release documented bounds speak of


def test_xnnpack_s_tier_is_the_best_of_its_kernels_the_cpu_runs_whatever_the_caps(monkeypatch):
    """XNNPACK (its src/configs/unary-elementwise-config.c): AVX-512F, else FMA3, else AVX,
    else SSE2, as CPUID and the OS offer them; no variable caps it."""
    cpus = [({"AVX512F": True, "FMA3": True, "AVX": True, "SSE2": True}, "avx512f"),
            ({"AVX512F": False, "FMA3": True, "AVX": True, "SSE2": True}, "fma3"),
            ({"AVX512F": False, "FMA3": False, "AVX": True, "SSE2": True}, "avx"),
            ({"SSE2": True}, "sse2")]
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    for features, tier in cpus:
        monkeypatch.setattr(tiers, "runtime_features", lambda features=features: features)
        assert tiers.xnnpack_tier().name == tier


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64's features")
def test_the_runtime_features_are_numpy_s_cpuid_reading():
    features = tiers.runtime_features()
    assert features and all(isinstance(v, bool) for v in features.values())
    assert features.get("SSE2") is True  # x86-64's baseline
