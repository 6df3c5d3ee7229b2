#!/usr/bin/env python3
"""The mutation score per module, from the results mutmut 3 left in mutants/ (tox -e mutation
runs it after `mutmut run`). mutmut prints only a running count; this prints, per module,
mutants killed, survived and with no test, and killed / (killed + survived + no test) less
the mutants listed as equivalent in tests/mutation-equivalent.txt (each with its reason).

    python scripts/mutation-score.py [MUTANTS_DIR] [--fail-under PERCENT]
"""
import argparse
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# mutmut 3's exit codes (mutmut/stats.py): 1 and 3 a failed test run, 0 all tests passed;
# a timeout (the mutant made the tests run away: 36, and SIGXCPU) is detected, so it counts
KILLED, SURVIVED = {1, 3, 37, 36, 24, -24, 152}, {0}
NO_TESTS = {5, 33}


def equivalent() -> dict[str, str]:
    """{mutant name: reason} from tests/mutation-equivalent.txt ('name  # reason' lines)."""
    path = ROOT / "tests" / "mutation-equivalent.txt"
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        name, _, reason = line.partition("#")
        if name.strip():
            out[name.strip()] = reason.strip()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", nargs="?", default=str(ROOT / "mutants"))
    parser.add_argument("--fail-under", type=float, default=None, metavar="PERCENT")
    args = parser.parse_args()
    known = equivalent()
    seen: set[str] = set()
    lowest = 100.0
    print(f"{'module':40} {'killed':>7} {'survived':>8} {'no test':>7} {'equiv.':>6} {'score':>7}")
    for meta in sorted(Path(args.mutants).rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        seen |= set(codes)
        count = Counter()
        for name, code in codes.items():
            kind = ("killed" if code in KILLED else "equivalent" if name in known
                    else "survived" if code in SURVIVED else "no test" if code in NO_TESTS
                    else "other")
            count[kind] += 1
        judged = count["killed"] + count["survived"] + count["no test"]
        score = 100.0 * count["killed"] / judged if judged else 100.0
        lowest = min(lowest, score)
        module = str(meta.relative_to(args.mutants)).removesuffix(".meta")
        print(f"{module:40} {count['killed']:7} {count['survived']:8} {count['no test']:7} "
              f"{count['equivalent']:6} {score:6.1f}%")
    for name in sorted(set(known) - seen):  # the code moved on: the list must follow it
        print(f"stale: {name} is listed as equivalent but is no mutant of this run")
    if args.fail_under is not None and lowest < args.fail_under:
        print(f"a module scores {lowest:.1f}%, under {args.fail_under}%")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
