"""Implementations that repeat secrets, for tests/it/redaction.rs: the values tests/it/redaction.rs
plants in hcpspec's environment (as strings, as a JSON number, inside a non-JSON line whose
160-byte excerpt cuts one of them at its last byte) and tokens of common secret shapes.

python3 leaky.py MODE, MODE one of contract, host, core: one JSON-RPC message per line.
`contract declares`: the contract shim also declares a redaction whose placeholder spells a
planted value (hcpspec must contain what a declared rule puts in)."""

import json, sys

# The planted values (tests/it/redaction.rs sets them as HCPSPEC_LEAK_*).
QUOTE = 'canary"q\\uote-7d1e2f0a'
CUT = "canary-cut-9a8b7c6d5e4f"
NUM = 8675309123
PLAIN = "canary-plain-4c3b2a1f0e"
# Secret shapes nobody planted.
SHAPES = [
    "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "xoxb-1234567890-abcdefghijkl",
    "xoxp-1234567890-mnopqrstuvwx",
    "AKIAIOSFODNN7LEAKYXX",
    "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed",
    "Bearer leakybearer-0123456789abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeQ",
    "nylorun-rt-1-5f3e2d1c0b9a8877",
]


def leaks():
    """A JSON value holding every leak."""
    return {"plain": PLAIN, "quote": QUOTE, "number": NUM, "numbers": [NUM, NUM], "shapes": " ".join(SHAPES)}


def garbage():
    """A non-JSON line: the quoted secret within the first 160 bytes, and CUT ending at byte 161."""
    head = "not json " + QUOTE + " " + SHAPES[0] + " "
    head += "x" * (161 - len(CUT) - len(head))
    return head + CUT + " and the rest of the line " + PLAIN


def main():
    mode = sys.argv[1]
    n = 0
    for line in sys.stdin:
        req = json.loads(line)
        m, rid, p = req.get("method"), req.get("id"), req.get("params") or {}
        n += 1
        result, error = None, None
        if mode == "contract":
            if m == "initialize":
                result = {"protocol": "hcpspec-shim/1", "runtime": {"name": "leaky", "version": "0"}, "features": []}
                if sys.argv[2:] == ["declares"]:
                    result["redactions"] = [{"pattern": "and the rest", "placeholder": PLAIN + " " + SHAPES[4]}]
            elif m == "runtime.create":
                result = {"ok": True, "runtime_id": "rt-1"}
            elif m in ("runtime.dispose", "shutdown"):
                result = {}
            else:
                print(garbage(), flush=True)
                continue
        elif mode == "host":
            if m == "host.describe":
                result = {"protocol": "hcpspec-host/1", "adapter": {"name": "leaky", "version": "0"}}
            elif n <= 3:
                result = leaks()
            else:
                print(garbage(), flush=True)
                continue
        elif mode == "core":
            if m == "core.describe":
                result = {"protocol": "hcpspec-core/1", "core": {"name": "leaky", "version": "0"}}
            elif m == "core.start":
                error = {"code": -32000, "message": "cannot start: " + json.dumps(leaks()) + " " + "E" * 20000}
            else:
                result = {}
        if error is not None:
            print(json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}), flush=True)
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
        if m == "shutdown":
            return


if __name__ == "__main__":
    main()
