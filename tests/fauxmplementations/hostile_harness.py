"""Harnesses that misbehave, for tests/harness_hostile.rs: each is a verdict with evidence
within the scenario's deadline, never a hang of hcpspec, and its processes are always reaped.

python3 hostile_harness.py MODE, under the launch contract's variables. A minimal WebSocket
client by hand (the standard library only)."""

import base64, json, os, signal, socket, struct, subprocess, sys, time
from urllib.parse import urlparse

MODE = sys.argv[1]


def connect(path=None):
    url = urlparse(os.environ["NYLORUN_CORE_URL"])
    s = socket.create_connection((url.hostname, url.port))
    key = base64.b64encode(os.urandom(16)).decode()
    req = (
        f"GET {path or url.path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {os.environ['NYLORUN_HARNESS_TOKEN']}\r\n"
        "Nylorun-Harness-Api: 1\r\n\r\n"
    )
    s.sendall(req.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1024)
        if not chunk:
            break
        head += chunk
    return s, head.split(b"\r\n")[0].decode(errors="replace")


def frame(s, payload, opcode=1):
    data = payload.encode() if isinstance(payload, str) else payload
    mask = os.urandom(4)
    n = len(data)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def hello(s):
    frame(s, json.dumps({"t": "req", "id": 1, "m": "hello", "p": {"api": 5, "name": os.environ["HARNESS_NAME"], "version": "0", "features": {}}}))


print(f"hostile harness: {MODE}", file=sys.stderr, flush=True)
if MODE == "never-connects":
    time.sleep(60)
elif MODE == "wrong-path":
    _, status = connect("/wrong")
    print(f"upgrade answered: {status}", file=sys.stderr, flush=True)
    time.sleep(60)
elif MODE == "binary":
    s, _ = connect()
    frame(s, b'{"t":"ping"}', opcode=2)
    time.sleep(60)
elif MODE == "not-json":
    s, _ = connect()
    frame(s, "hello, core")
    time.sleep(60)
elif MODE == "floods":
    s, _ = connect()
    hello(s)
    try:
        for i in range(40000):
            frame(s, '{"t":"ping"}')
    except OSError:
        pass
    time.sleep(60)
elif MODE == "hangs-ignoring-sigterm":
    # Takes a run and never answers; ignores SIGTERM; leaves a child of its own behind.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "60"])
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    s, _ = connect()
    hello(s)
    frame(s, json.dumps({"t": "req", "id": 2, "m": "lease", "p": {}}))
    while True:
        time.sleep(1)
elif MODE == "crashes":
    s, _ = connect()
    hello(s)
    print("panic: the harness fell over", file=sys.stderr, flush=True)
    sys.exit(3)
elif MODE == "leaks":
    # Repeats the secrets tests/redaction.rs planted, its own token and secret-shaped tokens, in
    # stderr and in frames, then falls over.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import leaky

    print("leaking: " + json.dumps(leaky.leaks()) + " " + os.environ["NYLORUN_HARNESS_TOKEN"], file=sys.stderr, flush=True)
    print(leaky.garbage(), file=sys.stderr, flush=True)
    s, _ = connect()
    hello(s)
    frame(s, json.dumps({"t": "req", "id": 2, "m": "lease", "p": leaky.leaks()}))
    frame(s, json.dumps({"t": "msg", "m": "log", "p": {"token": os.environ["NYLORUN_HARNESS_TOKEN"], **leaky.leaks()}}))
    time.sleep(0.3)
    sys.exit(3)
