#!/usr/bin/env python3
"""Two runs of the same cases gave the same verdict to every case (no verdict depends on load).

    scripts/same-verdicts.py QUIET LOADED

QUIET and LOADED are two runs' --out folders (or their result.json). Prints each case whose
verdict differs, and exits 1 if any does (or if the runs hold different cases).
"""

import json
import os
import sys


def verdicts(path):
    if os.path.isdir(path):
        path = os.path.join(path, "result.json")
    with open(path) as f:
        record = json.load(f)
    out = {}
    for s in record["suites"]:
        for r in s["runtimes"]:
            for c in r["cases"]:
                out[(r["runtime"], c["name"])] = c["verdict"]
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    quiet, loaded = verdicts(sys.argv[1]), verdicts(sys.argv[2])
    flips = 0
    for key in sorted(quiet.keys() | loaded.keys()):
        a, b = quiet.get(key, "(absent)"), loaded.get(key, "(absent)")
        if a != b:
            flips += 1
            print(f"{key[1]} ({key[0]}): {a} -> {b}")
    print(f"{flips} of {len(quiet)} verdicts differ")
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main())
