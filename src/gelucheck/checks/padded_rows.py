"""Short arrays batched without changing the path a kernel takes (checks.consistency): the
inputs fill the first L columns of an (N, L + 1) buffer and the kernel gets the (N, L) view,
whose rows no iterator can merge, so its inner loop runs once per row on exactly L elements."""
from __future__ import annotations

import numpy as np

# The longest short array per format: two of the widest vectors (AVX-512: 32 float16 or
# bfloat16, 16 float32, 8 float64 lanes) and one more, so that body, tail and both occur.
MAX_LENGTH = {"float16": 65, "bfloat16": 65, "float32": 33, "float64": 17}


def padded_rows(x: np.ndarray, length: int, dtype=None) -> tuple[np.ndarray, int]:
    """x laid into the first ``length`` columns of an (N, length + 1) buffer (the last row
    completed with x[0]); returns (the (N, length) view, len(x))."""
    rows = -(-len(x) // length)
    buffer = np.empty((rows, length + 1), dtype=dtype or x.dtype)
    flat = np.concatenate([x, np.repeat(x[:1], rows * length - len(x))])
    buffer[:, :length] = flat.reshape(rows, length)
    buffer[:, length] = flat[0]
    return buffer[:, :length], len(x)
