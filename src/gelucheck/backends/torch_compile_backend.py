"""torch.compile of F.gelu, both forms, and of torch.erf and torch.erfc, on the CPU (Inductor
generates its own kernels)."""
from __future__ import annotations

from .. import tiers
from ..functions import ERF, ERFC, GELU, GELU_TANH, Function, derivative
from .base import Backend, Implementation, warm_up_on_a_few_inputs
from .tensors import (
    preparer,
    tensor_kernel,
    torch_compile,
    torch_gradient,
    torch_layout_paths,
    torch_version_text,
)


def load() -> Backend:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:
        return Backend("torch-compile", False, f"torch is not installed ({exc})", None)

    def compiled(function: Function, approximate: str) -> tuple[Implementation, Implementation]:
        # Dynamic shapes for measuring: one compile per dtype and form (its warm-up) serves
        # every length, 0 and 1 included (a static compile would recompile for each array
        # length the checks use).
        fn = torch_compile(lambda t: F.gelu(t, approximate=approximate), dynamic=True)
        text = f"torch.compile(F.gelu, approximate='{approximate}'), dynamic shapes"
        grad = torch_gradient(fn)  # AOTAutograd compiles the backward too
        grad_function = derivative(function)
        assert grad_function is not None, function  # (GELU's forms have their derivatives)

        def static(x, backward=False):
            """For benchmarks: a compile specialised to this one shape (what a model with
            fixed shapes runs), a fresh one per benchmark."""
            once = torch_compile(lambda t: F.gelu(t, approximate=approximate), dynamic=False)
            return preparer(torch_gradient(once) if backward else once, "cpu")(x)

        forward, backward = tensor_kernel(fn, "cpu"), tensor_kernel(grad, "cpu")
        return (Implementation("torch-compile", "F.gelu", function, forward,
                               description=text, prepare=preparer(fn, "cpu"),
                               prepare_static=static, paths=torch_layout_paths(fn),
                               warm_up=warm_up_on_a_few_inputs(forward)),
                Implementation("torch-compile", "F.gelu", grad_function,
                               backward, prepare=preparer(grad, "cpu"),
                               prepare_static=lambda x: static(x, backward=True),
                               warm_up=warm_up_on_a_few_inputs(backward),
                               description=f"d/dx of {text}: its compiled backward",
                               paths=torch_layout_paths(grad)))

    def compiled_op(function: Function) -> Implementation:
        """torch.compile of torch.erf or torch.erfc alone: Inductor's own kernels (a vectorized
        one for contiguous input, a scalar one for strided: docs/findings/torch-2.13-cpu.md)."""
        name = function.name
        op = getattr(torch, name)
        fn = torch_compile(lambda t: op(t), dynamic=True)
        forward = tensor_kernel(fn, "cpu")
        return Implementation("torch-compile", name, function, forward, prepare=preparer(fn, "cpu"),
                              description=f"torch.compile(torch.{name}), dynamic shapes",
                              paths=torch_layout_paths(fn),
                              warm_up=warm_up_on_a_few_inputs(forward))

    impls = (*compiled(GELU, "none"), *compiled(GELU_TANH, "tanh"), compiled_op(ERF),
             compiled_op(ERFC))
    return Backend("torch-compile", True, "", torch_version_text(), impls,
                   tier=tiers.torch_tier())
