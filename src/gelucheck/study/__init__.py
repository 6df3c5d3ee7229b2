"""The study behind the numbers: identical networks with ReLU and GELU on make_moons over
many seeds, and what swapping the activation of a trained network does (docs/design.md,
The make_moons study)."""
