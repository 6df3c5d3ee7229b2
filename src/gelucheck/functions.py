"""The functions gelucheck measures, by name."""
from __future__ import annotations

FUNCTIONS: dict[str, str] = {
    "phi": "Gaussian CDF Φ(x) = erfc(-x/√2)/2",
    "gelu": "exact GELU x·Φ(x)",
    "gelu_tanh": "tanh approximation 0.5·x·(1+tanh(√(2/π)(x+0.044715x³)))",
}


def check_function(name: str) -> str:
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name!r}; valid choices: {', '.join(FUNCTIONS)}")
    return name
