"""Kernel tiers: the code a library chose for this CPU, which its figures depend on.

torch's exact GELU in float32 and bfloat16 runs oneDNN's JIT kernel, whose erf differs by
instruction set; its other vectorised kernels are ATen's, compiled per capability; its erf and
erfc are MKL's, whose code path depends on the CPU's vendor and instructions; JAX's and
TensorFlow's compiled code is XLA's, generated for the host. Each library reads its cap once,
when it first runs, so a tier is chosen by setting the caps before the library loads (in this
process, or in a child process) and is then read back from what the library reports it took
(docs/budgets.md, Kernel tiers).

A tier's name: a preset's (``avx2``, ``avx512``, ``avx512_bf16``) where the libraries took
exactly its code, else the parts they took (``aten-avx512+onednn-avx512_core_fp16``), with
``+mkl-...`` where MKL was not capped at SSE4.2, the one code path of its erf that gives the
same bits on Intel's and AMD's CPUs.
"""
from __future__ import annotations

import os
import platform
import re
import sys
from dataclasses import dataclass
from functools import cache

from .errors import choose
from .native_output import captured

NATIVE = "native"  # no caps: the CPU's own kernels
MKL_PINNED = "SSE4_2"
XLA_FLAG = "--xla_cpu_max_isa="
# Each preset: ATen's capability, oneDNN's cap, XLA's cap (None: XLA compiles for the host).
# oneDNN's AVX512_CORE is AVX-512 F, BW, VL and DQ, ATen's avx512 the same; AVX512_CORE_BF16
# adds VNNI and BF16, where oneDNN's bfloat16 GELU flushes subnormal results.
PRESETS: dict[str, tuple[str, str, str | None]] = {
    "avx2": ("avx2", "AVX2", "AVX2"),
    "avx512": ("avx512", "AVX512_CORE", None),
    "avx512_bf16": ("avx512", "AVX512_CORE_BF16", None),
}
CHOICES = (NATIVE, *PRESETS)
CAP_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")
# oneDNN's implementation names (its verbose log's jit:NAME) as tier names
ONEDNN_NAMES = {"avx2": "avx2", "avx512_core": "avx512", "avx512_core_bf16": "avx512_bf16",
                "avx512_core_vnni": "avx512_vnni", "avx512_core_fp16": "avx512_fp16",
                "avx512_core_amx": "avx512_amx", "avx512_core_amx_fp16": "avx512_amx_fp16",
                "avx2_vnni": "avx2_vnni", "avx2_vnni_2": "avx2_vnni_2"}
# the libraries whose kernels a tier caps: loaded before the caps, they keep their own choice
CAPPED_MODULES = ("torch", "jax", "jaxlib", "tensorflow")


@dataclass(frozen=True)
class Tier:
    """The kernel tier a backend's results were computed on: ``name`` identifies it (budgets
    are kept per name), ``parts`` says what each library took and on which CPU."""

    name: str
    parts: str

    def __str__(self) -> str:
        return f"{self.name} ({self.parts})"


def environment(tier: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment) with the caps of ``tier`` set; native clears
    every cap gelucheck sets."""
    check(tier)
    env = dict(os.environ if base is None else base)
    for variable in CAP_VARIABLES:
        env.pop(variable, None)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(XLA_FLAG)]
    if tier != NATIVE:
        aten, onednn, xla = PRESETS[tier]
        env.update(ATEN_CPU_CAPABILITY=aten, ONEDNN_MAX_CPU_ISA=onednn,
                   MKL_ENABLE_INSTRUCTIONS=MKL_PINNED)
        if xla:
            flags.append(XLA_FLAG + xla)
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    else:
        env.pop("XLA_FLAGS", None)
    return env


def check(tier: str) -> str:
    return choose("kernel tier", tier, CHOICES)


def apply(tier: str) -> list[str]:
    """Set the caps of ``tier`` in this process, before the libraries load their kernels. The
    libraries already loaded keep the kernels they chose: named in the list returned, so that a
    caller says so rather than measure another tier than the one asked for."""
    env = environment(tier)
    for variable in [*CAP_VARIABLES, "XLA_FLAGS"]:
        if variable in env:
            os.environ[variable] = env[variable]
        else:
            os.environ.pop(variable, None)
    return [m for m in CAPPED_MODULES if m in sys.modules]


@cache
def _cpuinfo() -> tuple[str, frozenset[str]]:
    """The CPU's model and flags (Linux: /proc/cpuinfo; elsewhere the model alone)."""
    model, flags = platform.processor() or platform.machine(), frozenset[str]()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = frozenset(value.split())
                    break
    except OSError:
        pass
    return model, flags


