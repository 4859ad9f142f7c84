"""minihcp: a small HCP runtime in plain Python (standard library only).

It meets the ten-point runtime contract of "Build a runtime" and nothing more:

  1  load surface.json, policy.json and HARNESS.md; reject on parse error
  2  lint on install; reject on any issue
  3  authorise every exec on five capability axes; never default-allow
  4  gate confirm writes before any adapter runs
  5  mint a Binding through a (scripted) hub; no fallback to environment tokens
  6  run the adapter: spawn the wrap bin with an argv list, or call in-process
  7  sandbox by default: bin allow-list, cwd jail, an environment built from nothing
  8  audit every write with the attribution tuple
  9  report availability per command, a reason for every false flag
  10 route Sense: declared triggers only, and only with sense.enable on

Everything the runtime gets comes in a `Config`; it never reads its own process environment.
Results are plain dicts in the shapes of the contract (the exec envelope and friends), so a
transport (see shim.py) can send them as they are.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

VERSION = "0.1.0"

# The five capability axes. A grant of anything else grants nothing.
ACTIVATE = "pack.activate"
CONNECT = "pack.connect"
EXEC_READ = "verb.exec.read"
EXEC_WRITE = "verb.exec.write"
ELEVATE = "binding.elevate"
CAPABILITIES = (ACTIVATE, CONNECT, EXEC_READ, EXEC_WRITE, ELEVATE)

# Args that drive the confirm gate; they are never forwarded to an adapter.
GATE_ARGS = ("confirm", "apply")

ADAPTER_TIMEOUT_S = 10
OUTPUT_CAP = 1 << 20

SURFACE, POLICY, SKILL = "surface.json", "policy.json", "HARNESS.md"


class Denied(Exception):
    """A refusal: the runtime decided not to run (audit outcome `denied`)."""


class Failed(Exception):
    """The adapter ran, or tried to, and failed (audit outcome `error`)."""


# --------------------------------------------------------------------------------------------
# Configuration


@dataclass
class Grant:
    capability: str
    pack_id: str
    verb_keys: list[str] | None = None  # None: every verb of the pack
    tenant_id: str | None = None  # None: any tenant


@dataclass
class MintOutcome:
    ok: bool
    token: str | None = None
    identity: str | None = None
    error: str | None = None


@dataclass
class Config:
    pack_dirs: list[str]
    principal: dict  # {"id": ..., "kind": ...}
    workdir: str  # the jail every adapter runs in
    tenant_id: str | None = None
    project_id: str | None = None
    grants: list[Grant] = field(default_factory=list)
    sandbox: bool = True  # False is the explicit opt-in to native-local
    allow_bins: list[str] = field(default_factory=list)
    bin_path: list[str] = field(default_factory=list)  # where wrap bins are looked up
    hub_script: dict[str, list[MintOutcome]] = field(default_factory=dict)  # per pack_id
    sense_enabled: bool = False
    environment: dict[str, str] = field(default_factory=dict)  # the runtime's own environment


# --------------------------------------------------------------------------------------------
# 1. Loading


def issue(file: str, pointer: str, rule: str, message: str) -> dict:
    return {"file": file, "pointer": pointer, "rule": rule, "message": message}


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text}")
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes):
    """Strict JSON: UTF-8, one value, no NaN/Infinity, no lone surrogates, nothing trailing."""
    value = json.loads(data.decode("utf-8"), parse_float=_finite, parse_constant=_no_constant)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate escape") from None
    return value


@dataclass
class Pack:
    dir: str
    surface: dict
    policy: dict
    skill: str | None

    @property
    def pack_id(self) -> str:
        return self.surface["pack_id"]

    @property
    def public(self) -> bool:
        return self.surface.get("public", False)

    @property
    def binding(self) -> dict | None:
        return None if self.public else self.surface.get("binding")

    @property
    def wrap(self) -> dict:
        return self.surface["wrap"]

    @property
    def triggers(self) -> list[str]:
        return self.surface.get("sense", {}).get("triggers", [])

    def command(self, verb_key: str) -> dict | None:
        return next((c for c in self.surface["commands"] if c["verb_key"] == verb_key), None)


def load_pack(directory: str) -> tuple[Pack | None, list[dict]]:
    """Read and schema-check the three files; every issue of both JSON files is reported."""
    base = directory.rstrip("/") or directory
    issues: list[dict] = []
    docs = {}
    for name, check in ((SURFACE, check_surface), (POLICY, check_policy)):
        path = f"{base}/{name}"
        try:
            data = Path(directory, name).read_bytes()
        except (OSError, ValueError):  # ValueError: a NUL in the path
            issues.append(issue(path, "", "missing-file", "file not found"))
            continue
        try:
            doc = parse_json(data)
        except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            issues.append(issue(path, "", "parse", str(e)))
            continue
        problems = check(doc)
        issues += [issue(path, pointer, "schema", message) for pointer, message in problems]
        if not problems:
            docs[name] = doc
    skill = None
    try:
        raw = Path(directory, SKILL).read_bytes()
    except (OSError, ValueError):
        raw = None  # a missing Skill is a lint issue, not a load error
    try:
        skill = raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError as e:
        issues.append(issue(f"{base}/{SKILL}", "", "parse", f"not UTF-8: {e}"))
    if issues:
        return None, issues
    return Pack(directory, docs[SURFACE], docs[POLICY], skill), []


# The rules of vectors/schemas/{surface,policy}.schema.json, checked by hand.


def _pointer(at: str, key) -> str:
    return f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"


class _Checker:
    def __init__(self):
        self.problems: list[tuple[str, str]] = []

    def bad(self, at: str, message: str):
        self.problems.append((at, message))

    def obj(self, v, at: str, known: set[str] | None = None, required: tuple = ()) -> bool:
        """v is an object with every `required` key and (when `known` is given) no other."""
        if not isinstance(v, dict):
            self.bad(at, "expected an object")
            return False
        for key in required:
            if key not in v:
                self.bad(at, f"`{key}` is required")
        for key in v:
            if known is not None and key not in known:
                self.bad(at, f"unknown property `{key}`")
        return True

    def string(self, v, at: str, pattern: str | None = None, non_empty: bool = False):
        if not isinstance(v, str):
            self.bad(at, "expected a string")
        elif pattern and not re.fullmatch(pattern, v):
            self.bad(at, f"`{v}` does not match {pattern}")
        elif non_empty and not v:
            self.bad(at, "must not be empty")

    def boolean(self, v, at: str):
        if not isinstance(v, bool):
            self.bad(at, "expected true or false")

    def one_of(self, v, at: str, choices: tuple):
        if not (isinstance(v, str) and v in choices):
            self.bad(at, f"expected one of {', '.join(choices)}")

    def array(self, v, at: str) -> list:
        if not isinstance(v, list):
            self.bad(at, "expected an array")
            return []
        return v

    def privacy(self, v, at: str):
        if self.obj(v, at, {"land"}, ("land",)) and "land" in v:
            self.one_of(v["land"], at + "/land", ("local", "brain"))


def check_surface(doc) -> list[tuple[str, str]]:
    c = _Checker()
    known = {"hcp", "pack_id", "name", "version", "public", "binding", "commands", "wrap", "sense"}
    if not c.obj(doc, "", known, ("hcp", "pack_id", "commands", "wrap")):
        return c.problems
    if "hcp" in doc:
        c.string(doc["hcp"], "/hcp", r"1\.[0-9]+")
    if "pack_id" in doc:
        c.string(doc["pack_id"], "/pack_id", r"[a-z][a-z0-9_-]{0,63}")
    for key in ("name", "version"):
        if key in doc:
            c.string(doc[key], "/" + key)
    if "public" in doc:
        c.boolean(doc["public"], "/public")
    if "binding" in doc:
        b = doc["binding"]
        if c.obj(b, "/binding", {"mode", "hub"}, ("mode", "hub")):
            if "mode" in b:
                c.one_of(b["mode"], "/binding/mode", ("user", "local", "mothership"))
            if "hub" in b:
                c.string(b["hub"], "/binding/hub", non_empty=True)
    for i, cmd in enumerate(c.array(doc.get("commands", []), "/commands")):
        at = f"/commands/{i}"
        if not c.obj(cmd, at, {"verb_key", "command", "summary", "args"}, ("verb_key",)):
            continue
        if "verb_key" in cmd:
            c.string(cmd["verb_key"], at + "/verb_key", r"[a-z][a-z0-9_.-]{0,63}")
        for key in ("command", "summary"):
            if key in cmd:
                c.string(cmd[key], f"{at}/{key}")
        if "args" in cmd and c.obj(cmd["args"], at + "/args"):
            for name, spec in cmd["args"].items():
                arg_at = _pointer(at + "/args", name)
                if c.obj(spec, arg_at, {"type", "required"}):
                    if "type" in spec:
                        c.one_of(spec["type"], arg_at + "/type", ("string", "number", "integer", "boolean"))
                    if "required" in spec:
                        c.boolean(spec["required"], arg_at + "/required")
    if "wrap" in doc:
        w = doc["wrap"]
        if c.obj(w, "/wrap", {"bin", "inproc", "pass_through", "commands"}):
            if ("bin" in w) == ("inproc" in w):
                c.bad("/wrap", "exactly one of `bin` and `inproc` is required")
            for key in ("bin", "inproc"):
                if key in w:
                    c.string(w[key], "/wrap/" + key, non_empty=True)
            if "pass_through" in w:
                c.boolean(w["pass_through"], "/wrap/pass_through")
            if "commands" in w and c.obj(w["commands"], "/wrap/commands"):
                for verb, named in w["commands"].items():
                    at = _pointer("/wrap/commands", verb)
                    if c.obj(named, at, {"argv"}, ("argv",)) and "argv" in named:
                        for j, part in enumerate(c.array(named["argv"], at + "/argv")):
                            c.string(part, f"{at}/argv/{j}")
    if "sense" in doc:
        s = doc["sense"]
        if c.obj(s, "/sense", {"triggers"}) and "triggers" in s:
            for i, t in enumerate(c.array(s["triggers"], "/sense/triggers")):
                c.string(t, f"/sense/triggers/{i}", non_empty=True)
    return c.problems


def check_policy(doc) -> list[tuple[str, str]]:
    c = _Checker()
    if not c.obj(doc, "", {"verbs", "triggers"}, ("verbs",)):
        return c.problems
    if "verbs" in doc and c.obj(doc["verbs"], "/verbs"):
        for verb, row in doc["verbs"].items():
            at = _pointer("/verbs", verb)
            if not c.obj(row, at, {"operation", "confirm", "privacy"}, ("operation", "privacy")):
                continue
            if "operation" in row:
                c.one_of(row["operation"], at + "/operation", ("read", "write"))
            if "confirm" in row:
                c.boolean(row["confirm"], at + "/confirm")
            if "privacy" in row:
                c.privacy(row["privacy"], at + "/privacy")
    if "triggers" in doc and c.obj(doc["triggers"], "/triggers"):
        for trigger, row in doc["triggers"].items():
            at = _pointer("/triggers", trigger)
            if c.obj(row, at, {"privacy"}) and "privacy" in row:
                c.privacy(row["privacy"], at + "/privacy")
    return c.problems


# --------------------------------------------------------------------------------------------
# 2. Lint


def lint(pack: Pack) -> list[dict]:
    s, verbs = pack.surface, pack.policy["verbs"]
    triggers = pack.policy.get("triggers", {})
    wrap = pack.wrap
    found = []
    seen = set()
    for i, cmd in enumerate(s["commands"]):
        if cmd["verb_key"] in seen:
            found.append(issue(SURFACE, f"/commands/{i}/verb_key", "verb-key-unique", f"verb_key `{cmd['verb_key']}` is declared twice"))
        seen.add(cmd["verb_key"])
    for i, cmd in enumerate(s["commands"]):
        if cmd["verb_key"] not in verbs:
            found.append(issue(POLICY, _pointer("/verbs", cmd["verb_key"]), "policy-covers-command", f"command `{cmd['verb_key']}` (surface.json /commands/{i}) has no Policy row"))
    for i, t in enumerate(pack.triggers):
        if t not in triggers:
            found.append(issue(POLICY, _pointer("/triggers", t), "policy-covers-trigger", f"Sense trigger `{t}` (surface.json /sense/triggers/{i}) has no Policy row"))
    if pack.skill is None or not pack.skill.strip():
        found.append(issue(SKILL, "", "skill-present", "the Skill (HARNESS.md) is missing or empty"))
    pass_through = wrap.get("pass_through", False)
    named = wrap.get("commands", {})
    if not pass_through and not named:
        found.append(issue(SURFACE, "/wrap", "wrap-named-or-pass-through", "wrap names no commands and is not pass_through"))
    elif not pass_through:
        for i, cmd in enumerate(s["commands"]):
            if cmd["verb_key"] not in named:
                found.append(issue(SURFACE, f"/commands/{i}", "wrap-covers-command", f"command `{cmd['verb_key']}` has no wrap command and wrap is not pass_through"))
    if not pack.public and "binding" not in s:
        found.append(issue(SURFACE, "/binding", "binding-declared", "a pack that is not public must declare its Binding (mode and hub)"))
    return found


def install_pack(directory: str) -> tuple[Pack | None, list[dict]]:
    pack, issues = load_pack(directory)
    if pack is None:
        return None, issues
    issues = lint(pack)
    return (pack, []) if not issues else (None, issues)


def install(config: Config) -> tuple[Runtime | None, list[dict]]:
    """Install every pack directory; any issue in any pack rejects the whole install."""
    packs: dict[str, Pack] = {}
    issues: list[dict] = []
    for directory in config.pack_dirs:
        pack, found = install_pack(directory)
        issues += found
        if pack is None:
            continue
        if pack.pack_id in packs:
            issues.append(issue(f"{directory.rstrip('/')}/{SURFACE}", "/pack_id", "pack-id-unique", f"pack_id `{pack.pack_id}` is installed twice"))
        else:
            packs[pack.pack_id] = pack
    if issues:
        return None, issues
    return Runtime(config, packs), []


# --------------------------------------------------------------------------------------------
# 6 and 7. Adapters


def _arg_text(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _fill(template: str, args: dict) -> str:
    """Replace each `{name}` in one argv element with the exec arg `name`; one element stays one arg."""

    def value(m: re.Match) -> str:
        name = m.group(1)
        if name not in args:
            raise Denied(f"invalid args: missing {name}")
        return _arg_text(args[name])

    return re.sub(r"\{([^{}]*)\}", value, template)


def render_argv(pack: Pack, verb_key: str, args: dict) -> list[str]:
    cmd = pack.command(verb_key) or {}
    for name, spec in cmd.get("args", {}).items():
        if spec.get("required") and name not in args:
            raise Denied(f"invalid args: missing {name}")
    named = pack.wrap.get("commands", {}).get(verb_key)
    if named is not None:
        return [_fill(part, args) for part in named["argv"]]
    if pack.wrap.get("pass_through"):
        # assumption (as hcpspec's): verb_key, then --key=value per arg in key order.
        return [verb_key] + [f"--{k}={_arg_text(args[k])}" for k in sorted(args) if k not in GATE_ARGS]
    raise Failed(f"no wrap command for {verb_key}")


def echo_adapter(argv: list[str], token: str | None) -> dict:
    """The in-process adapter `echo`: says what it was given, never the token itself."""
    return {"argv": argv, "bound": token is not None}


INPROC = {"echo": echo_adapter}


def spawn(program: str, argv: list[str], cwd: str, env: dict[str, str]) -> dict:
    """Run `program` with exactly `argv`, in `cwd`, with exactly `env`. No shell."""
    try:
        done = subprocess.run(
            [program, *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=ADAPTER_TIMEOUT_S,
            shell=False,
        )
    except subprocess.TimeoutExpired:
        raise Failed("adapter timed out") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in an arg or the environment
        raise Failed(f"adapter failed to start: {e}") from None
    text = done.stdout[:OUTPUT_CAP].decode("utf-8", errors="replace")
    try:
        stdout = parse_json(text.strip().encode())
    except (ValueError, RecursionError):
        stdout = text
    if done.returncode != 0:
        raise Failed(f"adapter exited with {done.returncode}")
    return {"exit_code": done.returncode, "stdout": stdout}


# --------------------------------------------------------------------------------------------
# The runtime


def _is_true(v) -> bool:
    return v is True  # the JSON boolean only: not "true", not 1


def _envelope(pack_id: str, verb_key: str, result=None, error: str | None = None) -> dict:
    env = {"ok": error is None, "pack_id": pack_id, "verb_key": verb_key}
    if error is None:
        env["result"] = result
    else:
        env["error"] = error
    return env


def _pack_result(pack_id: str, error: str | None = None, binding: dict | None = None) -> dict:
    out = {"ok": error is None, "pack_id": pack_id}
    if binding is not None:
        out["binding"] = binding
    if error is not None:
        out["error"] = error
    return out


class Runtime:
    def __init__(self, config: Config, packs: dict[str, Pack]):
        self.config = config
        self.packs = packs
        self.activated: set[str] = set()
        self.bindings: dict[str, tuple[str, str]] = {}  # pack_id -> (token, identity)
        self.hub = {pack_id: list(outcomes) for pack_id, outcomes in config.hub_script.items()}
        self.audit_log: list[dict] = []
        self.sink: list[dict] = []

    # -- 3. authorisation ---------------------------------------------------------------------

    def holds(self, capability: str, pack_id: str, verb_key: str | None = None) -> bool:
        for g in self.config.grants:
            if g.capability != capability or g.pack_id != pack_id:
                continue
            if g.tenant_id is not None and g.tenant_id != self.config.tenant_id:
                continue
            if verb_key is not None and g.verb_keys is not None and verb_key not in g.verb_keys:
                continue
            return True
        return False

    def authorize(self, pack: Pack, verb_key: str) -> dict:
        """The verb's Policy row when the Principal may run it (args aside); else Denied."""
        if pack.command(verb_key) is None:
            raise Denied(f"unknown verb {pack.pack_id}.{verb_key}")
        row = pack.policy["verbs"].get(verb_key)
        if row is None:
            raise Denied(f"denied: no Policy row for {verb_key}")
        if pack.pack_id not in self.activated:
            raise Denied(f"denied: pack {pack.pack_id} is not activated")
        capability = EXEC_WRITE if row["operation"] == "write" else EXEC_READ
        if not self.holds(capability, pack.pack_id, verb_key):
            raise Denied(f"denied: missing {capability} for {pack.pack_id}.{verb_key}")
        if row["privacy"]["land"] == "brain" and self.config.project_id is None:
            raise Denied("denied: privacy.land brain needs a project_id")
        return row

    def binding_of(self, pack: Pack) -> tuple[str, str] | None:
        """(token, identity) for a bound pack, None for a public one; Denied when not connected."""
        if pack.binding is None:
            return None
        if pack.pack_id not in self.bindings:
            raise Denied(f"denied: pack {pack.pack_id} is not connected")
        return self.bindings[pack.pack_id]

    # -- 6 and 7. adapter resolution ----------------------------------------------------------

    def program_for(self, pack: Pack) -> str | None:
        """The wrap bin's path, or None for an in-process adapter; Denied when not runnable."""
        wrap = pack.wrap
        if "inproc" in wrap:
            if wrap["inproc"] not in INPROC:
                raise Denied(f"denied: unknown in-process adapter {wrap['inproc']}")
            return None
        name = wrap["bin"]
        if self.config.sandbox and name not in self.config.allow_bins:
            raise Denied(f"denied: bin {name} is not on the allow-list")
        if "/" in name or "\\" in name or name in (".", ".."):  # the allow-list names bins, never paths
            raise Denied(f"denied: unknown bin {name}")
        for directory in self.config.bin_path:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        raise Denied(f"denied: unknown bin {name}")

    def adapter_env(self, pack_id: str, verb_key: str, token: str | None) -> dict[str, str]:
        env = {"PATH": os.pathsep.join(self.config.bin_path), "HCP_PACK_ID": pack_id, "HCP_VERB_KEY": verb_key}
        if token is not None:
            env["HCP_BINDING"] = token
        if not self.config.sandbox:  # native-local, by explicit opt-in only
            for k, v in self.config.environment.items():
                env.setdefault(k, v)
        return env

    # -- the surface harnesses see ------------------------------------------------------------

    def list_packs(self) -> list[dict]:
        return [dict(p.surface, public=p.public, activated=p.pack_id in self.activated) for p in self.packs.values()]

    def activate(self, pack_ids: list[str]) -> list[dict]:
        out = []
        for pack_id in pack_ids:
            if pack_id not in self.packs:
                out.append(_pack_result(pack_id, f"unknown pack {pack_id}"))
            elif not any(self.holds(c, pack_id) for c in CAPABILITIES):
                # pack.activate, or any other grant on the pack, which implies it
                out.append(_pack_result(pack_id, f"denied: no grant for pack {pack_id}"))
            else:
                self.activated.add(pack_id)
                out.append(_pack_result(pack_id))
        return out

    def connect(self, pack_id: str) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return _pack_result(pack_id, f"unknown pack {pack_id}")
        if pack_id not in self.activated:
            return _pack_result(pack_id, f"denied: pack {pack_id} is not activated")
        decl = pack.binding
        if decl is None:
            return _pack_result(pack_id)  # public: nothing to mint
        if not self.holds(CONNECT, pack_id):
            return _pack_result(pack_id, f"denied: missing pack.connect for {pack_id}")
        if decl["mode"] == "mothership" and not self.holds(ELEVATE, pack_id):
            return _pack_result(pack_id, f"denied: a mothership Binding needs elevation ({ELEVATE}) for {pack_id}")
        try:
            token, identity = self.mint(pack_id, decl["hub"])
        except Denied as e:
            return _pack_result(pack_id, str(e))  # and nothing else: no environment fallback
        self.bindings[pack_id] = (token, identity)
        return _pack_result(pack_id, binding={"mode": decl["mode"], "hub": decl["hub"], "identity": identity})

    def mint(self, pack_id: str, hub: str) -> tuple[str, str]:
        """The hub: the next scripted outcome for the pack, or a fresh token when none is left."""
        script = self.hub.get(pack_id)
        outcome = script.pop(0) if script else MintOutcome(ok=True)
        if not outcome.ok:
            raise Denied(f"denied: mint failed: {outcome.error or 'hub refused'}")
        token = outcome.token or f"mini-{secrets.token_hex(8)}"
        identity = outcome.identity or f"{hub}:{self.config.principal['id']}"
        return token, identity

    def exec(self, pack_id: str, verb_key: str, args: dict) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return _envelope(pack_id, verb_key, error=f"unknown pack {pack_id}")
        row = pack.policy["verbs"].get(verb_key)
        trail: dict = {}  # how far the pipeline got, for the audit record
        result, error, outcome = None, None, "ok"
        try:
            result = self._run(pack, verb_key, args, trail)
        except Denied as e:
            error, outcome = str(e), "denied"
        except Failed as e:
            error, outcome = str(e), "error"
        if row is not None and row["operation"] == "write":
            self._audit(pack_id, verb_key, trail.get("identity"), outcome, error)
        return _envelope(pack_id, verb_key, result, error)

    def _run(self, pack: Pack, verb_key: str, args: dict, trail: dict):
        """The pipeline, in the contract's order; any step raises to deny."""
        row = self.authorize(pack, verb_key)
        if row.get("confirm") and not (_is_true(args.get("confirm")) or _is_true(args.get("apply"))):
            raise Denied("confirm required")
        bound = self.binding_of(pack)
        token, trail["identity"] = bound if bound else (None, None)
        program = self.program_for(pack)
        argv = render_argv(pack, verb_key, args)
        if program is None:
            return INPROC[pack.wrap["inproc"]](argv, token)
        return spawn(program, argv, self.config.workdir, self.adapter_env(pack.pack_id, verb_key, token))

    def _audit(self, pack_id: str, verb_key: str, identity: str | None, outcome: str, error: str | None):
        record = {
            "tenant_id": self.config.tenant_id,
            "project_id": self.config.project_id,
            "principal": dict(self.config.principal),
            "pack_id": pack_id,
            "verb_key": verb_key,
            "binding": identity,
            "outcome": outcome,
        }
        if error is not None:
            record["error"] = error
        self.audit_log.append(record)

    def availability(self, pack_id: str) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return {"pack_id": pack_id, "installed": False, "reasons": {"installed": f"pack {pack_id} is not installed"}, "verbs": []}
        verbs = []
        for cmd in pack.surface["commands"]:
            verb_key = cmd["verb_key"]
            row = pack.policy["verbs"][verb_key]
            reasons = {}
            activated = pack_id in self.activated
            connected = pack.binding is None or pack_id in self.bindings
            if not activated:
                reasons["activated"] = f"pack {pack_id} is not activated"
            if not connected:
                reasons["connected"] = f"pack {pack_id} is not connected: connect first"
            # Executable: would an exec pass every check that does not depend on its args?
            try:
                self.authorize(pack, verb_key)
                self.binding_of(pack)
                self.program_for(pack)
            except (Denied, Failed) as e:
                reasons["executable"] = str(e)
            entry = {
                "verb_key": verb_key,
                "operation": row["operation"],
                "land": row["privacy"]["land"],
                "installed": True,
                "activated": activated,
                "connected": connected,
                "executable": "executable" not in reasons,
            }
            if reasons:
                entry["reasons"] = reasons
            verbs.append(entry)
        return {"pack_id": pack_id, "installed": True, "verbs": verbs}

    # -- 10. Sense ----------------------------------------------------------------------------

    def sense(self, pack_id: str, trigger: str, payload) -> dict:
        if not self.config.sense_enabled:
            return {"accepted": False, "reason": "dropped: sense.enable is off"}
        pack = self.packs.get(pack_id)
        if pack is None:
            return {"accepted": False, "reason": f"dropped: unknown pack {pack_id}"}
        if trigger not in pack.triggers or trigger not in pack.policy.get("triggers", {}):
            return {"accepted": False, "reason": f"dropped: undeclared trigger {trigger}"}
        self.sink.append({"pack_id": pack_id, "trigger": trigger, "payload": payload})
        return {"accepted": True}

    def sense_sink(self) -> list[dict]:
        return list(self.sink)

    def audit(self) -> list[dict]:
        return list(self.audit_log)
