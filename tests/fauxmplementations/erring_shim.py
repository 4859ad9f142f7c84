#!/usr/bin/env python3
"""An hcpspec shim over stdio whose activation breaks, for tests/it/fuzz_partition.rs.

    erring_shim.py

initialize, runtime.create and runtime.connect succeed and runtime.exec refuses; runtime.activate
answers a JSON-RPC error whose message has two lines ("activate broke" and "second line"), so
that every fuzz case reaching an activation ends in an error; the other methods answer -32601
(not implemented).
"""

import json
import sys


def main():
    n = 0
    for line in sys.stdin:
        msg = json.loads(line)
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        result, error = None, None
        if method == "initialize":
            result = {"protocol": "hcpspec-shim/1", "runtime": {"name": "erring", "version": "1"}, "features": []}
        elif method == "runtime.create":
            n += 1
            result = {"ok": True, "runtime_id": "rt-%d" % n}
        elif method == "runtime.activate":
            error = {"code": -32000, "message": "activate broke\nsecond line"}
        elif method == "runtime.connect":
            result = {"ok": True, "pack_id": params.get("pack_id", "")}
        elif method == "runtime.exec":
            result = {"ok": False, "pack_id": params.get("pack_id", ""),
                      "verb_key": params.get("verb_key", ""), "error": "denied"}
        elif method in ("runtime.dispose", "shutdown"):
            result = {}
        else:
            error = {"code": -32601, "message": "not implemented"}
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
