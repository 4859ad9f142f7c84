#!/usr/bin/env python3
"""A shim written to an older protocol version, made from any stdio shim: it starts CMD and
passes every line through, but
- states VERSION wherever CMD's answer states a protocol (initialize, core.describe,
  host.describe);
- answers -32601 ("not implemented") to each method named by --lacks, as a shim written before
  those methods would;
- with --no-failure-member, drops `failure` from core.start's answer, as a core written to
  hcpspec-core/1 (which had no such member) would.

    older_version.py VERSION [--lacks METHOD]... [--no-failure-member] -- CMD ARG...
"""

import json
import subprocess
import sys
import threading


def main():
    args = sys.argv[1:]
    cut = args.index("--")
    opts, cmd = args[:cut], args[cut + 1:]
    version, lacks, no_failure = opts[0], set(), False
    i = 1
    while i < len(opts):
        if opts[i] == "--lacks":
            lacks.add(opts[i + 1])
            i += 2
        elif opts[i] == "--no-failure-member":
            no_failure = True
            i += 1
        else:
            sys.exit(f"older_version.py: unknown option {opts[i]}")
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    methods = {}
    out_lock = threading.Lock()

    def say(msg):
        with out_lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def answers():
        for line in child.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                with out_lock:
                    sys.stdout.write(line)
                    sys.stdout.flush()
                continue
            result = msg.get("result") if isinstance(msg, dict) else None
            if isinstance(result, dict):
                if isinstance(result.get("protocol"), str):
                    result["protocol"] = version
                if no_failure and methods.get(json.dumps(msg.get("id"))) == "core.start":
                    result.pop("failure", None)
            say(msg)

    threading.Thread(target=answers, daemon=True).start()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("method") in lacks and "id" in msg:
            say({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"{msg['method']}: not in this shim's version"}})
            continue
        if isinstance(msg, dict) and "id" in msg:
            methods[json.dumps(msg["id"])] = msg.get("method")
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    child.wait()


if __name__ == "__main__":
    main()
