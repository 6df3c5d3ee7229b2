"""Exhaustive float32 sweeps: a fast reference with a proven fallback, chunked, resumable."""
