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
        """Every input of the cell (``samples`` None), or a sample (sample())."""
        if samples is None:
            magnitudes = np.arange(self.first, self.last + 1, dtype=np.uint64)
            if self.sign:
                magnitudes = magnitudes | SIGN_BIT
            return magnitudes.view(np.float64)
        return sample([self], samples, seed)[0]

    def __str__(self) -> str:
        low, high = (np.array([self.first, self.last], dtype=np.uint64)
                     | (SIGN_BIT if self.sign else np.uint64(0))).view(np.float64)
        return f"[{float(low).hex()}, {float(high).hex()}]"


def binades() -> list[Cell]:
    """Every finite, nonzero input: both signs, every binade, as level-0 cells."""
    return [Cell(sign, binade, 0, 0) for sign in (0, 1) for binade in range(BINADES)]


def sample(cells: list[Cell], samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's two ends and ``samples`` encodings drawn uniformly, sorted by encoding
    (as the reference runs fastest), without repeats, the cells' one after another; and
    where each cell's start (its position, then the end of all). The draws are a hash of
    the seed, the cell and the draw's number (splitmix64, in NumPy over every cell of a
    round at once: a generator seeded per cell costs more than its inputs' evaluation)."""
    fields = np.array([(c.sign, c.binade, c.level, c.index, c.first, c.last) for c in cells],
                      dtype=np.uint64).reshape(-1, 6)
    key = _mix(np.full(len(cells), seed & MASK64, dtype=np.uint64))
    for column in fields[:, :4].T:
        key = _mix(key ^ column)
    first, last = fields[:, 4:5], fields[:, 5:6]
    draws = _mix(key[:, None] + GOLDEN * np.arange(1, samples + 1, dtype=np.uint64))
    drawn = first + (draws >> np.uint64(11)) % (last - first + np.uint64(1))
    magnitudes = np.sort(np.concatenate([first, drawn, last], axis=1), axis=1)
    kept = np.ones(magnitudes.shape, dtype=bool)
    kept[:, 1:] = magnitudes[:, 1:] != magnitudes[:, :-1]
    signs = np.where(fields[:, 0:1] == 1, SIGN_BIT, np.uint64(0))
    x = (magnitudes | signs)[kept].view(np.float64)
    return x, np.concatenate([[0], np.cumsum(kept.sum(axis=1))])


MASK64 = (1 << 64) - 1
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: every bit of z mixed into every bit of the result."""
    z = z + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed
