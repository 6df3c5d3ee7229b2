"""Correctly rounded references: mpmath of record (mpref), Arb as the independent check
(arbref), the stored data (store) and how it is built and verified."""
