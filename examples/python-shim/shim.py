#!/usr/bin/env python3
"""An hcpspec shim over stdio for minihcp: protocol `hcpspec-shim/2`.

JSON-RPC 2.0, one message per line: requests on stdin, responses on stdout, logs on stderr.
This file knows the protocol and nothing about HCP; every method below is one call into the
runtime (minihcp.py). To put your own runtime behind hcpspec, keep this file and change the
bodies of the `m_*` methods.

    python3 shim.py                    # minihcp as hcpspec's reference reads the spec
    python3 shim.py --reading other    # minihcp-other: every open point decided the other way
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback

sys.dont_write_bytecode = True  # leave no __pycache__ beside the shim
import minihcp  # noqa: E402

PROTOCOL = "hcpspec-shim/2"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601  # also: "this optional method is not implemented" (hcpspec skips)
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNKNOWN_RUNTIME = -32001


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def log(*parts):
    print("shim:", *parts, file=sys.stderr, flush=True)


# --- params: check the shapes, answer -32602 when they do not fit ------------------------------

_ABSENT = object()


class Params:
    def __init__(self, raw, where: str = "params"):
        if not isinstance(raw, dict):
            raise RpcError(INVALID_PARAMS, f"invalid params: {where} must be an object")
        self.raw, self.where = raw, where

    def _get(self, key, kinds, what, default):
        v = self.raw.get(key, _ABSENT)
        if v is _ABSENT or (v is None and default is not _ABSENT):
            if default is _ABSENT:
                raise RpcError(INVALID_PARAMS, f"invalid params: {self.where}.{key} is required")
            return default
        if not isinstance(v, kinds) or (bool not in kinds and isinstance(v, bool)):
            raise RpcError(INVALID_PARAMS, f"invalid params: {self.where}.{key} must be {what}")
        return v

    def str(self, key, default=_ABSENT):
        return self._get(key, (str,), "a string", default)

    def bool(self, key, default=_ABSENT):
        return self._get(key, (bool,), "a boolean", default)

    def obj(self, key, default=_ABSENT) -> dict:
        return self._get(key, (dict,), "an object", default)

    def nested(self, key) -> Params:
        return Params(self.obj(key), f"{self.where}.{key}")

    def strs(self, key, default=_ABSENT) -> list[str] | None:
        v = self._get(key, (list,), "an array of strings", default)
        if v is not None and not all(isinstance(x, str) for x in v):
            raise RpcError(INVALID_PARAMS, f"invalid params: {self.where}.{key} must be an array of strings")
        return v

    def items(self, key, default) -> list[Params]:
        v = self._get(key, (list,), "an array", default)
        return [Params(x, f"{self.where}.{key}[{i}]") for i, x in enumerate(v or [])]


def config_from(p: Params) -> minihcp.Config:
    principal = p.nested("principal")
    hub = {}
    for pack_id, outcomes in p.obj("hub", {}).items():
        if not isinstance(outcomes, list):
            raise RpcError(INVALID_PARAMS, f"invalid params: hub.{pack_id} must be an array")
        hub[pack_id] = []
        for i, raw in enumerate(outcomes):
            o = Params(raw, f"hub.{pack_id}[{i}]")
            hub[pack_id].append(minihcp.MintOutcome(o.bool("ok"), o.str("token", None), o.str("identity", None), o.str("error", None)))
    environment = p.obj("environment", {})
    if not all(isinstance(v, str) for v in environment.values()):
        raise RpcError(INVALID_PARAMS, "invalid params: environment values must be strings")
    sense = Params(p.obj("sense", {}), "params.sense")
    return minihcp.Config(
        pack_dirs=p.strs("packDirs"),
        principal={"id": principal.str("id"), "kind": principal.str("kind")},
        workdir=p.str("workdir"),
        tenant_id=p.str("tenant_id", None),
        project_id=p.str("project_id", None),
        grants=[
            minihcp.Grant(g.str("capability"), g.str("pack_id"), g.strs("verb_keys", None), g.str("tenant_id", None))
            for g in p.items("grants", None)  # null: no grants at all, so everything is denied
        ],
        sandbox=p.bool("sandbox", True),
        allow_bins=p.strs("allowBins", []),
        bin_path=p.strs("path", []),
        hub_script=hub,
        sense_enabled=sense.bool("enable", None),  # left out: the reading's default
        environment=environment,
    )


# --- the methods ------------------------------------------------------------------------------


class Shim:
    def __init__(self, reading: minihcp.Reading = minihcp.REFERENCE):
        self.reading = reading
        self.runtimes: dict[str, minihcp.Runtime] = {}
        self.created = 0
        self.done = False

    def runtime(self, p: Params) -> minihcp.Runtime:
        rid = p.str("runtime_id")
        if rid not in self.runtimes:
            raise RpcError(UNKNOWN_RUNTIME, f"unknown runtime_id {rid}")
        return self.runtimes[rid]

    def m_initialize(self, p):
        # hcpspec sends the oldest version it speaks (hcpspec-shim/1) and speaks them all.
        asked = p.str("protocol", None)
        if asked not in (None, "hcpspec-shim/1", PROTOCOL):
            raise RpcError(INVALID_PARAMS, f"unsupported protocol {asked}; this shim speaks {PROTOCOL}")
        features = ["sense", "sandbox", "binding:user", "binding:local", "binding:mothership", "cli"]
        runtime = {"name": self.reading.name, "version": minihcp.VERSION}
        # The denial and lint rule maps, when the reading words them its own way, and what is
        # random in its observations (redacted from hcpspec's snapshots).
        return {
            "protocol": PROTOCOL,
            "runtime": runtime,
            "features": features,
            "redactions": self.reading.redactions(),
            **self.reading.initialize_maps(),
        }

    def m_runtime_create(self, p):
        rt, issues = minihcp.install(config_from(p), self.reading)
        if rt is None:
            return {"ok": False, "issues": issues}
        self.created += 1
        rid = f"rt-{self.created}"
        self.runtimes[rid] = rt
        return {"ok": True, "runtime_id": rid}

    def m_runtime_activate(self, p):
        pack_ids = p.strs("pack_ids")
        return self.runtime(p).activate(pack_ids)

    def m_runtime_connect(self, p):
        pack_id = p.str("pack_id")
        return self.runtime(p).connect(pack_id)

    def m_runtime_exec(self, p):
        pack_id, verb_key, args = p.str("pack_id"), p.str("verb_key"), p.obj("args", {})
        return self.runtime(p).exec(pack_id, verb_key, args)

    def m_runtime_availability(self, p):
        pack_id = p.str("pack_id")
        return self.runtime(p).availability(pack_id)

    def m_runtime_sense(self, p):
        pack_id, trigger = p.str("pack_id"), p.str("trigger")
        return self.runtime(p).sense(pack_id, trigger, p.raw.get("payload"))

    def m_runtime_listPacks(self, p):
        return self.runtime(p).list_packs()

    def m_runtime_getPack(self, p):
        return self.runtime(p).get_pack(p.str("pack_id"))

    def m_runtime_skill(self, p):
        return self.runtime(p).skill(p.str("pack_id"))

    def m_runtime_cli(self, p):
        return self.runtime(p).cli(p.str("command"), p.obj("args", {}))

    def m_runtime_setSense(self, p):
        # sense.enable switched after create (an addition to hcpspec-shim/2).
        self.runtime(p).set_sense(p.nested("sense").bool("enable"))
        return {"ok": True}

    def m_runtime_grants(self, p):
        # The grants the runtime holds (an addition to hcpspec-shim/2).
        return self.runtime(p).grants()

    def m_runtime_senseSink(self, p):
        return self.runtime(p).sense_sink()

    def m_runtime_audit(self, p):
        return self.runtime(p).audit()

    def m_runtime_dispose(self, p):
        self.runtimes.pop(p.str("runtime_id"), None)  # idempotent
        return {"ok": True}

    def m_pack_check(self, p):
        _, issues = minihcp.install_pack(p.str("packDir"), self.reading)
        return {"ok": not issues, "issues": issues}

    def m_shutdown(self, p):
        self.runtimes.clear()
        self.done = True  # answer, then exit
        return {"ok": True}

    # --- JSON-RPC framing ---------------------------------------------------------------------

    METHODS = {
        "initialize": m_initialize,
        "runtime.create": m_runtime_create,
        "runtime.activate": m_runtime_activate,
        "runtime.connect": m_runtime_connect,
        "runtime.exec": m_runtime_exec,
        "runtime.availability": m_runtime_availability,
        "runtime.sense": m_runtime_sense,
        "runtime.listPacks": m_runtime_listPacks,
        "runtime.getPack": m_runtime_getPack,
        "runtime.skill": m_runtime_skill,
        "runtime.cli": m_runtime_cli,
        "runtime.setSense": m_runtime_setSense,
        "runtime.grants": m_runtime_grants,
        "runtime.senseSink": m_runtime_senseSink,
        "runtime.audit": m_runtime_audit,
        "runtime.dispose": m_runtime_dispose,
        "pack.check": m_pack_check,
        "shutdown": m_shutdown,
    }

    def call(self, method: str, params):
        handler = self.METHODS.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(self, Params({} if params is None else params))

    def answer(self, msg) -> dict | None:
        """One request in, one response out (None for a notification)."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            rid = msg.get("id") if isinstance(msg, dict) else None
            return error_reply(rid if _valid_id(rid) else None, INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 request object")
        rid = msg.get("id")
        if "id" in msg and not _valid_id(rid):
            return error_reply(None, INVALID_REQUEST, "invalid request: id must be a string, a number or null")
        try:
            result = self.call(msg["method"], msg.get("params"))
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as e:
            reply = error_reply(rid, e.code, e.message)
        except Exception as e:  # a bug in the runtime must not take the shim down
            log(f"internal error in {msg['method']}:\n{traceback.format_exc()}")
            reply = error_reply(rid, INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}")
        return reply if "id" in msg else None

    def handle_line(self, line: bytes) -> str | None:
        try:
            msg = minihcp.parse_json(line)
        except (ValueError, RecursionError) as e:
            return encode(error_reply(None, PARSE_ERROR, f"parse error: {e}"))
        if isinstance(msg, list):  # a batch
            if not msg:
                return encode(error_reply(None, INVALID_REQUEST, "invalid request: empty batch"))
            replies = [r for r in map(self.answer, msg) if r is not None]
            return encode(replies) if replies else None
        reply = self.answer(msg)
        return None if reply is None else encode(reply)


def _valid_id(rid) -> bool:
    return rid is None or (isinstance(rid, (str, int, float)) and not isinstance(rid, bool))


def error_reply(rid, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def encode(reply) -> str:
    """One line of ASCII JSON (so never a raw newline or a bad byte); a batch is a list."""
    if isinstance(reply, list):
        return "[" + ",".join(map(encode, reply)) + "]"
    try:
        return json.dumps(reply, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError) as e:  # say so rather than die
        failure = error_reply(reply.get("id"), INTERNAL_ERROR, f"cannot encode the result: {e}")
        return json.dumps(failure, separators=(",", ":"))


def main() -> int:
    parser = argparse.ArgumentParser(description=f"minihcp behind an {PROTOCOL} shim on stdio")
    parser.add_argument(
        "--reading",
        choices=sorted(minihcp.READINGS),
        default="reference",
        help="how minihcp decides the points the spec leaves open (default: as hcpspec's reference)",
    )
    reading = minihcp.READINGS[parser.parse_args().reading]
    shim = Shim(reading)
    log(f"{reading.name} {minihcp.VERSION} speaking {PROTOCOL} on stdio")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    try:
        while True:
            line = stdin.readline()
            if not line:
                return 0  # EOF: the client is gone
            if not line.strip():
                continue
            try:
                reply = shim.handle_line(line)
            except Exception as e:  # the last safety net: answer, never crash
                log(f"unexpected failure:\n{traceback.format_exc()}")
                reply = encode(error_reply(None, INTERNAL_ERROR, f"internal error: {type(e).__name__}"))
            if reply is not None:
                stdout.write(reply.encode() + b"\n")
                stdout.flush()
            if shim.done:
                return 0
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
