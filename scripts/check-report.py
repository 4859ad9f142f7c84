#!/usr/bin/env python3
"""Check the HTML compatibility report as a person would: render it in headless Chromium,
take a screenshot, and check that the matrix the browser shows says what result.json says.

usage: scripts/check-report.py REPORT_DIR   (a directory written by `hcpspec report` or `run`)

Exits 0 when every matrix cell of the rendered page matches result.json, 1 otherwise, 2 when
Chromium is missing (install Debian's `chromium`)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SECTIONS_OF_OLD_RESULTS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "must-not"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


class Cells(HTMLParser):
    """Collects the matrix cells (td with data-runtime) and their visible text."""

    def __init__(self):
        super().__init__()
        self.cells, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-runtime" in a:
            self._cell = {**a, "text": ""}

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None


STATES = ["pass", "fail", "expected-fail", "stale", "skip", "unimplemented", "error", "profile", "not-scored"]


def expected(result):
    """(suite, runtime, section or "total") → {state: count, "drift": n, "new": n, "total": n} from result.json,
    as every rendering counts (docs/reading-results.md)."""
    out = {}
    for suite in result["suites"] if "suites" in result else [result]:
        out.update(expected_of(suite))
    return out


def expected_of(result):
    out = {}
    name = result["suite"]
    # The suite's sections travel in the result (older results: the contract's).
    sections = [s["id"] for s in result.get("sections", [])] or SECTIONS_OF_OLD_RESULTS
    outcome = lambda c: c.get("outcome") or {"pass": "pass", "fail": "fail", "skip": "skip", "unimplemented": "unimplemented", "error": "error"}[c["verdict"]]
    # A PROFILE case a runtime decides otherwise is a state of its own, never a failure.
    state = lambda c: "profile" if c["level"] == "PROFILE" and outcome(c) in ("fail", "error", "unimplemented") else outcome(c)

    def count(cases):
        n = {st: sum(1 for c in cases if state(c) == st) for st in STATES}
        # A changed snapshot is drift; a missing one is new (docs: docs/ci.md "Snapshots").
        drift = lambda c: (c.get("drift") or {}).get("drift")
        n["drift"] = sum(1 for c in cases if drift(c) == "changed")
        n["new"] = sum(1 for c in cases if drift(c) == "new")
        n["total"] = len(cases)
        return n

    for run in result["runtimes"]:
        for s in sections:
            cases = [c for c in run["cases"] if c["section"] == s]
            if cases:
                out[(name, run["runtime"], s)] = count(cases)
        out[(name, run["runtime"], "total")] = count(run["cases"])
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    report = os.path.abspath(sys.argv[1])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("check-report: chromium not found (apt-get install chromium)", file=sys.stderr)
        return 2
    page = "file://" + os.path.join(report, "index.html")
    with open(os.path.join(report, "result.json")) as f:
        result = json.load(f)
    with tempfile.TemporaryDirectory() as profile:
        flags = FLAGS + [f"--user-data-dir={profile}"]
        dom = subprocess.run([chromium, *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120).stdout
        shot = os.path.join(report, "screenshot.png")
        subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=1400,1100", page],
                       capture_output=True, timeout=120)
    parser = Cells()
    parser.feed(dom)
    shown = {(c["data-suite"], c["data-runtime"], c["data-section"]): c for c in parser.cells}
    want = expected(result)
    problems = []
    for key, n in sorted(want.items()):
        cell = shown.get(key)
        if cell is None:
            problems.append(f"{key}: no cell in the rendered matrix")
            continue
        got = {k: int(cell.get("data-" + k, -1)) for k in n}
        if got != n:
            problems.append(f"{key}: page says {got}, result.json says {n}")
        if not cell["text"].strip().startswith(f"{n['pass']}/{n['total']}"):
            problems.append(f"{key}: the visible text {cell['text'].strip()!r} does not start with {n['pass']}/{n['total']}")
    extra = set(shown) - set(want)
    problems += [f"{k}: a cell result.json does not have" for k in sorted(extra)]
    for line in problems:
        print("check-report:", line)
    print(f"check-report: {len(want)} matrix cells checked, {len(problems)} problem(s); screenshot {shot}"
          f" ({os.path.getsize(shot) if os.path.exists(shot) else 0} bytes)")
    return 1 if problems or not os.path.exists(shot) else 0


if __name__ == "__main__":
    sys.exit(main())