def cpu() -> str:
    """The CPU's model and the flags that choose these libraries' kernels."""
    model, flags = _cpuinfo()
    relevant = sorted(f for f in flags
                      if re.fullmatch(r"avx2|avx512f|avx512_(vnni|bf16|fp16)|amx_\w+|fma", f))
    return f"{model} [{' '.join(relevant)}]" if relevant else model


# the CPU flags a preset needs (oneDNN's AVX512_CORE: F, BW, VL, DQ; its BF16 tier adds VNNI)
NEEDS = {"avx2": {"avx2", "fma"}, "avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq"},
         "avx512_bf16": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni",
                         "avx512_bf16"}}


def reachable() -> list[str]:
    """The tiers this CPU can run: its own, and each preset whose instructions it has."""
    flags = _cpuinfo()[1]
    return [NATIVE, *(tier for tier in PRESETS if NEEDS[tier] <= flags)]


def vendor() -> str:
    model = _cpuinfo()[0].lower()
    return "amd" if "amd" in model else "intel" if "intel" in model else platform.machine()


def onednn_kernel() -> str | None:
    """The oneDNN implementation torch's exact GELU runs on a contiguous float32 tensor
    (``avx2``, ``avx512_core_bf16``, ...; its verbose log's jit:NAME), None where torch does
    not hand it to oneDNN (no oneDNN, or turned off)."""
    import torch
    import torch.nn.functional as F

    if not (torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled):
        return None
    x = torch.linspace(-3.0, 3.0, 64)
    with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
        log = captured(lambda: F.gelu(x))
    found = re.search(r"eltwise,(?:jit|ref):(\w+),forward\S*,.*eltwise_gelu_erf", log)
    return found[1] if found else None


@cache
def torch_tier() -> Tier:
    """The tier torch's CPU kernels run on in this process (once torch has loaded them)."""
    import torch

    aten = torch.backends.cpu.get_cpu_capability().lower()
    onednn = onednn_kernel()
    name = ONEDNN_NAMES.get(onednn or "", f"onednn-{onednn}")
    if onednn is None or name.split("_")[0] != aten:
        name = f"aten-{aten}+onednn-{onednn or 'off'}"
    parts = f"ATen {aten}, oneDNN {'jit:' + onednn if onednn else 'not used'}"
    if torch.backends.mkl.is_available():
        mkl = os.environ.get("MKL_ENABLE_INSTRUCTIONS", "").upper()
        if mkl != MKL_PINNED:
            name += f"+mkl-{(mkl or NATIVE).lower()}-{vendor()}"
        parts += f", MKL {'up to ' + mkl if mkl else 'uncapped'}"
    return Tier(name, f"{parts}; {cpu()}")


# XLA's instruction sets, lowest first, with the CPU flag that offers each; uncapped, LLVM
# also uses the host's AVX-512 extensions (FP16 changes XLA's float16 tanh-form GELU)
XLA_ISAS = (("AVX2", "avx2"), ("AVX512", "avx512f"))
XLA_EXTENSIONS = (("bf16", "avx512_bf16"), ("fp16", "avx512_fp16"), ("amx", "amx_tile"))


