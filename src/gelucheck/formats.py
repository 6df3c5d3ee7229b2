"""Binary floating-point formats: their parameters, bit views and value enumeration.

gelucheck owns these descriptors because ``np.finfo(bfloat16)`` fails in ml_dtypes 0.6 and
NumPy's ulp helpers reject bfloat16 (docs/design.md, Formats). The ulp of a value is defined
here, once, for the metric, the rounding and the sweep's fast reference alike.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .errors import choose

_FLOAT64_EXPONENT_FIELD = 0x7FF0000000000000
# IEEE binary16, 32 and 64 by width, as the struct module reads them (little-endian)
_VALUE_OF = {16: struct.Struct("<e"), 32: struct.Struct("<f"), 64: struct.Struct("<d")}


@dataclass(frozen=True)
class Format:
    name: str
    precision: int  # p: significand bits, the implicit bit included
    exponent_bits: int
    bits: int
    uint: np.dtype  # the unsigned integer type of the same width, for bit views

    @cached_property
    def dtype(self) -> np.dtype:
        """NumPy's dtype of the format. bfloat16's is ml_dtypes', imported on first use: its
        import (NumPy registering each of its loops) is most of a command's start, and most
        commands never meet a bfloat16."""
        if self.name == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.name)

    @property
    def emax(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.emax

    @property
    def quantum_exponent(self) -> int:
        """Exponent of the smallest subnormal: the spacing below 2**emin."""
        return self.emin - self.precision + 1

    def ulp_exponent(self, magnitude_exponent: int) -> int:
        """log2 of ulp(v) for floor(log2|v|) == magnitude_exponent:
        max(e, emin) - p + 1 (docs/design.md, ULP error)."""
        return max(int(magnitude_exponent), self.emin) - self.precision + 1

    def ulp_of(self, v: np.ndarray | np.floating) -> np.ndarray:
        """ulp(v) in this format for finite float64 values v, elementwise.

        The same 2^(max(e, emin) - p + 1), read off the float64 encoding: the exponent field
        holds e + 1023, so lowering it by p - 1 gives 2^(e - p + 1) wherever that is a normal
        float64 (always, for formats narrower than float64), and the floor at the quantum
        2^(emin - p + 1) does the rest. Exact, and cheap enough for 2^32 inputs."""
        shape = np.shape(v)
        v = np.asarray(v, dtype=np.float64).reshape(-1)
        scaled = (v.view(np.int64) & _FLOAT64_EXPONENT_FIELD) - ((self.precision - 1) << 52)
        if self.quantum_exponent >= -1022:  # the quantum is a normal float64 (all but float64)
            # the floor, taken on the encodings: what falls below float64's normal range (or
            # wraps negative) is below the quantum too. Three passes instead of seven.
            floor = (self.quantum_exponent + 1023) << 52
            return np.maximum(scaled, floor, out=scaled).view(np.float64).reshape(shape)
        unit = scaled.view(np.float64)
        subnormal = scaled < (1 << 52)  # 2^(e-p+1) below float64's normal range
        if subnormal.any():
            e = (v[subnormal].view(np.int64) & _FLOAT64_EXPONENT_FIELD) >> 52
            unit[subnormal] = np.ldexp(1.0, np.maximum(e - 1023, self.emin) - self.precision + 1)
        return np.maximum(unit, 2.0**self.quantum_exponent).reshape(shape)

    @property
    def max_finite(self) -> float:
        return float(self.from_bits(self._max_finite_bits))

    @property
    def smallest_subnormal(self) -> float:
        return float(self.from_bits(1))

    @property
    def smallest_normal(self) -> float:
        return 2.0**self.emin

    @property
    def _max_finite_bits(self) -> int:
        fraction_bits = self.precision - 1
        largest_exponent_field = (1 << self.exponent_bits) - 2
        return (largest_exponent_field << fraction_bits) | ((1 << fraction_bits) - 1)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1)

    def bits_of(self, values) -> np.ndarray:
        """The encodings of ``values`` (converted to this format) as unsigned integers."""
        return np.asarray(values, dtype=self.dtype).view(self.uint)

    def from_bits(self, bits) -> np.ndarray:
        return np.asarray(bits, dtype=self.uint).view(self.dtype)

    def value_of(self, bits: int) -> float:
        """The value of one encoding as a Python float: from_bits for one input without
        NumPy's per-call cost (a sweep reads a dozen a block)."""
        if self.name == "bfloat16":  # float32's upper half
            return _VALUE_OF[32].unpack((bits << 16).to_bytes(4, "little"))[0]
        return _VALUE_OF[self.bits].unpack(bits.to_bytes(self.bits // 8, "little"))[0]

    def hex(self, value) -> str:
        """The encoding of one value as fixed-width hex, e.g. ``0xbf400000``."""
        return f"0x{int(self.bits_of(value).reshape(-1)[0]):0{self.bits // 4}x}"

    def all_finite(self) -> np.ndarray:
        """Every finite value of a 16-bit format, in increasing order (-0 before +0)."""
        if self.bits > 16:
            raise ValueError(f"{self.name} has too many values to enumerate; sample it instead")
        top = self.sign_bit
        positive = np.arange(0, self._max_finite_bits + 1, dtype=np.uint32)
        ordered = np.concatenate([(positive[::-1] | top), positive]).astype(self.uint)
        return self.from_bits(ordered)

    def next_up(self, values) -> np.ndarray:
        return self.step(values, 1)

    def next_down(self, values) -> np.ndarray:
        return self.step(values, -1)

    def step(self, values, count) -> np.ndarray:
        """The value ``count`` representable values away (broadcasting). +0 and -0 count as
        one value; stepping past the largest finite value gives inf; inf and NaN stay put."""
        values = np.asarray(values, dtype=self.dtype)
        stepped = _from_ordinal(self, _ordinal(self, values) + np.asarray(count, np.int64))
        return np.where(np.isfinite(values), stepped, values).astype(self.dtype)

    def torch_dtype(self):
        """The matching torch dtype; raises ImportError where torch is not installed."""
        import torch

        return getattr(torch, self.name)


def _ordinal(fmt: Format, values: np.ndarray) -> np.ndarray:
    """Map encodings onto signed integers that increase with the value (-0 and +0 both to 0)."""
    bits = fmt.bits_of(values).astype(np.uint64)
    magnitude = (bits & np.uint64(fmt.sign_bit - 1)).astype(np.int64)
    return np.where(bits & np.uint64(fmt.sign_bit), -magnitude, magnitude)


def _from_ordinal(fmt: Format, ordinal: np.ndarray) -> np.ndarray:
    magnitude = np.abs(ordinal).astype(np.uint64)
    bits = np.where(ordinal < 0, magnitude | np.uint64(fmt.sign_bit), magnitude)
    return fmt.from_bits(bits.astype(fmt.uint))


FLOAT16 = Format("float16", 11, 5, 16, np.dtype(np.uint16))
BFLOAT16 = Format("bfloat16", 8, 8, 16, np.dtype(np.uint16))
FLOAT32 = Format("float32", 24, 8, 32, np.dtype(np.uint32))
FLOAT64 = Format("float64", 53, 11, 64, np.dtype(np.uint64))

FORMATS: dict[str, Format] = {f.name: f for f in (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)}


# bfloat16's dtype apart: a dtype of that name exists only once ml_dtypes is imported
_BY_DTYPE: dict[np.dtype, Format] = {f.dtype: f for f in (FLOAT16, FLOAT32, FLOAT64)}


def get_format(name: str | Format | np.dtype) -> Format:
    """Look a format up by name or NumPy dtype, with an error that lists the valid names.
    (A dtype is looked up as itself, not by ``dtype.name``, which every block of a sweep
    would pay for.)"""
    if isinstance(name, Format):
        return name
    if isinstance(name, np.dtype):
        if (found := _BY_DTYPE.get(name)) is not None:
            return found
        if name.name == "bfloat16" and name == BFLOAT16.dtype:
            return BFLOAT16
        return choose("dtype", name.name, FORMATS)
    return choose("dtype", name, FORMATS)


def narrow(values, fmt: str | Format) -> np.ndarray:
    """Round float64 (or float32) values into ``fmt`` once, correctly.

    NumPy rounds float64 to float16 and float32 correctly; ml_dtypes before 0.7 narrowed
    float64 to bfloat16 through float32, which double-rounds. Rounding to float32 *to odd*
    first (16 spare bits, the sticky bit kept) makes the second rounding the only one that
    counts, whichever ml_dtypes is installed.
    """
    fmt = get_format(fmt)
    values = np.asarray(values)
    if fmt != BFLOAT16 or values.dtype != np.float64:
        with np.errstate(over="ignore"):
            return values.astype(fmt.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        single = values.astype(np.float32)
        # truncate: step back toward zero where float32 rounded away from zero (or overflowed)...
        away = np.isfinite(values) & (np.abs(single.astype(np.float64)) > np.abs(values))
        single = np.where(away, np.nextafter(single, np.float32(0)), single)
        # ...then set the last bit where anything was cut off: rounding to odd
        inexact = np.isfinite(values) & (single.astype(np.float64) != values)
        bits = single.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32).astype(fmt.dtype)
