#!/usr/bin/env python3
"""Rewrite src/gelucheck/data/phi_rows.json: the coefficients of R = Φ/φ per interval of 1/4
that the compiled sweep reference uses (gelucheck.sweep.phi_table), fitted with mpmath (~3 s)."""
from gelucheck.sweep import phi_table

if __name__ == "__main__":
    phi_table.write_rows()
    print(f"wrote {phi_table.ROWS_FILE}")
