#!/usr/bin/env python3
"""Every output of a run tells the same truth as its exit code and its result.json.

    scripts/check-outputs.py DIR EXIT

DIR is a run's --out folder and EXIT the code the run exited with. Checks, from the files alone
(docs/reading-results.md):
- junit.xml has a <failure> or <error> exactly when EXIT is 1, and as many as result.json's
  cases that fail the run (summary.must_fail) and parity differences;
- every runtime's summary recounts from its cases (one state per case, one denominator);
- summary.md's total cell of each suite's runtimes says pass/total and the other counts;
- every badge says pass/total;
- index.html's matrix cells carry result.json's counts (scripts/check-report.py's reading,
  without a browser).
"""

import importlib.util
import json
import os
import re
import sys

STATES = ["pass", "fail", "expected-fail", "stale", "skip", "unimplemented", "error", "profile", "not-scored"]
FIELDS = {"expected-fail": "expected_fail", "not-scored": "not_scored"}


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, exit_code = sys.argv[1], int(sys.argv[2])
    problems = []
    with open(os.path.join(out, "result.json")) as f:
        record = json.load(f)
    junit = open(os.path.join(out, "junit.xml")).read()
    top = re.search(r"<testsuites [^>]*>", junit).group(0)
    attr = lambda tag, k: int(re.search(rf' {k}="(\d+)"', tag).group(1))
    red = attr(top, "failures") + attr(top, "errors")
    failing = sum(r["summary"]["must_fail"] for s in record["suites"] for r in s["runtimes"])
    parity = sum(len(s.get("parity", [])) for s in record["suites"])
    if (red > 0) != (exit_code == 1):
        problems.append(f"junit.xml has {red} failures and errors, the run exited {exit_code}")
    if red != failing + parity:
        problems.append(f"junit.xml has {red} failures and errors, result.json {failing} failing cases and {parity} parity differences")
    md = open(os.path.join(out, "summary.md")).read()
    parts = {p.split(" ", 1)[0]: p for p in md.split("## hcpspec ")[1:]}
    for s in record["suites"]:
        part = parts.get(s["suite"], "")
        total_row = next((l for l in part.splitlines() if l.startswith("| **total** |")), "")
        cells = total_row.split(" | ")[1:]
        for i, run in enumerate(s["runtimes"]):
            n = run["summary"]
            n = {k: n.get(k, 0) for k in list(n) + [FIELDS.get(k, k) for k in STATES]}  # older results: no not_scored
            total = sum(n[FIELDS.get(k, k)] for k in STATES)
            if total != len(run["cases"]):
                problems.append(f"{s['suite']} {run['runtime']}: the summary counts {total} of {len(run['cases'])} cases")
            cell = cells[i] if i < len(cells) else ""
            if f"{n['pass']}/{total}" not in cell:
                problems.append(f"{s['suite']} {run['runtime']}: summary.md's total {cell!r} is not {n['pass']}/{total}")
            for k in STATES[1:]:
                if n[FIELDS.get(k, k)] and f"{n[FIELDS.get(k, k)]} {k}" not in cell:
                    problems.append(f"{s['suite']} {run['runtime']}: summary.md's total {cell!r} lacks {n[FIELDS.get(k, k)]} {k}")
    badges = os.path.join(out, "badges")
    for suite in os.listdir(badges):
        for b in os.listdir(os.path.join(badges, suite)):
            with open(os.path.join(badges, suite, b)) as f:
                msg = json.load(f)["message"]
            if not re.fullmatch(r"\d+/\d+ pass", msg):
                problems.append(f"badges/{suite}/{b}: {msg!r}")
    spec = importlib.util.spec_from_file_location("check_report", os.path.join(os.path.dirname(__file__), "check-report.py"))
    cr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cr)
    cells = cr.Cells()
    cells.feed(open(os.path.join(out, "index.html")).read())
    shown = {(c["data-suite"], c["data-runtime"], c["data-section"]): c for c in cells.cells}
    for key, n in cr.expected(record).items():
        cell = shown.get(key)
        got = {k: int(cell.get("data-" + k, -1)) for k in n} if cell else None
        if got != n:
            problems.append(f"index.html {key}: {got}, result.json {n}")
    for p in problems:
        print("check-outputs:", p)
    print(f"check-outputs: {out}: exit {exit_code}, {red} JUnit failures and errors, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
