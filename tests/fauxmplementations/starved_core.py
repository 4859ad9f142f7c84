"""A control shim whose core the machine starves, for tests/it/deadlines.rs: core.start forks the
core (a child of the shim's), which shares CPU 0 with a busy loop of its own at a higher
priority (the core runs at nice 19, the loop at nice 0), so it is ready to run most of the time
and seldom gets a CPU. The core upgrades any WebSocket and answers each request after WORK
seconds of CPU work, saying how long that took in wall time. A core-api wait that charged the
machine's waits would time it out; one that charges what the core did (docs/security.md) does
not.

python3 starved_core.py WORK: one JSON-RPC message per line on stdin/stdout."""

import base64, hashlib, json, os, signal, socket, sys, time

WORK = float(sys.argv[1])


def work(seconds):
    """`seconds` of this process's CPU time, however long the machine takes to give it."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def recv_exactly(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_frame(conn):
    """One masked client frame's payload (RFC 6455)."""
    head = recv_exactly(conn, 2)
    n = head[1] & 0x7F
    if n == 126:
        n = int.from_bytes(recv_exactly(conn, 2), "big")
    elif n == 127:
        n = int.from_bytes(recv_exactly(conn, 8), "big")
    mask = recv_exactly(conn, 4) if head[1] & 0x80 else b"\0\0\0\0"
    return bytes(b ^ mask[i % 4] for i, b in enumerate(recv_exactly(conn, n)))


def frame(payload):
    n = len(payload)
    head = bytes([0x81, n]) if n < 126 else bytes([0x81, 126]) + n.to_bytes(2, "big")
    return head + payload


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
    while True:
        req = json.loads(read_frame(conn))
        began = time.monotonic()
        work(WORK)
        took = time.monotonic() - began
        answer = {"t": "res", "id": req["id"], "ok": True, "r": {"worked": WORK, "wallSeconds": took}}
        conn.sendall(frame(json.dumps(answer).encode()))


def core(listener):
    os.sched_setaffinity(0, {0})
    busy = os.fork()
    if busy == 0:
        while True:
            pass
    os.nice(19)
    try:
        while True:
            conn, _ = listener.accept()
            try:
                serve(conn)
            except (EOFError, OSError, ValueError):
                pass
    finally:
        os.kill(busy, signal.SIGKILL)


child = None
for line in sys.stdin:
    req = json.loads(line)
    result = {}
    if req["method"] == "core.describe":
        result = {"protocol": "hcpspec-core/1", "core": {"name": "starved", "version": "0"}}
    elif req["method"] == "core.start":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        child = os.fork()
        if child == 0:
            sys.stdin.close()
            core(listener)
            os._exit(0)
        port = listener.getsockname()[1]
        result = {"coreUrl": f"ws://127.0.0.1:{port}/nylorun/harness/v1", "gatesUrl": f"http://127.0.0.1:{port}", "harnesses": {"nylorun": "nylorun-x"}}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
if child:
    os.kill(child, signal.SIGKILL)
