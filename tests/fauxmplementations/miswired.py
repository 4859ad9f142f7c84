#!/usr/bin/env python3
"""A contract shim wired the ways a first shim often is (docs/shim-protocol.md, "When the shim
does not connect"): it answers `initialize` and -32601 to everything else, but

    miswired.py logs      prints a log line on stdout before its answers
    miswired.py chatty    prints a debug line on stdout before each answer but initialize's
    miswired.py noflush   never flushes stdout (block-buffered: its answers stay in the buffer)
    miswired.py old       states a protocol version hcpspec does not speak (hcpspec-shim/0)
"""

import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else ""
# Its own buffer on fd 1, so PYTHONUNBUFFERED (or -u) cannot flush it.
out = open(1, "wb", buffering=1 << 16, closefd=False) if mode == "noflush" else None
if mode == "logs":
    print("starting toy shim 0.3.0", flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        proto = "hcpspec-shim/0" if mode == "old" else "hcpspec-shim/2"
        r = {"protocol": proto, "runtime": {"name": "toy", "version": "0.3.0"}, "features": []}
        a = {"jsonrpc": "2.0", "id": m["id"], "result": r}
    elif m["method"] == "shutdown":
        a = {"jsonrpc": "2.0", "id": m["id"], "result": {}}
    else:
        a = {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "method not found"}}
    if mode == "chatty" and m["method"] != "initialize":
        print("debug: got", m["method"], flush=True)
    if out is not None:
        out.write((json.dumps(a) + "\n").encode())
    else:
        print(json.dumps(a), flush=True)
