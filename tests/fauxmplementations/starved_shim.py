"""A shim the machine starves, for tests/it/deadlines.rs: on each request it shares CPU 0 with
a busy loop of its own at a higher priority (it runs at nice 19, the loop at nice 0), so it
is ready to run most of the time and seldom gets a CPU, then does WORK seconds of CPU work
and answers, saying how long that took in wall time. A deadline that charged the machine's waits
would time it out; one that charges what the shim did (docs/security.md) does not.

python3 starved_shim.py WORK            one JSON-RPC message per line on stdin/stdout
python3 starved_shim.py WORK http|ws    the same served on 127.0.0.1 (POST /rpc, or text frames
                                        on any path): prints its port, then serves"""

import base64, hashlib, json, os, signal, socket, sys, threading, time

WORK = float(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "stdio"
os.sched_setaffinity(0, {0})
parent = os.getpid()
busy = os.fork()
if busy == 0:
    os.sched_setaffinity(0, {0})
    # Busy until the shim is gone, however it ended (a test kills a served one).
    while os.getppid() == parent:
        for _ in range(100000):
            pass
    os._exit(0)
os.nice(19)


def work(seconds):
    """`seconds` of this process's CPU time, however long the machine takes to give it."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def answer(text):
    req = json.loads(text)
    began = time.monotonic()
    work(WORK)
    took = time.monotonic() - began
    return json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"worked": WORK, "wallSeconds": took}})


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            raise EOFError
        data += more
    return data


def read_head(conn):
    head = b""
    while b"\r\n\r\n" not in head:
        more = conn.recv(1)
        if not more:
            raise EOFError
        head += more
    return head.decode("latin-1")


def serve_http(conn):
    while True:
        head = read_head(conn)
        length = next(int(l.split(":", 1)[1]) for l in head.split("\r\n") if l.lower().startswith("content-length:"))
        body = answer(read_exact(conn, length)).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body)


def serve_ws(conn):
    head = read_head(conn)
    key = next(l.split(":", 1)[1].strip() for l in head.split("\r\n") if l.lower().startswith("sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    while True:
        b0, b1 = read_exact(conn, 2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(read_exact(conn, 2), "big")
        elif n == 127:
            n = int.from_bytes(read_exact(conn, 8), "big")
        mask = read_exact(conn, 4) if b1 & 0x80 else b"\0\0\0\0"
        data = bytes(c ^ mask[i % 4] for i, c in enumerate(read_exact(conn, n)))
        if b0 & 0x0F == 8:
            return
        if b0 & 0x0F != 1:
            continue
        out = answer(data).encode()
        size = bytes([len(out)]) if len(out) < 126 else bytes([126]) + len(out).to_bytes(2, "big")
        conn.sendall(bytes([0x81]) + size + out)


try:
    if MODE == "stdio":
        for line in sys.stdin:
            print(answer(line), flush=True)
    else:
        # Served until stdin ends (the test that started it closes it, or is gone).
        def watch():
            sys.stdin.read()
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        print(listener.getsockname()[1], flush=True)
        while True:
            conn, _ = listener.accept()
            try:
                (serve_http if MODE == "http" else serve_ws)(conn)
            except (EOFError, OSError):
                pass
            finally:
                conn.close()
finally:
    os.kill(busy, signal.SIGKILL)
