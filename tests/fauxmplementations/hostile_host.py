"""Host shims that misbehave, for tests/it/host.rs: each is a verdict with evidence within its
deadline, never a hang of hcpspec and never a pass.

python3 hostile_host.py MODE [ARG]: one JSON-RPC message per line on stdin/stdout.

- other-protocol: states hcpspec-host/9, a protocol hcpspec does not speak;
- refuses-long: -32601 to host.bind with a 7 MiB message;
- exits-after N: every process exits at its N-th request (a shim that dies mid-case, always);
- dies-after FILE N: answers until N requests in all were made of every process counted in
  FILE, then exits at any request (a shim that dies part way through a fuzz run, for good);
- garbage-but-describe: answers host.describe well and every other request with a line that
  is not JSON-RPC (no fuzz trial can be played, yet the shim is reachable)."""

import json, os, sys

MODE = sys.argv[1]
if MODE == "exits":
    sys.exit(1)
seen = 0

for line in sys.stdin:
    req = json.loads(line)
    m = req["method"]
    seen += 1
    if MODE == "exits-after" and seen >= int(sys.argv[2]):
        sys.exit(4)
    if MODE == "dies-after":
        with open(sys.argv[2], "a+") as f:
            f.write("x")
            f.seek(0)
            if len(f.read()) > int(sys.argv[3]):
                sys.exit(4)
    if MODE == "refuses-long" and m == "host.bind":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "not found " + "E" * (7 << 20)}}), flush=True)
        continue
    if MODE == "garbage" or (MODE == "garbage-but-describe" and m != "host.describe"):
        print("this is not JSON-RPC", flush=True)
        continue
    if MODE == "silent":
        continue
    if MODE == "crashes-on-bind" and m == "host.bind":
        sys.exit(3)
    # A shim of the reference's Core: hcpspec encodes bodies itself (docs/host-protocol.md § 2).
    if m == "host.encode" or (MODE == "no-records" and m == "host.records"):
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "method not found"}}), flush=True)
        continue
    result = {}
    if m == "host.describe":
        said = "hcpspec-host/9" if MODE == "other-protocol" else "hcpspec-host/1"
        result = {"protocol": said, "adapter": {"name": MODE, "version": "0"}}
    elif m == "host.target":
        result = {"compatibilityId": "x", "recovery": ["a", "b"]}
    elif m == "host.bind":
        result = {"session": "s1", "capabilities": []}
    elif m == "host.records":
        result = {"rigs": [], "sessions": [], "admitted": [], "decoded": [], "live": [], "stores": [], "objects": []}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
