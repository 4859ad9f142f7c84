#!/usr/bin/env python3
"""A contract shim that implements nothing: it answers `initialize` and -32601 ("method not
found") to everything else. Its error message repeats HCPSPEC_TRACE_CANARY (a value of hcpspec's
environment, which no trace may show) and, with TRACE_FLOOD=1, a megabyte after it."""
import json
import os
import sys

canary = os.environ.get("HCPSPEC_TRACE_CANARY", "")
flood = "x" * (1 << 20) if os.environ.get("TRACE_FLOOD") == "1" else ""
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"result": {"protocol": "hcpspec-shim/2", "runtime": {"name": "nothing", "version": "1"}, "features": []}}
    elif m["method"] == "shutdown":
        r = {"result": {}}
    else:
        r = {"error": {"code": -32601, "message": "method not found " + canary + flood}}
    r.update(jsonrpc="2.0", id=m["id"])
    print(json.dumps(r), flush=True)
