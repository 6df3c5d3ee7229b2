"""The cells the float64 search works on: one sign, one binade (the subnormals count as one,
without zero), and a dyadic part of its encodings - the segments of the reference
(reference.py) on the same grid. A cell's samples are a function of the cell and the seed
alone, so that any worker draws the same inputs."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FRACTION_BITS = 52
BINADES = 2047  # 0 (subnormal) .. 2046; 2047 holds inf and NaN
SIGN_BIT = np.uint64(1 << 63)


@dataclass(frozen=True, order=True)
class Cell:
    sign: int  # 1: negative inputs
    binade: int
    level: int  # 2^-level of the binade's encodings
    index: int

    @classmethod
    def holding(cls, x: float, level: int) -> Cell:
        """The cell of ``level`` that holds the nonzero finite double x."""
        bits = int(np.array([abs(x)]).view(np.uint64)[0])
        binade = bits >> FRACTION_BITS
        offset = bits - (binade << FRACTION_BITS)
        return cls(int(x < 0), binade, level, offset >> (FRACTION_BITS - level))

    @property
    def first(self) -> int:
        """The first encoding of |x| in the cell (the subnormal binade starts at 1: no 0)."""
        start = (self.binade << FRACTION_BITS) + (self.index << (FRACTION_BITS - self.level))
        return max(start, 1)

    @property
    def last(self) -> int:
        start = (self.binade << FRACTION_BITS) + (self.index << (FRACTION_BITS - self.level))
        return start + (1 << (FRACTION_BITS - self.level)) - 1

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def children(self, bits: int) -> list[Cell]:
        """The 2^bits cells of the next levels (fewer where one encoding is reached)."""
        bits = min(bits, FRACTION_BITS - self.level)
        return [Cell(self.sign, self.binade, self.level + bits, (self.index << bits) + k)
                for k in range(1 << bits)]

    def ancestor(self, level: int) -> Cell:
        """The cell of ``level`` (at most this one's) that holds this one."""
        return Cell(self.sign, self.binade, level, self.index >> (self.level - level))

    def neighbours(self) -> list[Cell]:
        """The cells on either side at the same level, within the binade."""
        return [Cell(self.sign, self.binade, self.level, i) for i in (self.index - 1,
                self.index + 1) if 0 <= i < 1 << self.level]

    def inputs(self, samples: int | None, seed: int) -> np.ndarray:
        """Every input of the cell (``samples`` None), or its two ends and ``samples``
        encodings drawn uniformly (a generator seeded by the seed and the cell); sorted by
        encoding, as the reference runs fastest."""
        if samples is None:
            magnitudes = np.arange(self.first, self.last + 1, dtype=np.uint64)
        else:
            rng = np.random.default_rng([seed, self.sign, self.binade, self.level, self.index])
            drawn = rng.integers(self.first, self.last, size=samples, endpoint=True,
                                 dtype=np.uint64)
            magnitudes = np.unique(np.concatenate(
                [drawn, np.array([self.first, self.last], dtype=np.uint64)]))
        if self.sign:
            magnitudes = magnitudes | SIGN_BIT
        return magnitudes.view(np.float64)

    def __str__(self) -> str:
        low, high = (np.array([self.first, self.last], dtype=np.uint64)
                     | (SIGN_BIT if self.sign else np.uint64(0))).view(np.float64)
        return f"[{float(low).hex()}, {float(high).hex()}]"


def binades() -> list[Cell]:
    """Every finite, nonzero input: both signs, every binade, as level-0 cells."""
    return [Cell(sign, binade, 0, 0) for sign in (0, 1) for binade in range(BINADES)]
