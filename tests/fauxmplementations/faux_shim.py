#!/usr/bin/env python3
"""A deliberately broken hcpspec shim, for tests/it/transports.rs.

    faux_shim.py [--transport stdio|http|ws] [--die-at-start]

It speaks hcpspec-shim/1 well enough for a tiny case (initialize, runtime.create, runtime.exec,
runtime.dispose, shutdown) and misbehaves on purpose in `runtime.exec`, by verb_key:

    ok             a valid envelope; result {"pid": <this process>}
    hang           never answers
    crash          writes a line to stderr, then exits with status 3
    garbage        answers a line that is not JSON
    wrong-id       answers with another id
    missing-field  an envelope without verb_key
    bad-type       an envelope whose ok is "yes"
    oversize       a 9 MiB answer (the cap is 8 MiB)
    split          a valid answer written in pieces, 50 ms apart (must pass)
    drip           an answer dripped one byte every 200 ms (never in time)
    close          closes the connection (stdio: stdout) without answering
    rpc-error      a JSON-RPC error -32000

runtime.audit answers -32601 (not implemented: the case must be a skip). Over http and ws it
serves on 127.0.0.1, port 0, and prints `listening on URL` as its first stdout line.
"""

import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time

PID = os.getpid()
RUNTIMES = {"n": 0}
LOCK = threading.Lock()


def log(*parts):
    print("faux:", *parts, file=sys.stderr, flush=True)


def answer(rid, result=None, error=None):
    frame = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        frame["error"] = error
    else:
        frame["result"] = result
    return json.dumps(frame)


def handle(text):
    """-> (behaviour, response text or None). behaviour says how to deliver it."""
    msg = json.loads(text)
    rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return "ok", answer(rid, {"protocol": "hcpspec-shim/1", "runtime": {"name": "faux", "version": "0"}, "features": []})
    if method == "runtime.create":
        with LOCK:
            RUNTIMES["n"] += 1
            n = RUNTIMES["n"]
        return "ok", answer(rid, {"ok": True, "runtime_id": "faux-%d" % n})
    if method in ("runtime.dispose", "shutdown"):
        return ("shutdown" if method == "shutdown" else "ok"), answer(rid, {"ok": True})
    if method == "runtime.exec":
        verb = params.get("verb_key", "")
        env = {"ok": True, "pack_id": params.get("pack_id", ""), "verb_key": verb, "result": {"pid": PID}}
        if verb == "wrong-id":
            return "ok", answer(rid + 1000, env)
        if verb == "missing-field":
            del env["verb_key"]
            return "ok", answer(rid, env)
        if verb == "bad-type":
            env["ok"] = "yes"
            return "ok", answer(rid, env)
        if verb == "oversize":
            env["result"] = {"blob": "x" * (9 << 20)}
            return "ok", answer(rid, env)
        if verb == "garbage":
            return "ok", "this is not json {{{"
        if verb == "rpc-error":
            return "ok", answer(rid, error={"code": -32000, "message": "faux refuses"})
        if verb in ("hang", "crash", "split", "drip", "close"):
            return verb, answer(rid, env)
        return "ok", answer(rid, env)
    return "ok", answer(rid, error={"code": -32601, "message": "method not found: %s" % method})


def deliver(behaviour, data, write, close):
    """Send `data` (bytes) the way `behaviour` says, through write(bytes) and close()."""
    if behaviour == "hang":
        time.sleep(3600)
    elif behaviour == "crash":
        log("crashing on purpose during runtime.exec")
        os._exit(3)
    elif behaviour == "close":
        log("closing without an answer")
        close()
        time.sleep(3600)
    elif behaviour == "split":
        third = len(data) // 3
        for part in (data[:third], data[third:2 * third], data[2 * third:]):
            write(part)
            time.sleep(0.05)
    elif behaviour == "drip":
        for i in range(len(data)):
            write(data[i:i + 1])
            time.sleep(0.2)
    else:
        write(data)


def serve_stdio():
    out = sys.stdout.buffer

    def write(b):
        out.write(b)
        out.flush()

    def close():
        os.close(1)

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        behaviour, text = handle(line.decode())
        if text is not None:
            deliver(behaviour, (text + "\n").encode(), write, close)
        if behaviour == "shutdown":
            return


def serve_http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            behaviour, text = handle(body.decode())
            data = text.encode()
            if behaviour in ("hang", "crash", "close"):
                deliver(behaviour, b"", self.wfile.write, lambda: self.connection.shutdown(socket.SHUT_RDWR))
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            deliver(behaviour, data, lambda b: (self.wfile.write(b), self.wfile.flush()), lambda: None)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    print("listening on http://127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


def ws_frame(payload, opcode=1):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


def ws_read(f):
    """One client frame (masked) -> (opcode, payload), or None at end of stream."""
    head = f.read(2)
    if len(head) < 2:
        return None
    opcode, n = head[0] & 0x0F, head[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", f.read(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", f.read(8))[0]
    mask = f.read(4) if head[1] & 0x80 else b"\0\0\0\0"
    data = bytearray(f.read(n))
    for i in range(len(data)):
        data[i] ^= mask[i % 4]
    return opcode, bytes(data)


def ws_connection(conn):
    f = conn.makefile("rb")
    key = None
    while True:
        line = f.readline().decode()
        if line in ("\r\n", ""):
            break
        k, _, v = line.partition(":")
        if k.strip().lower() == "sec-websocket-key":
            key = v.strip()
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode())
    while True:
        frame = ws_read(f)
        if frame is None or frame[0] == 8:
            conn.close()
            return
        if frame[0] != 1:
            continue
        behaviour, text = handle(frame[1].decode())
        deliver(behaviour, ws_frame(text.encode()), conn.sendall, lambda: conn.shutdown(socket.SHUT_RDWR))


def serve_ws():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print("listening on ws://127.0.0.1:%d/faux" % srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=ws_connection, args=(conn,), daemon=True).start()


def main():
    args = sys.argv[1:]
    if "--die-at-start" in args:
        log("cannot start: no runtime configured")
        sys.exit(4)
    transport = args[args.index("--transport") + 1] if "--transport" in args else "stdio"
    log("serving over", transport)
    {"stdio": serve_stdio, "http": serve_http, "ws": serve_ws}[transport]()


if __name__ == "__main__":
    main()
