"""Host shims that misbehave, for tests/host.rs: each is a verdict with evidence within its
deadline, never a hang of hcpspec and never a pass.

python3 hostile_host.py MODE: one JSON-RPC message per line on stdin/stdout."""

import json, sys

MODE = sys.argv[1]
if MODE == "exits":
    sys.exit(1)

for line in sys.stdin:
    req = json.loads(line)
    m = req["method"]
    if MODE == "garbage":
        print("this is not JSON-RPC", flush=True)
        continue
    if MODE == "silent":
        continue
    if MODE == "crashes-on-bind" and m == "host.bind":
        sys.exit(3)
    if MODE == "no-records" and m == "host.records":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "method not found"}}), flush=True)
        continue
    result = {}
    if m == "host.describe":
        result = {"protocol": "hcpspec-host/1", "adapter": {"name": MODE, "version": "0"}}
    elif m == "host.target":
        result = {"compatibilityId": "x", "recovery": ["a", "b"]}
    elif m == "host.bind":
        result = {"session": "s1", "capabilities": []}
    elif m == "host.records":
        result = {"rigs": [], "sessions": [], "admitted": [], "decoded": [], "live": [], "stores": [], "objects": []}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
