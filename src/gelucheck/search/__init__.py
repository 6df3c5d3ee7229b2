"""Float64 worst cases found by search (``gelucheck search``; docs/design.md, The float64
search)."""
