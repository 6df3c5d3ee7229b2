"""gelucheck: how accurate is each GELU and Gaussian CDF, measured in ulps."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gelucheck")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
