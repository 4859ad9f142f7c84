#!/usr/bin/env python3
"""A stand-in for the hcpspec binary, for tests/it/action_log.rs: what a process left behind
does to the Action's log.

    late_writer.py run --out DIR ...   |   late_writer.py list --format json   |   late_writer.py --version

`run` writes DIR/junit.xml with one failure whose message holds commands, newlines and `%`
escapes; prints a last line without its newline; then leaves a child holding its stdout that
prints a line `::warning::late` (its newline first, so none is ever last) every 50 ms for 10 s
or until the pipe closes, and exits 1.
"""

import os
import sys
import time
from xml.sax.saxutils import quoteattr

MESSAGE = "first\n::warning::in-a-message\r##[add-mask]x %0A::error::y %25"


def main():
    if sys.argv[1] == "--version":
        print("hcpspec 0.0.0 (late_writer.py)")
        return 0
    if sys.argv[1] == "list":
        print('[{"case": "contract::late", "file": "vectors/contract/late.json"}]')
        return 0
    out = sys.argv[sys.argv.index("--out") + 1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "junit.xml"), "w") as f:
        f.write('<testsuites><testsuite name="contract"><testcase name="contract::late">'
                '<failure message=%s/></testcase></testsuite></testsuites>'
                % quoteattr(MESSAGE).replace("\n", "&#10;").replace("\r", "&#13;"))
    sys.stdout.write("a last line without its newline ::")
    sys.stdout.flush()
    if os.fork() == 0:
        for _ in range(200):
            try:
                sys.stdout.write("\n::warning::late")  # never a newline last
                sys.stdout.flush()
            except BrokenPipeError:
                os._exit(0)
            time.sleep(0.05)
        os._exit(0)
    return 1


if __name__ == "__main__":
    sys.exit(main())
