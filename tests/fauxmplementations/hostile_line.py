"""A shim (core or host: it answers any method) that misbehaves at the line level, for
tests/it/stdio_lines.rs: each misbehaviour is an error naming what the shim did, within the call's
deadline, in bounded memory.

python3 hostile_line.py MODE: one JSON-RPC message per line on stdin/stdout."""

import json, sys, time

MODE = sys.argv[1]
out = sys.stdout.buffer

for line in sys.stdin:
    req = json.loads(line)
    answer = json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {}}).encode()
    if MODE == "notifies":
        # A notification every 100 ms, never an answer.
        while True:
            out.write(b'{"jsonrpc": "2.0", "method": "tick", "params": {}}\n')
            out.flush()
            time.sleep(0.1)
    elif MODE == "endless-line":
        # One line that never ends (the reader must not hold it: 3 GB would be 3 GB).
        chunk = b"x" * (1 << 16)
        while True:
            out.write(chunk)
            out.flush()
    elif MODE == "bad-utf8":
        out.write(b'{"jsonrpc": "2.0", "id": ' + str(req["id"]).encode() + b', "result": {"name": "\xff\xfe"}}\n')
        out.flush()
    elif MODE == "wrong-id":
        out.write(json.dumps({"jsonrpc": "2.0", "id": req["id"] + 100, "result": {}}).encode() + b"\n")
        out.flush()
    elif MODE == "notifies-then-answers":
        for _ in range(3):
            out.write(b'{"jsonrpc": "2.0", "method": "tick", "params": {}}\n')
        out.write(answer + b"\n")
        out.flush()
