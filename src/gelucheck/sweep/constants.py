"""The numbers the sweep's float64 reference (fastref) and its compiled loops (kernels) share:
in a module of their own, so that neither imports the other for them."""
import math

from ..formats import FLOAT32

PHI0 = 1 / math.sqrt(2 * math.pi)
K = math.sqrt(2 / math.pi)
CUBIC = 0.044715


FRACTION_MASK = (1 << 52) - 1
# Where the exact value approaches a float32 from a known side - 1 (Φ from below, GELU′ from
# above), x (GELU and its tanh form, from below), 1/2 (Φ and GELU′ as x -> 0, on x's side),
# 0 (the tails, with the function's sign) - the float64 reference is kept on that side
# (docs/design.md, The sweep),
# never on the float32 itself: an output one step from it errs by 1/2 or 1 ulp and a little
# more or less, which decides whether it is correctly rounded and its histogram bin. At
# most the float64 next to the float32; TAIL_FLOOR from 0 (|f| < 2^-200 in the far left and
# past φ's right; a power of two so far below the quantum that |y - v| stays exact for
# outputs up to 4 quanta from 0).
ONE_DOWN = 1.0 - 2.0**-53
ONE_UP = 1.0 + 2.0**-52
TAIL_FLOOR = 2.0**-200

QUANTUM = 2.0**FLOAT32.quantum_exponent  # float32's smallest ulp: the far left's unit
DROPPED = 52 - 23  # float64 fraction bits below float32's last place, for normal float32

# erf and erfc (sweep/erf_reference.py): 2/√π, the tiny part's slope; where float32 results
# reach their limits for good: |erf| >= 6 is 1 - 2.2e-17 inside (-1, 1), erfc from 12 on is
# below 2^-200 (TAIL_FLOOR), erfc <= -6 is 2 less 2.2e-17 - kept just inside, on their side.
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
ERF_TINY = 2.0**-30  # below it erf is 2x/√π to 2^-61 relative (the next term, x²/3)
ERF_FAR = 6.0
ERFC_RIGHT = 12.0
TWO_DOWN = 2.0 - 2.0**-52
