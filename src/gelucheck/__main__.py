"""python -m gelucheck: the command line."""
from .cli import run

run()
