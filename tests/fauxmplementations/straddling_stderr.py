#!/usr/bin/env python3
"""Stderr lines whose secrets straddle hcpspec's cut of a kept line, for tests/it/hostile.rs.

    straddling_stderr.py shim WIDTH      a contract stdio shim: answers initialize, then writes
                                         the lines and exits 3 at its next request
    straddling_stderr.py harness WIDTH   a harness: writes the lines and exits 3 at once

The lines: WIDTH - 10 bytes of `A` then $STRADDLED_SECRET (a value of hcpspec's environment),
and WIDTH - 21 bytes of `B`, a space, then a GitHub token's shape (`ghp_` and 36 letters)."""

import json
import os
import sys


def lines(width):
    sys.stderr.write("A" * (width - 10) + os.environ.get("STRADDLED_SECRET", "") + "\n")
    sys.stderr.write("B" * (width - 21) + " ghp_" + "Q" * 36 + "\n")
    sys.stderr.flush()
    sys.exit(3)


role, width = sys.argv[1], int(sys.argv[2])
if role == "harness":
    lines(width)
for line in sys.stdin:
    req = json.loads(line)
    if req["method"] == "initialize":
        answer = {"protocol": "hcpspec-shim/2", "runtime": {"name": "straddling", "version": "0"}, "features": []}
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": answer}), flush=True)
        continue
    lines(width)