def xla_tier() -> Tier:
    """The tier of the code XLA generates in this process: its cap (XLA_FLAGS, the last
    --xla_cpu_max_isa wins, as in XLA) where the CPU has it, else the host's own with the
    AVX-512 extensions it has (``avx512+bf16``)."""
    caps = [f.removeprefix(XLA_FLAG).upper() for f in os.environ.get("XLA_FLAGS", "").split()
            if f.startswith(XLA_FLAG)]
    text, flags = cpu(), _cpuinfo()[1]
    host = [isa for isa, flag in XLA_ISAS if flag in flags]
    best = host[-1] if host else "unknown"
    order = [isa for isa, _ in XLA_ISAS]
    if caps and caps[-1] in order and best in order:
        name = order[min(order.index(caps[-1]), order.index(best))].lower()
    else:
        name = best.lower()
        if best == "AVX512" and not caps:
            name += "".join(f"+{short}" for short, flag in XLA_EXTENSIONS if flag in flags)
    parts = f"XLA {'up to ' + caps[-1] if caps else 'for the host'}; {text}"
    return Tier(name, parts)


# oneDNN's caps (ONEDNN_MAX_CPU_ISA) as preset names, lowest first, with the CPU flags each
# needs; uncapped, oneDNN takes the host's best, and its AMX and FP16 kernels where present
ONEDNN_CAPS = (("AVX2", "avx2"), ("AVX512_CORE", "avx512"), ("AVX512_CORE_BF16", "avx512_bf16"))
ONEDNN_EXTENSIONS = (("amx", "amx_tile"), ("fp16", "avx512_fp16"))


def openvino_tier() -> Tier:
    """The tier of OpenVINO's CPU plugin in this process: its oneDNN's cap where set
    (ONEDNN_MAX_CPU_ISA, read when the plugin loads) and the CPU has it, else the host's best
    preset with its AMX and FP16 extensions (``avx512_bf16+amx``)."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    flags = _cpuinfo()[1]
    host = [name for _, name in ONEDNN_CAPS if NEEDS[name] <= flags]
    best = host[-1] if host else "unknown"
    caps = [c for c, _ in ONEDNN_CAPS]
    if cap in caps and best in host:
        name = ONEDNN_CAPS[min(caps.index(cap), host.index(best))][1]
    else:
        name = best + "".join(f"+{short}" for short, flag in ONEDNN_EXTENSIONS if flag in flags)
    return Tier(name, f"OpenVINO's oneDNN {'up to ' + cap if cap else 'uncapped'}; {cpu()}")


# XNNPACK's float32 kernels (LiteRT's default delegate) are chosen when it starts, from what
# CPUID and the OS offer, with no cap (its src/configs/unary-elementwise-config.c): AVX-512F,
# else FMA3, else AVX, else SSE2 - NumPy's names for those features, lowest last
XNNPACK_ISAS = (("avx512f", "AVX512F"), ("fma3", "FMA3"), ("avx", "AVX"), ("sse2", "SSE2"))


def runtime_features() -> dict[str, bool]:
    """The CPU features NumPy found when it loaded: CPUID's, with the OS's support, as the
    libraries' own dispatchers read them (/proc/cpuinfo shows the host's under an emulator)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy 1
        from numpy.core._multiarray_umath import __cpu_features__  # type: ignore[no-redef]
    return dict(__cpu_features__)


def xnnpack_tier() -> Tier:
    """The tier of XNNPACK's float32 kernels in this process (it cannot be capped: the tier
    is the CPU's, whatever --kernel-tier asks for)."""
    features = runtime_features()
    name = next((isa for isa, feature in XNNPACK_ISAS if features.get(feature)),
                platform.machine().lower())
    return Tier(name, f"XNNPACK's, chosen by the CPU with no cap; {_cpuinfo()[0]}")


def took(module: str, tier: str) -> bool:
    """Whether ``module``, already loaded, runs on ``tier`` (torch is asked; XLA's backends
    read their cap when they first compile, which cannot be asked: assumed not)."""
    if module == "torch":
        return tier != NATIVE and torch_tier().name == tier
    return False


def assignments(tier: str) -> str:
    """The shell assignments that set ``tier``'s caps (native: unset them)."""
    env = environment(tier, {})
    unset = [v for v in (*CAP_VARIABLES, "XLA_FLAGS") if v not in env]
    return "env " + " ".join([*(f"{k}={v!r}" if " " in v else f"{k}={v}" for k, v in env.items()),
                     *(f"-u {v}" for v in unset)])
