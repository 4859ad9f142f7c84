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


def fast_frame(s, data, opcode=1):
    """A frame with the all-zero mask: its payload goes as it is (fast for big frames)."""
    n = len(data)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    s.sendall(head + b"\0\0\0\0")
    s.sendall(data)


def gate(length):
    """A gate call's head (model-calls) announcing `length` bytes of body (None: chunked); the
    socket."""
    url = urlparse(os.environ["NYLORUN_GATES_URL"])
    s = socket.create_connection((url.hostname, url.port))
    s.sendall(
        (
            f"POST /nylorun/v1/model-calls HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
            "Content-Type: application/json\r\nIdempotency-Key: k1\r\n"
            + (f"Content-Length: {length}\r\n\r\n" if length is not None else "Transfer-Encoding: chunked\r\n\r\n")
        ).encode()
    )
    return s


def hold(s):
    # Heard from (so never dropped for silence): the run is held to the deadline, which is then
    # its one end. Silent, its drop (dropMs after the lease) and its deadline (deadlineMs after
    # the connection) would fall at the same instant, either first.
    while True:
        frame(s, '{"t":"ping"}')
        time.sleep(0.3)


def hello(s):
    frame(s, json.dumps({"t": "req", "id": 1, "m": "hello", "p": {"api": 5, "name": os.environ["HARNESS_NAME"], "version": "0", "features": {}}}))


print(f"hostile harness: {MODE}", file=sys.stderr, flush=True)
if MODE == "never-connects":
    time.sleep(60)
elif MODE == "exits-at-once":
    print("exiting before it connects", file=sys.stderr, flush=True)
    sys.exit(3)
elif MODE == "wrong-path":
    _, status = connect("/wrong")
    print(f"upgrade answered: {status}", file=sys.stderr, flush=True)
    time.sleep(60)
elif MODE == "binary":
    s, _ = connect()
    frame(s, b'{"t":"ping"}', opcode=2)
    time.sleep(60)
elif MODE == "starved":
    # Kept from a CPU by the machine (tests/harness_hostile.rs pins it to the CPU named, beside
    # busy threads of its own): it needs 0.4 s on a CPU before it sends a binary frame, which
    # it is judged for, never the deadline the machine's wait would have run out.
    os.sched_setaffinity(0, {int(sys.argv[2])})
    s, _ = connect()
    start = time.process_time()
    while time.process_time() - start < 0.4:
        pass
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
    hold(s)
elif MODE == "joins-hcpspec-group":
    # Leaves its own process group for hcpspec's (its parent's) and ignores SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.setpgid(0, os.getpgid(os.getppid()))
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()}\n")
    s, _ = connect()
    hello(s)
    frame(s, json.dumps({"t": "req", "id": 2, "m": "lease", "p": {}}))
    hold(s)
elif MODE == "setsid-grandchild":
    # A child in a session of its own, and a double-forked daemon (its parent exits at once, so
    # it is an orphan), both ignoring SIGTERM; the harness itself holds its run, pinging.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        os.write(w, f"{os.getpid()} ".encode())
        time.sleep(60)
        os._exit(0)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, f"{os.getpid()} ".encode())
            time.sleep(60)
            os._exit(0)
        os._exit(0)
    pids = b""
    while pids.count(b" ") < 2:
        pids += os.read(r, 64)
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()} {pids.decode()}\n")
    s, _ = connect()
    hello(s)
    frame(s, json.dumps({"t": "req", "id": 2, "m": "lease", "p": {}}))
    hold(s)
elif MODE == "stderr-without-newline":
    # 3 GB of stderr and never a newline (connected first: its scenario's clock runs).
    conn = connect()
    chunk = b"E" * (1 << 20)
    try:
        for _ in range(3 << 10):
            sys.stderr.buffer.write(chunk)
    except OSError:
        pass
    time.sleep(60)
elif MODE == "big-frame-flood":
    # 16 MiB frames, each one JSON message, 3 GB in all: far fewer frames than the count cut.
    s, _ = connect()
    hello(s)
    pad = b"A" * (16 << 20)
    data = b'{"t":"msg","m":"log","p":{"pad":"' + pad + b'"}}'
    try:
        for i in range(192):
            fast_frame(s, data)
    except OSError:
        pass
    time.sleep(60)
elif MODE == "never-reads":
    # Requests whose answers are big (core echoes an unknown method's name), never reading one.
    s, _ = connect()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    hello(s)
    # 8 MiB answers: the 64 MiB queue cap is passed after 9 of them, however slowly hcpspec
    # takes each (1 MiB answers made the count of requests sent before the deadline load-bound).
    name = "x" * (8 << 20)
    try:
        for i in range(40):
            fast_frame(s, json.dumps({"t": "req", "id": 10 + i, "m": name, "p": {}}).encode())
    except OSError:
        pass
    time.sleep(60)
elif MODE == "slow-gate-body":
    # A gate call whose body comes one byte a second.
    s = gate(1000)
    try:
        for _ in range(1000):
            s.sendall(b" ")
            time.sleep(1)
    except OSError:
        pass
    time.sleep(60)
elif MODE == "huge-gate-body":
    # A gate call sending a 3 GB body, chunked (no length announced: it must be read to be cut).
    s = gate(None)
    chunk = b"100000\r\n" + b" " * (1 << 20) + b"\r\n"
    try:
        for _ in range(3 << 10):
            s.sendall(chunk)
    except OSError:
        pass
    time.sleep(60)
elif MODE == "chatty":
    # Many small, valid messages: under the flood cut, each one an observation.
    s, _ = connect()
    hello(s)
    for i in range(5000):
        frame(s, json.dumps({"t": "msg", "m": "log", "p": {"i": i, "text": "chatter " * 20}}))
    time.sleep(60)
elif MODE == "crashes":
    s, _ = connect()
    hello(s)
    print("panic: the harness fell over", file=sys.stderr, flush=True)
    sys.exit(3)
elif MODE == "leaks":
    # Repeats the secrets tests/it/redaction.rs planted, its own token and secret-shaped tokens, in
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
