"""Control shims of cores that misbehave, for tests/core_hostile.rs: each is a verdict with
evidence within its deadline, never a hang of hcpspec.

python3 hostile_core.py MODE: one JSON-RPC message per line on stdin/stdout."""

import base64, hashlib, json, socket, sys, threading, time

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
    if MODE == "refuses":
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "method not found"}}), flush=True)
        continue
    result = {}
    if req["method"] == "core.describe":
        result = {"protocol": "hcpspec-core/1", "core": {"name": MODE, "version": "0"}}
    elif req["method"] == "core.start":
        if MODE == "no-listener":
            # A port nothing listens on.
            s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        elif MODE in ("ws-garbage", "closes-mid-frame"):
            hang_listener = ws_core(garbage if MODE == "ws-garbage" else mid_frame)
            port = hang_listener.getsockname()[1]
        else:
            port = hang_listener.getsockname()[1]
        result = {"coreUrl": f"ws://127.0.0.1:{port}/nylorun/harness/v1", "gatesUrl": f"http://127.0.0.1:{port}", "harnesses": {"nylorun": "nylorun-x"}}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
