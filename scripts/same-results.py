"""Whether two `gelucheck report --json` files hold the same results, metadata aside: what a
refactoring must leave unchanged. Prints each result that differs (by case) and exits 1.

    python scripts/same-results.py BEFORE.json AFTER.json
"""
import json
import sys

METADATA = ("schema_version", "gelucheck", "environment")  # versions, times, checksums


def cases(path: str) -> dict:
    with open(path) as fh:
        document = json.load(fh)
    out = {}
    for result in document["results"]:
        key = json.dumps({k: result.get(k) for k in (
            "kind", "backend", "implementation", "function", "dtype", "device",
            "exact_implementation", "tanh_implementation", "pair")})
        if key in out:
            raise SystemExit(f"{path}: the case {key} appears twice")
        out[key] = result
    return out


def main(before: str, after: str) -> int:
    a, b = cases(before), cases(after)
    differ = [k for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)]
    for key in differ:
        print(f"differs: {key}" if key in a and key in b else
              f"only in {before if key in a else after}: {key}")
    print(f"{len(a)} results before, {len(b)} after, {len(differ)} differ "
          f"(metadata {', '.join(METADATA)} not compared)")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.exit(main(*sys.argv[1:]))
