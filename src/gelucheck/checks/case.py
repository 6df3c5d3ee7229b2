"""One implementation in one dtype at the stored inputs of its function: the reference table
loaded once, the implementation called once, and what every check of a measurement and the
diagnosis read from it - inputs, exact and correctly rounded values, outputs, ulp errors
(docs/design.md, Checks)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..backends import Implementation
from ..formats import Format
from ..functions import Function
from ..reference import store
from ..ulp import Exact, ulp_error
from . import reference_data


@dataclass
class Case:
    impl: Implementation
    fmt: Format
    table: store.Table

    @classmethod
    def load(cls, impl: Implementation, fmt: Format) -> Case:
        """The case of ``impl`` in ``fmt`` at the inputs of the function it is measured
        against (exact GELU for a stand-in such as quick_gelu)."""
        return cls(impl, fmt, reference_data.table(fmt, impl.reference_function))

    @property
    def function(self) -> Function:
        return self.impl.reference_function

    @property
    def x(self) -> np.ndarray:
        return self.table.x

    @cached_property
    def exact(self) -> Exact:
        """What ulp_error takes: (correctly rounded, residual)."""
        return reference_data.exact(self.table, self.function)

    @cached_property
    def exact_values(self) -> np.ndarray:
        """The exact values as float64 (to 2^-53 relative)."""
        return self.table.exact(self.function)

    @cached_property
    def rounded(self) -> np.ndarray:
        """The correctly rounded results, in the dtype."""
        return self.table.rounded(self.function)

    @cached_property
    def outputs(self) -> np.ndarray:
        """The implementation's outputs on every stored input, computed once (raises the
        implementation's ImplementationError)."""
        return self.impl(self.x)

    @cached_property
    def errors(self) -> np.ndarray:
        """The outputs' ulp errors."""
        return ulp_error(self.outputs, self.exact, self.fmt)
