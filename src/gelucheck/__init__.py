"""gelucheck: how accurate is each GELU and Gaussian CDF, measured in ulps."""
__version__ = "0.1.0"
