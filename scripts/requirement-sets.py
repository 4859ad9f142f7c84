#!/usr/bin/env python3
"""Compute a protocol version's frozen requirement set from git history (docs/vectors.md,
"Requirement sets"): the cases whose file was first added at its path on or before the day the
version's text was first published (docs/CHANGELOG.md). Prints the case names, one per line.

    python3 scripts/requirement-sets.py SUITE YYYY-MM-DD [HCPSPEC]

Run once, when a version is frozen; the list is then kept in vectors/SUITE/suite.json (`requirements`) and
never recomputed (a case added later belongs to the newer version only)."""

import json
import subprocess
import sys


def first_added(path):
    """The day the file was first added at this path, in any commit or by a merge (renames not
    followed: a case renamed or copied from another is a new case), or None for a file git does
    not know (not committed yet)."""
    out = subprocess.run(
        ["git", "log", "--diff-filter=A", "--no-renames", "--diff-merges=first-parent",
         "--name-only", "--format=@%aI", "--", path],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    days = sorted(w[1:11] for w in out if w.startswith("@"))
    return days[0] if days else None


def main():
    suite, cutoff = sys.argv[1], sys.argv[2]
    hcpspec = sys.argv[3] if len(sys.argv) > 3 else "target/debug/hcpspec"
    listed = subprocess.run(
        [hcpspec, "list", "--suite", suite, "--format", "json", "--vectors", "vectors"],
        check=True, capture_output=True, text=True,
    ).stdout
    for case in json.loads(listed):
        day = first_added(case["file"])
        if day is not None and day <= cutoff:
            print(case["case"])


if __name__ == "__main__":
    main()
