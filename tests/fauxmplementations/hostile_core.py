"""Control shims of cores that misbehave, for tests/core_hostile.rs: each is a verdict with
evidence within its deadline, never a hang of hcpspec.

python3 hostile_core.py MODE: one JSON-RPC message per line on stdin/stdout."""

import json, socket, sys, threading, time

MODE = sys.argv[1]
if MODE == "exits":
    sys.exit(1)

hang_listener = None
if MODE == "hangs-upgrade":
    # Accepts TCP connections and never answers the upgrade.
    hang_listener = socket.socket()
    hang_listener.bind(("127.0.0.1", 0))
    hang_listener.listen(8)
    held = []
    threading.Thread(target=lambda: [held.append(hang_listener.accept()) for _ in iter(int, 1)], daemon=True).start()

for line in sys.stdin:
    req = json.loads(line)
    if MODE == "garbage":
        print("this is not JSON-RPC", flush=True)
        continue
    if MODE == "silent":
        continue
    result = {}
    if req["method"] == "core.describe":
        result = {"protocol": "hcpspec-core/1", "core": {"name": MODE, "version": "0"}}
    elif req["method"] == "core.start":
        if MODE == "no-listener":
            # A port nothing listens on.
            s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        else:
            port = hang_listener.getsockname()[1]
        result = {"coreUrl": f"ws://127.0.0.1:{port}/nylorun/harness/v1", "gatesUrl": f"http://127.0.0.1:{port}", "harnesses": {"acme-harness": "nylorun-x"}}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
