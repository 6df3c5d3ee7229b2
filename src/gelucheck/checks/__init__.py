"""The checks: ulp error by region, special inputs, the negative minimum, tanh drift."""
