#!/usr/bin/env python3
"""A stdio shim that says every GitHub workflow command it can, for tests/it/action_log.rs.

    log_injector.py

initialize answers a runtime whose name and version hold commands; runtime.exec writes commands
to stderr (one a line, indented, after a CR, behind `%0A`, legacy `##[...]` anywhere in a line,
`::stop-commands::` both ways) and exits, so that each case is an error whose message and the
terminal's "last stderr lines" carry them; it also writes to the step's files if it finds them.
Links for the step summary ride along.
"""

import json
import os
import sys

COMMANDS = [
    "::set-env name=X::y",
    "::save-state name=s::v",
    "::group::g",
    "::abc::",
    "see https://evil.example/x, http://evil.example and www.evil.example",
    "%0A::error::pct",
    "cr\r::error::after-cr",
    "::error title=fake,file=README.md::embedded",
    "::set-output name=x::y",
    "::notice title=n::n",
    "##[warning]legacy",
    "text ##[add-mask]inline",
    "::stop-commands::abc",
    "##[stop-commands]def",
    "::warning::x",
    "  ::add-mask::hcpspec",
]
EVIL = "\n".join(COMMANDS)


def main():
    for var in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY", "GITHUB_PATH", "GITHUB_STATE"):
        if os.environ.get(var):
            with open(os.environ[var], "a") as f:
                f.write("injected=by-the-implementation\n")
    n = 0
    for line in sys.stdin:
        msg = json.loads(line)
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        result, error = None, None
        if method == "initialize":
            result = {"protocol": "hcpspec-shim/1",
                      "runtime": {"name": "evil\n::warning::name", "version": "1\n" + EVIL},
                      "features": []}
        elif method == "runtime.create":
            n += 1
            result = {"ok": True, "runtime_id": "rt-%d" % n}
        elif method == "runtime.exec":
            sys.stderr.write(EVIL + "\n" + EVIL)  # the last line without its newline
            sys.stderr.flush()
            sys.exit(5)
        elif method == "runtime.activate":
            result = [{"ok": True, "pack_id": p} for p in params.get("pack_ids", [])]
        elif method == "runtime.connect":
            result = {"ok": True, "pack_id": params.get("pack_id", "")}
        elif method in ("runtime.dispose", "shutdown"):
            result = {}
        else:
            error = {"code": -32601, "message": EVIL}
        frame = {"jsonrpc": "2.0", "id": rid}
        if error is not None:
            frame["error"] = error
        else:
            frame["result"] = result
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()
        if method == "shutdown":
            return


if __name__ == "__main__":
    main()
