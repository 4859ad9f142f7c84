#!/usr/bin/env python3
"""A hostile hcpspec shim over stdio, for tests/it/hostile.rs.

    hostile_shim.py [--name NAME] [--size BYTES] [--log FILE]

initialize answers the runtime name NAME (default "..") and a version holding terminal escapes
and markup; runtime.create succeeds; runtime.exec answers a refusal envelope whose error text is
BYTES long (default 7 MiB, under the 8 MiB message cap, so that it reaches the observations);
runtime.activate and runtime.connect succeed; the optional methods answer -32601 (not
implemented) with a BYTES long message. Every method
received is appended to FILE, one per line (to count `initialize`).
"""

import json
import sys


def main():
    args = sys.argv[1:]
    opt = lambda k, d: args[args.index(k) + 1] if k in args else d
    name = opt("--name", "..")
    size = int(opt("--size", str(7 << 20)))
    log = opt("--log", None)
    flood = "E" * size
    n = 0
    for line in sys.stdin:
        msg = json.loads(line)
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if log:
            with open(log, "a") as f:
                f.write(method + "\n")
        result, error = None, None
        if method == "initialize":
            result = {
                "protocol": "hcpspec-shim/1",
                "runtime": {"name": name, "version": "1\x1b[31m<script>alert(1)</script>|`x`\r\x07"},
                "features": [],
            }
        elif method == "runtime.create":
            n += 1
            result = {"ok": True, "runtime_id": "rt-%d" % n}
        elif method == "runtime.exec":
            result = {"ok": False, "pack_id": params.get("pack_id", ""),
                      "verb_key": params.get("verb_key", ""), "error": "confirm " + flood}
        elif method == "runtime.activate":
            result = [{"ok": True, "pack_id": p} for p in params.get("pack_ids", [])]
        elif method == "runtime.connect":
            result = {"ok": True, "pack_id": params.get("pack_id", "")}
        elif method in ("runtime.dispose", "shutdown"):
            result = {}
        else:
            error = {"code": -32601, "message": "not here " + flood}
        frame = {"jsonrpc": "2.0", "id": rid}
        if error is not None:
            frame["error"] = error
        else:
            frame["result"] = result
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()
        if method == "shutdown":
            return


if __name__ == "__main__":
    main()
