"""Control shims of cores that misbehave, for tests/it/core_hostile.rs and tests/core_caps.rs: each
is a verdict with evidence within its deadline, never a hang of hcpspec.

python3 hostile_core.py MODE: one JSON-RPC message per line on stdin/stdout.

The flood modes try to send far more than 1 GiB (a 3 GB gate body, endless frames or pings) and
stop when hcpspec stops reading (a send that fails or blocks until the process is killed):

- gate-huge: the gates answer 200 with a 3 GB body; gate-drip: 200, then one byte a second;
- ws-flood: after the first frame, endless 64 KiB frames that answer nothing;
- ping-flood: after the first frame, endless pings and never an answer;
- huge-frame: after the first frame, the head of one 3 GB text frame, then its bytes;
- deaf: upgrades and never sends a frame;
- echo: any other control method answers its params;
- refuses-long, start-fails-long: -32601 / -32000 errors with a 7 MiB message;
- deep-pointers: core.start answers a purposeAt of `/a` x 5000 (10 KB) and a member deepPad of
  the same pointer (a case reads it as `${core.deepPad}`), on a core that upgrades and is deaf;
- deep-failure: echo, with a declared failure form of `$deep` nested 14 deep."""

import base64, hashlib, json, os, socket, sys, threading, time

MODE = sys.argv[1]
if MODE == "exits":
    sys.exit(1)


def ws_core(on_frame):
    """A listener that upgrades any WebSocket (RFC 6455 handshake, by hand) and calls
    on_frame(conn) at the first frame the harness sends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve(conn):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            if not chunk:
                return
            head += chunk
        key = [l.split(b":", 1)[1].strip() for l in head.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
        accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        if conn.recv(65536):
            on_frame(conn)

    threading.Thread(target=lambda: [threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start() for _ in iter(int, 1)], daemon=True).start()
    return listener


def garbage(conn):
    # Text frames that are not JSON, never an answer; then it stays open.
    for _ in range(3):
        conn.sendall(b"\x81\x0ethis is no res")
    time.sleep(30)


def mid_frame(conn):
    # The head of a 256-byte text frame, two bytes of it, and the connection closed.
    conn.sendall(b"\x81\x7e\x01\x00ab")
    conn.close()

def frame(payload, opcode=0x81):
    n = len(payload)
    if n < 126:
        head = bytes([opcode, n])
    elif n < 65536:
        head = bytes([opcode, 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([opcode, 127]) + n.to_bytes(8, "big")
    return head + payload


def endless(conn, data):
    # Until hcpspec stops reading (the send fails, or blocks until this process is killed).
    try:
        while True:
            conn.sendall(data)
    except OSError:
        pass


def ws_flood(conn):
    endless(conn, frame(json.dumps({"t": "msg", "m": "flood", "p": {"x": "F" * 65536}}).encode()) * 16)


def ping_flood(conn):
    endless(conn, frame(b'{"t":"ping"}') * 4096)


def huge_frame(conn):
    conn.sendall(b"\x81\x7f" + (3 << 30).to_bytes(8, "big"))
    endless(conn, b"x" * (1 << 20))


def deaf(conn):
    time.sleep(120)


def http_core(answer):
    """A gates listener: reads a request head, then answer(conn)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve(conn):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(65536)
            if not chunk:
                return
            head += chunk
        answer(conn)

    threading.Thread(target=lambda: [threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start() for _ in iter(int, 1)], daemon=True).start()
    return listener


def gate_huge(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 3000000000\r\n\r\n")
    endless(conn, b"[" * (1 << 20))


def gate_drip(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n")
    try:
        for _ in range(1000):
            conn.sendall(b" ")
            time.sleep(1)
    except OSError:
        pass


def gate_closes(conn):
    # Ends the connection with no answer, as a core may to abort a call.
    conn.close()


WS_MODES = {"ws-garbage": garbage, "closes-mid-frame": mid_frame, "ws-flood": ws_flood,
            "ping-flood": ping_flood, "huge-frame": huge_frame, "deaf": deaf, "deep-pointers": deaf}
LONG = "E" * (7 << 20)

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
    if MODE == "garbage-but-describe" and req["method"] != "core.describe":
        # Answers its describe, then garbage (which kind varies by process): no JSON, a wrong
        # id, no JSON-RPC.
        turn = os.getpid() + (req["id"] if isinstance(req["id"], int) else 0)
        print(["this is not JSON-RPC", json.dumps({"jsonrpc": "2.0", "id": "not-yours", "result": {}}),
               json.dumps({"garbage": True})][turn % 3], flush=True)
        continue
    if MODE == "refuses":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "method not found"}}), flush=True)
        continue
    if MODE == "refuses-long" and req["method"] != "core.describe":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "not found " + LONG}}), flush=True)
        continue
    if MODE == "start-fails-long" and req["method"] == "core.start":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": "cannot start " + LONG}}), flush=True)
        continue
    result = {}
    if req["method"] == "core.describe":
        result = {"protocol": "hcpspec-core/2" if MODE == "deep-pointers" else "hcpspec-core/1", "core": {"name": MODE, "version": "0"}}
    elif req["method"] == "core.start":
        if MODE == "no-listener":
            # A port nothing listens on.
            s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        elif MODE in WS_MODES:
            hang_listener = ws_core(WS_MODES[MODE])
            port = hang_listener.getsockname()[1]
        elif MODE in ("gate-huge", "gate-drip", "gate-closes"):
            hang_listener = http_core({"gate-huge": gate_huge, "gate-drip": gate_drip, "gate-closes": gate_closes}[MODE])
            port = hang_listener.getsockname()[1]
        elif MODE in ("echo", "deep-failure"):
            port = 9
        else:
            port = hang_listener.getsockname()[1]
        result = {"coreUrl": f"ws://127.0.0.1:{port}/nylorun/harness/v1", "gatesUrl": f"http://127.0.0.1:{port}", "harnesses": {"nylorun": "nylorun-x"}}
        if MODE == "deep-failure":
            # A failure form of $deep nested 14 deep; its control calls echo their params.
            form = {"leaf": "nope"}
            for _ in range(14):
                form = {"$deep": form}
            result["failure"] = form
        if MODE == "deep-pointers":
            result["purposeAt"] = "/a" * 5000
            result["deepPad"] = "/a" * 5000
    elif req["method"] not in ("core.describe", "core.stop") and MODE in ("echo", "deep-failure"):
        result = req.get("params") or {}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
