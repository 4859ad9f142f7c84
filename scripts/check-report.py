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


def expected(result):
    """(runtime, section) → (pass, fail, skip, total) from result.json, as the matrix counts."""
    out = {}
    # The suite's sections travel in the result (older results: the contract's).
    sections = [s["id"] for s in result.get("sections", [])] or SECTIONS_OF_OLD_RESULTS
    outcome = lambda c: c.get("outcome") or {"pass": "pass", "fail": "fail", "skip": "skip", "unimplemented": "unimplemented", "error": "error"}[c["verdict"]]
    # A PROFILE case a runtime decides otherwise is reported apart, in no cell's count.
    profile = lambda c: c["level"] == "PROFILE" and outcome(c) in ("fail", "error", "unimplemented")
    for run in result["runtimes"]:
        for s in sections:
            cases = [c for c in run["cases"] if c["section"] == s and not profile(c)]
            if not cases:
                continue
            n = lambda *os_: sum(1 for c in cases if outcome(c) in os_)
            out[(run["runtime"], s)] = (n("pass"), n("fail", "error", "stale"), n("skip", "unimplemented", "expected-fail"), len(cases))
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
    shown = {(c["data-runtime"], c["data-section"]): c for c in parser.cells}
    want = expected(result)
    problems = []
    for key, (p, f, s, total) in sorted(want.items()):
        cell = shown.get(key)
        if cell is None:
            problems.append(f"{key}: no cell in the rendered matrix")
            continue
        got = (int(cell["data-pass"]), int(cell["data-fail"]), int(cell["data-skip"]), int(cell["data-total"]))
        if got != (p, f, s, total):
            problems.append(f"{key}: page says pass/fail/skip/total {got}, result.json says {(p, f, s, total)}")
        if not cell["text"].strip().startswith(f"{p}/{total}"):
            problems.append(f"{key}: the visible text {cell['text'].strip()!r} does not start with {p}/{total}")
    extra = set(shown) - set(want)
    problems += [f"{k}: a cell result.json does not have" for k in sorted(extra)]
    for line in problems:
        print("check-report:", line)
    print(f"check-report: {len(want)} matrix cells checked, {len(problems)} problem(s); screenshot {shot}"
          f" ({os.path.getsize(shot) if os.path.exists(shot) else 0} bytes)")
    return 1 if problems or not os.path.exists(shot) else 0


if __name__ == "__main__":
    sys.exit(main())
