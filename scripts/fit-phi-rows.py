#!/usr/bin/env python3
"""Rewrite the coefficient tables of the compiled sweep reference (gelucheck.sweep.phi_table:
R = Φ/φ in src/gelucheck/data/phi_rows.json, Φ in phi_direct_rows.json, erf in erf_rows.json,
the tanh form's σ(2u) in gelu_tanh_rows.json), fitted with mpmath (a few seconds)."""
from gelucheck.sweep import phi_table

if __name__ == "__main__":
    for table in phi_table.TABLES:
        table.write()
        print(f"wrote {table.path}")
