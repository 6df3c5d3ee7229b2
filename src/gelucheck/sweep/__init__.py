"""Exhaustive float32 sweeps: a fast reference with a proven fallback, chunked, resumable."""

# where a sweep's (and a search's) tasks run: a local pool of processes, or Dask
# (sweep/cluster.py)
ENGINES = ("local", "dask")
