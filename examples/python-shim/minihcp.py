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
How it decides the points the spec leaves open is its `Reading`: `REFERENCE` (as hcpspec's
reference runtime) or `OTHER` (every such point the other way; `shim.py --reading other`).
Results are plain dicts in the shapes of the contract (the exec envelope and friends), so a
transport (see shim.py) can send them as they are.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
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
    sense_enabled: bool | None = None  # None: left out, and the reading decides
    environment: dict[str, str] = field(default_factory=dict)  # the runtime's own environment


# --------------------------------------------------------------------------------------------
# Readings: the points the spec leaves open, decided one way or the other
#
# A `Reading` is minihcp's answer to every point the spec leaves open. `REFERENCE` decides them
# as hcpspec's reference does (vectors/contract/ASSUMPTIONS.md); `OTHER` decides each the other
# way, as hcpspec's `inproc:variant:all` does. Both must pass every MUST case. The runtime below
# asks its reading at each open point (`if self.reading.…`), and says every denial through the
# reading's `Words`.


def _literal(text: str) -> str:
    """A regex matching `text` literally, escaping only what is special (readable in reports)."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


class Words:
    """A reading's denial texts: phrase -> (hcpspec's denial class, template).

    Its denial map (hcpspec class -> a regex over its texts, for `initialize`) is derived from
    the templates: each class matches the fixed words that open its texts, so the map covers
    every denial the reading gives as long as those openings tell the classes apart.
    """

    def __init__(self, phrases: dict[str, tuple[str, str]]):
        self.phrases = phrases

    def __call__(self, phrase: str, **values) -> str:
        return self.phrases[phrase][1].format(**values)

    def denial_map(self) -> dict[str, str]:
        openings: dict[str, list[str]] = {}
        for cls, template in self.phrases.values():
            opening = template.split("{", 1)[0]
            assert opening, f"a denial text must open with fixed words: {template!r}"
            openings.setdefault(cls, []).append("^" + _literal(opening))
        owner: dict[str, str] = {}
        for cls, res in openings.items():
            for r in res:
                assert owner.setdefault(r, cls) == cls, f"{r} opens texts of two classes"
        classes = {cls: "|".join(sorted(set(res))) for cls, res in openings.items()}
        # `no-grant` is "no grant for this, of any capability": a missing axis is one too.
        missing = ("no-grant", "missing-read", "missing-write", "missing-connect")
        classes["no-grant"] = "|".join(classes[c] for c in missing if c in classes)
        return classes

    def template_map(self) -> dict[str, str]:
        """A denial map of whole texts: each class matches its templates, a value as any text.

        For words whose openings do not tell the classes apart (`pack … is not activated` and
        `pack … is not connected`)."""
        templates: dict[str, list[str]] = {}
        for cls, template in self.phrases.values():
            parts = re.split(r"\{[a-z_]+\}", template)
            templates.setdefault(cls, []).append("^" + "(?s:.+)".join(map(_literal, parts)) + "$")
        classes = {cls: "|".join(sorted(set(res))) for cls, res in templates.items()}
        missing = ("no-grant", "missing-read", "missing-write", "missing-connect")
        classes["no-grant"] = "|".join(classes[c] for c in missing if c in classes)
        return classes


# Today's texts, exactly, declared as a denial map of whole texts (`template_map`): the cases
# that judge the pipeline's order by class require a map (hcpspec-shim/2, "denial-map").
REFERENCE_WORDS = Words({
    "unknown-pack": ("unknown-pack", "unknown pack {pack}"),
    "unknown-verb": ("unknown-verb", "unknown verb {pack}.{verb}"),
    "no-policy": ("no-policy", "denied: no Policy row for {verb}"),
    "not-activated": ("not-activated", "denied: pack {pack} is not activated"),
    "no-grant": ("no-grant", "denied: no grant for pack {pack}"),
    "missing-read": ("missing-read", "denied: missing verb.exec.read for {pack}.{verb}"),
    "missing-write": ("missing-write", "denied: missing verb.exec.write for {pack}.{verb}"),
    "missing-connect": ("missing-connect", "denied: missing pack.connect for {pack}"),
    "elevation": ("elevation", "denied: a mothership Binding needs elevation (binding.elevate) for {pack}"),
    "brain-needs-project": ("brain-needs-project", "denied: privacy.land brain needs a project_id"),
    "confirm": ("confirm", "confirm required"),
    "not-connected": ("not-connected", "denied: pack {pack} is not connected"),
    "mint-failed": ("mint-failed", "denied: mint failed: {error}"),
    "bin-not-allowed": ("bin-not-allowed", "denied: bin {bin} is not on the allow-list"),
    "unknown-bin": ("unknown-bin", "denied: unknown bin {bin}"),
    "unknown-inproc": ("unknown-bin", "denied: unknown in-process adapter {bin}"),
    "invalid-args": ("invalid-args", "invalid args: missing {arg}"),
    "mistyped-arg": ("invalid-args", "invalid args: {arg} must be of type {type}"),
    "undeclared-arg": ("invalid-args", "invalid args: {arg} is not an arg of {verb}"),
    "sense-disabled": ("sense-disabled", "dropped: sense.enable is off"),
    "sense-not-connected": ("not-connected", "dropped: pack {pack} is not connected"),
    "sense-unknown-pack": ("unknown-pack", "dropped: unknown pack {pack}"),
    "sense-not-activated": ("not-activated", "dropped: pack {pack} is not activated"),
    "undeclared-trigger": ("undeclared-trigger", "dropped: undeclared trigger {trigger}"),
    # availability: the reason of each false flag
    "not-installed": ("unknown-pack", "pack {pack} is not installed"),
    "flag-not-activated": ("not-activated", "pack {pack} is not activated"),
    "flag-not-connected": ("not-connected", "pack {pack} is not connected: connect first"),
    "flag-public-not-connected": ("not-connected", "pack {pack} is public and has not been connected"),
})

# Other words for the same refusals ("each in whatever way it chooses"), declared in initialize.
OTHER_WORDS = Words({
    "unknown-pack": ("unknown-pack", "no pack named {pack} is installed"),
    "unknown-verb": ("unknown-verb", "no command named {verb} in pack {pack}"),
    "no-policy": ("no-policy", "the policy has no entry for {pack}.{verb}"),
    "not-activated": ("not-activated", "inactive pack: {pack}"),
    "no-grant": ("no-grant", "nothing granted on pack {pack}"),
    "missing-read": ("missing-read", "reading not granted: {pack}.{verb}"),
    "missing-write": ("missing-write", "writing not granted: {pack}.{verb}"),
    "missing-connect": ("missing-connect", "connecting not granted: {pack}"),
    "elevation": ("elevation", "mothership bindings need an elevation grant: {pack}"),
    "brain-needs-project": ("brain-needs-project", "brain-land commands run only inside a project: {pack}.{verb}"),
    "confirm": ("confirm", "held for confirmation (pass confirm: true): {pack}.{verb}"),
    "not-connected": ("not-connected", "no binding yet: {pack}"),
    "mint-failed": ("mint-failed", "the hub would not mint a binding for {pack}: {error}"),
    "bin-not-allowed": ("bin-not-allowed", "outside the sandbox's bin list: {bin}"),
    "unknown-bin": ("unknown-bin", "no such program: {bin}"),
    "unknown-inproc": ("unknown-bin", "no such in-process handler: {bin}"),
    "invalid-args": ("invalid-args", "a required argument is absent: {arg}"),
    "mistyped-arg": ("invalid-args", "an argument has the wrong type: {arg} must be a {type}"),
    "undeclared-arg": ("invalid-args", "an argument the command does not take: {arg} ({pack}.{verb})"),
    "sense-disabled": ("sense-disabled", "Sense is switched off here"),
    "sense-not-connected": ("not-connected", "no binding yet: {pack} (its Sense waits for connect)"),
    "sense-unknown-pack": ("unknown-pack", "no pack named {pack} is installed"),
    "sense-not-activated": ("not-activated", "inactive pack: {pack}"),
    "undeclared-trigger": ("undeclared-trigger", "trigger not declared by the pack: {pack}/{trigger}"),
    "not-installed": ("unknown-pack", "no pack named {pack} is installed"),
    "flag-not-activated": ("not-activated", "inactive pack: {pack}"),
    "flag-not-connected": ("not-connected", "no binding yet: {pack} (the next exec or connect mints one)"),
    "flag-public-not-connected": ("not-connected", "no binding yet: {pack} is public; connect marks it connected"),
})

# The spec's row 2 names three lint rules; hcpspec's profile adds these.
PROFILE_LINT_RULES = ("verb-key-unique", "wrap-covers-command", "binding-declared")

# OTHER's own lint rule names, for hcpspec's (vectors/denials.json `rules`).
OTHER_RULE_NAMES = {
    "missing-file": "R1",
    "parse": "R2",
    "schema": "R3",
    "policy-covers-command": "R4",
    "policy-covers-trigger": "R5",
    "skill-present": "R6",
    "wrap-named-or-pass-through": "R7",
    "pack-id-unique": "R8",
}


@dataclass(frozen=True)
class Reading:
    name: str  # the runtime's name in initialize
    words: Words = REFERENCE_WORDS
    # Binding: mint at connect only, and exec needs it / mint through the hub inside every
    # exec, as the spec's createAcmeRuntime does (connect optional, and it mints too).
    mint_in_exec: bool = False
    # Adapters: run in workdir itself / in a fresh subdirectory of it, removed after the exec.
    fresh_jail_per_exec: bool = False
    # The token reaches the adapter as HCP_BINDING / in a file named by HCP_CREDENTIAL_FILE.
    credential_file: bool = False
    # Pass-through: `--key=value` in key order, gate args dropped / `--key` `value` in the
    # order given, gate args forwarded.
    pass_through_pairs: bool = False
    # Sense: on only with sense.enable true / on unless it is false, for activated packs only.
    sense_on_unless_disabled: bool = False
    # Lint: hcpspec's profile rules too / only the spec's row-2 rules.
    spec_lint_rules_only: bool = False
    # Lint rule names: hcpspec's / its own (declared in initialize); issues in reverse order.
    rule_names: dict[str, str] | None = None
    issues_reversed: bool = False
    # Availability: a public pack is connected from the start / once connect was called.
    public_connect_flag: bool = False
    # Audit: every write, denied ones too / only the writes that got past the gates.
    audit_denied_writes: bool = True
    # A wrap bin given as a path: always denied / run when the allow-list names that path.
    bin_path_allowed: bool = False
    # Native-local (sandbox: false): no allow-list / a given non-empty allow-list still holds.
    native_local_keeps_allow_list: bool = False
    # Exec order: activation before the capability axes / after the axes and the confirm gate.
    activation_last: bool = False
    # Sense of a Binding pack: delivered before connect / dropped until the pack is connected.
    sense_after_connect: bool = False
    # Exec args: any JSON value / refused unless of the type surface.json declares for them.
    typed_args: bool = False
    # Exec args of a named wrap command: any / only those it declares (gate args aside).
    declared_args_only: bool = False
    # Activation: any known grant on the pack implies it / only pack.activate or an exec grant.
    narrow_activation: bool = False

    def rule(self, name: str) -> str:
        return (self.rule_names or {}).get(name, name)

    def present(self, issues: list[dict]) -> list[dict]:
        """Issues as this reading words and orders them (the checks use hcpspec's names)."""
        out = [dict(i, rule=self.rule(i["rule"])) for i in issues]
        return out[::-1] if self.issues_reversed else out

    def redactions(self) -> list[dict]:
        """What is random in this runtime's observations, for hcpspec's snapshots (initialize's
        `redactions`): the tokens it mints, and under a fresh jail per exec the jail's and the
        credential file's names (tempfile's 8 random characters)."""
        out = [{"pattern": r"\bmini-[0-9a-f]{16}\b", "placeholder": "[minted-token]"}]
        if self.fresh_jail_per_exec:
            out.append({"pattern": r"\bjail-[a-z0-9_]{8}", "placeholder": "[jail]"})
        if self.credential_file:
            out.append({"pattern": r"\.credential-[a-z0-9_]{8}", "placeholder": ".credential-[random]"})
        return out

    def initialize_maps(self) -> dict:
        """What initialize declares about its own words: the reference, its denial map only."""
        if self.words is REFERENCE_WORDS:
            return {"denials": self.words.template_map()}
        maps = {"denials": self.words.denial_map()}
        if self.rule_names:
            maps["rules"] = {ours: f"^{_literal(theirs)}$" for ours, theirs in self.rule_names.items()}
        return maps


REFERENCE = Reading(name="minihcp")

OTHER = Reading(
    name="minihcp-other",
    words=OTHER_WORDS,
    mint_in_exec=True,
    fresh_jail_per_exec=True,
    credential_file=True,
    pass_through_pairs=True,
    sense_on_unless_disabled=True,
    spec_lint_rules_only=True,
    rule_names=OTHER_RULE_NAMES,
    issues_reversed=True,
    public_connect_flag=True,
    audit_denied_writes=False,
    bin_path_allowed=True,
    native_local_keeps_allow_list=True,
    activation_last=True,
    sense_after_connect=True,
    typed_args=True,
    declared_args_only=True,
    narrow_activation=True,
)

READINGS = {"reference": REFERENCE, "other": OTHER}


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


def lint_as(reading: Reading, pack: Pack) -> list[dict]:
    found = lint(pack)
    if reading.spec_lint_rules_only:
        found = [i for i in found if i["rule"] not in PROFILE_LINT_RULES]
    return found


def _install_pack(directory: str, reading: Reading) -> tuple[Pack | None, list[dict]]:
    """Load and lint one pack; issues under hcpspec's rule names."""
    pack, issues = load_pack(directory)
    if pack is None:
        return None, issues
    issues = lint_as(reading, pack)
    return (pack, []) if not issues else (None, issues)


def install_pack(directory: str, reading: Reading = REFERENCE) -> tuple[Pack | None, list[dict]]:
    pack, issues = _install_pack(directory, reading)
    return pack, reading.present(issues)


def install(config: Config, reading: Reading = REFERENCE) -> tuple[Runtime | None, list[dict]]:
    """Install every pack directory; any issue in any pack rejects the whole install."""
    packs: dict[str, Pack] = {}
    issues: list[dict] = []
    for directory in config.pack_dirs:
        pack, found = _install_pack(directory, reading)
        issues += found
        if pack is None:
            continue
        if pack.pack_id in packs:
            issues.append(issue(f"{directory.rstrip('/')}/{SURFACE}", "/pack_id", "pack-id-unique", f"pack_id `{pack.pack_id}` is installed twice"))
        else:
            packs[pack.pack_id] = pack
    if issues:
        return None, reading.present(issues)
    return Runtime(config, packs, reading), []


# --------------------------------------------------------------------------------------------
# 6 and 7. Adapters


def _arg_text(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _fill(template: str, args: dict, words: Words) -> str:
    """Replace each `{name}` in one argv element with the exec arg `name`; one element stays one arg."""

    def value(m: re.Match) -> str:
        name = m.group(1)
        if name not in args:
            raise Denied(words("invalid-args", arg=name))
        return _arg_text(args[name])

    return re.sub(r"\{([^{}]*)\}", value, template)


def render_argv(pack: Pack, verb_key: str, args: dict, reading: Reading = REFERENCE) -> list[str]:
    cmd = pack.command(verb_key) or {}
    for name, spec in cmd.get("args", {}).items():
        if spec.get("required") and name not in args:
            raise Denied(reading.words("invalid-args", arg=name))
    named = pack.wrap.get("commands", {}).get(verb_key)
    if named is not None:
        return [_fill(part, args, reading.words) for part in named["argv"]]
    if pack.wrap.get("pass_through"):
        if reading.pass_through_pairs:
            # verb_key, then `--key` and `value` as two elements per arg, in the order given,
            # gate args included.
            return [verb_key] + [part for k, v in args.items() for part in (f"--{k}", _arg_text(v))]
        # assumption (as hcpspec's): verb_key, then --key=value per arg in key order.
        return [verb_key] + [f"--{k}={_arg_text(args[k])}" for k in sorted(args) if k not in GATE_ARGS]
    raise Failed(f"no wrap command for {verb_key}")


# JSON Schema's meaning of each type surface.json may declare for an arg.
ARG_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
}


def check_arg_types(pack: Pack, verb_key: str, args: dict, words: Words):
    """typed_args: each arg the command declares with a type is of that type; args it does not
    declare (and gate args) are not judged."""
    cmd = pack.command(verb_key) or {}
    for name, spec in cmd.get("args", {}).items():
        fits = ARG_TYPES.get(spec.get("type"))
        if fits is not None and name in args and not fits(args[name]):
            raise Denied(words("mistyped-arg", arg=name, type=spec["type"]))


def check_args_declared(pack: Pack, verb_key: str, args: dict, words: Words):
    """declared_args_only: a command the wrap names an argv for takes only the args it declares
    (confirm and apply drive the gate); pass-through takes any."""
    if verb_key not in pack.wrap.get("commands", {}):
        return
    declared = (pack.command(verb_key) or {}).get("args", {})
    for name in args:
        if name not in declared and name not in GATE_ARGS:
            raise Denied(words("undeclared-arg", arg=name, pack=pack.pack_id, verb=verb_key))


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


@contextmanager
def jail_for_exec(workdir: str, fresh: bool):
    """The directory one adapter runs in: workdir itself, or a fresh subdirectory of it that
    is removed (with whatever the adapter left there) when the exec ends."""
    if not fresh:
        yield workdir
        return
    try:
        jail = tempfile.mkdtemp(prefix="jail-", dir=workdir)
    except OSError as e:
        raise Failed(f"cannot make a jail in {workdir}: {e}") from None
    try:
        yield jail
    finally:
        shutil.rmtree(jail, ignore_errors=True)


def write_credential_file(jail: str, token: str) -> str:
    """The token in a file only its owner can read, inside the adapter's jail."""
    fd, path = tempfile.mkstemp(prefix=".credential-", dir=jail)  # created 0600
    with os.fdopen(fd, "w") as f:
        f.write(token)
    return os.path.abspath(path)


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
    def __init__(self, config: Config, packs: dict[str, Pack], reading: Reading = REFERENCE):
        self.config = config
        self.packs = packs
        self.reading = reading
        self.say = reading.words
        self.activated: set[str] = set()
        self.bindings: dict[str, tuple[str, str]] = {}  # pack_id -> (token, identity)
        self.public_connected: set[str] = set()  # public packs connect was called for
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

    def check_activated(self, pack: Pack):
        if pack.pack_id not in self.activated:
            raise Denied(self.say("not-activated", pack=pack.pack_id))

    def authorize(self, pack: Pack, verb_key: str) -> dict:
        """The verb's Policy row when the Principal may run it (args aside); else Denied."""
        p, v = pack.pack_id, verb_key
        if pack.command(verb_key) is None:
            raise Denied(self.say("unknown-verb", pack=p, verb=v))
        row = pack.policy["verbs"].get(verb_key)
        if row is None:
            raise Denied(self.say("no-policy", pack=p, verb=v))
        if not self.reading.activation_last:
            self.check_activated(pack)
        capability = EXEC_WRITE if row["operation"] == "write" else EXEC_READ
        if not self.holds(capability, p, verb_key):
            raise Denied(self.say("missing-write" if capability == EXEC_WRITE else "missing-read", pack=p, verb=v))
        if row["privacy"]["land"] == "brain" and self.config.project_id is None:
            raise Denied(self.say("brain-needs-project", pack=p, verb=v))
        return row

    def binding_of(self, pack: Pack) -> tuple[str, str] | None:
        """(token, identity) for a bound pack, None for a public one; Denied when not connected."""
        if pack.binding is None:
            return None
        if pack.pack_id not in self.bindings:
            raise Denied(self.say("not-connected", pack=pack.pack_id))
        return self.bindings[pack.pack_id]

    def check_elevation(self, pack: Pack):
        """A mothership Binding needs the elevation grant."""
        decl = pack.binding
        if decl is not None and decl["mode"] == "mothership" and not self.holds(ELEVATE, pack.pack_id):
            raise Denied(self.say("elevation", pack=pack.pack_id))

    def mint_for_exec(self, pack: Pack) -> tuple[str, str] | None:
        """mint_in_exec: a Binding minted for this exec, as the spec's createAcmeRuntime does
        (`const cred = await deps.hub.mint(pack, authz) // fail closed inside`)."""
        if pack.binding is None:
            return None
        self.check_elevation(pack)
        return self.mint(pack.pack_id, pack.binding["hub"])

    # -- 6 and 7. adapter resolution ----------------------------------------------------------

    def bin_is_listed(self, name: str) -> bool:
        """Does the bin allow-list let `name` run? Native-local has no allow-list, unless the
        reading keeps a given one."""
        if self.config.sandbox or (self.reading.native_local_keeps_allow_list and self.config.allow_bins):
            return name in self.config.allow_bins
        return True

    def program_for(self, pack: Pack) -> str | None:
        """The wrap bin's path, or None for an in-process adapter; Denied when not runnable."""
        wrap = pack.wrap
        if "inproc" in wrap:
            if wrap["inproc"] not in INPROC:
                raise Denied(self.say("unknown-inproc", bin=wrap["inproc"]))
            return None
        name = wrap["bin"]
        if self.reading.bin_path_allowed and "/" in name and name in self.config.allow_bins:
            # the allow-list names this exact path: run it, if it is an absolute path to a file
            if not (os.path.isabs(name) and os.path.isfile(name)):
                raise Denied(self.say("unknown-bin", bin=name))
            return name
        if not self.bin_is_listed(name):
            raise Denied(self.say("bin-not-allowed", bin=name))
        if "/" in name or "\\" in name or name in (".", ".."):  # the allow-list names bins, never paths
            raise Denied(self.say("unknown-bin", bin=name))
        for directory in self.config.bin_path:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        raise Denied(self.say("unknown-bin", bin=name))

    def adapter_env(self, pack_id: str, verb_key: str) -> dict[str, str]:
        env = {"PATH": os.pathsep.join(self.config.bin_path), "HCP_PACK_ID": pack_id, "HCP_VERB_KEY": verb_key}
        if not self.config.sandbox:  # native-local, by explicit opt-in only
            for k, v in self.config.environment.items():
                env.setdefault(k, v)
        return env

    def run_bin(self, program: str, argv: list[str], pack_id: str, verb_key: str, token: str | None) -> dict:
        env = self.adapter_env(pack_id, verb_key)
        with jail_for_exec(self.config.workdir, self.reading.fresh_jail_per_exec) as jail:
            if token is not None and self.reading.credential_file:
                env["HCP_CREDENTIAL_FILE"] = write_credential_file(jail, token)
            elif token is not None:
                env["HCP_BINDING"] = token
            try:
                return spawn(program, argv, jail, env)
            finally:
                if "HCP_CREDENTIAL_FILE" in env:
                    with contextlib.suppress(OSError):
                        os.remove(env["HCP_CREDENTIAL_FILE"])

    # -- the surface harnesses see ------------------------------------------------------------

    def list_packs(self) -> list[dict]:
        return [dict(p.surface, public=p.public, activated=p.pack_id in self.activated) for p in self.packs.values()]

    def get_pack(self, pack_id: str) -> dict | None:
        """The driver's getPack: the pack as list_packs lists it, None when not installed."""
        return next((p for p in self.list_packs() if p.get("pack_id") == pack_id), None)

    def skill(self, pack_id: str) -> dict | None:
        """The Skill a harness sees: the pack's HARNESS.md as loaded."""
        pack = self.packs.get(pack_id)
        if pack is None:
            return None
        return {"pack_id": pack_id, "skill": pack.skill or ""}

    def cli(self, command: str, args: dict) -> dict:
        """The CLI face: the command whose `command` (its CLI twin) is `command`, run as its
        verb_key is run through the JSON face."""
        for pack in self.packs.values():
            for c in pack.surface.get("commands", []):
                if c.get("command") == command:
                    return self.exec(pack.pack_id, c["verb_key"], args)
        return _envelope("", "", error=f"unknown command {command}")

    def activating(self) -> tuple[str, ...]:
        """The grants that activate a pack: pack.activate or any other (which implies it), or
        under narrow_activation only pack.activate and the exec axes."""
        if self.reading.narrow_activation:
            return (ACTIVATE, EXEC_READ, EXEC_WRITE)
        return CAPABILITIES

    def activate(self, pack_ids: list[str]) -> list[dict]:
        out = []
        for pack_id in pack_ids:
            if pack_id not in self.packs:
                out.append(_pack_result(pack_id, self.say("unknown-pack", pack=pack_id)))
            elif not any(self.holds(c, pack_id) for c in self.activating()):
                out.append(_pack_result(pack_id, self.say("no-grant", pack=pack_id)))
            else:
                self.activated.add(pack_id)
                out.append(_pack_result(pack_id))
        return out

    def connect(self, pack_id: str) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return _pack_result(pack_id, self.say("unknown-pack", pack=pack_id))
        if pack_id not in self.activated:
            return _pack_result(pack_id, self.say("not-activated", pack=pack_id))
        decl = pack.binding
        if decl is None:
            self.public_connected.add(pack_id)
            return _pack_result(pack_id)  # public: nothing to mint
        if not self.holds(CONNECT, pack_id):
            return _pack_result(pack_id, self.say("missing-connect", pack=pack_id))
        try:
            self.check_elevation(pack)
            token, identity = self.mint(pack_id, decl["hub"])
        except Denied as e:
            return _pack_result(pack_id, str(e))  # and nothing else: no environment fallback
        self.bindings[pack_id] = (token, identity)
        return _pack_result(pack_id, binding={"mode": decl["mode"], "hub": decl["hub"], "identity": identity})

    def mint(self, pack_id: str, hub: str) -> tuple[str, str]:
        """The hub: the next scripted outcome for the pack, one consumed per mint, the last one
        again once the script is used up (as hcpspec's scripted hub); a pack with no script
        always gets a fresh token."""
        script = self.hub.get(pack_id)
        if not script:
            outcome = MintOutcome(ok=True)
        else:
            outcome = script.pop(0) if len(script) > 1 else script[0]
        if not outcome.ok:
            raise Denied(self.say("mint-failed", pack=pack_id, hub=hub, error=outcome.error or "hub refused"))
        token = outcome.token or f"mini-{secrets.token_hex(8)}"
        identity = outcome.identity or f"{hub}:{self.config.principal['id']}"
        return token, identity

    def exec(self, pack_id: str, verb_key: str, args: dict) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return _envelope(pack_id, verb_key, error=self.say("unknown-pack", pack=pack_id))
        row = pack.policy["verbs"].get(verb_key)
        trail: dict = {}  # how far the pipeline got, for the audit record
        result, error, outcome = None, None, "ok"
        try:
            result = self._run(pack, verb_key, args, trail)
        except Denied as e:
            error, outcome = str(e), "denied"
        except Failed as e:
            error, outcome = str(e), "error"
        audited = outcome != "denied" or self.reading.audit_denied_writes
        if row is not None and row["operation"] == "write" and audited:
            self._audit(pack_id, verb_key, trail.get("identity"), outcome, error)
        return _envelope(pack_id, verb_key, result, error)

    def _run(self, pack: Pack, verb_key: str, args: dict, trail: dict):
        """The pipeline, in the contract's order; any step raises to deny."""
        if self.reading.typed_args and pack.command(verb_key) and verb_key in pack.policy["verbs"]:
            # as soon as the verb is known: before activation, grants and the confirm gate
            check_arg_types(pack, verb_key, args, self.say)
        if self.reading.declared_args_only and pack.command(verb_key) and verb_key in pack.policy["verbs"]:
            check_args_declared(pack, verb_key, args, self.say)
        row = self.authorize(pack, verb_key)
        if row.get("confirm") and not (_is_true(args.get("confirm")) or _is_true(args.get("apply"))):
            raise Denied(self.say("confirm", pack=pack.pack_id, verb=verb_key))
        if self.reading.activation_last:
            self.check_activated(pack)
        bound = self.mint_for_exec(pack) if self.reading.mint_in_exec else self.binding_of(pack)
        token, trail["identity"] = bound if bound else (None, None)
        program = self.program_for(pack)
        argv = render_argv(pack, verb_key, args, self.reading)
        if program is None:
            return INPROC[pack.wrap["inproc"]](argv, token)
        return self.run_bin(program, argv, pack.pack_id, verb_key, token)

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

    def connected(self, pack: Pack) -> bool:
        if pack.binding is not None:
            return pack.pack_id in self.bindings
        return pack.pack_id in self.public_connected or not self.reading.public_connect_flag

    def availability(self, pack_id: str) -> dict:
        pack = self.packs.get(pack_id)
        if pack is None:
            return {"pack_id": pack_id, "installed": False, "reasons": {"installed": self.say("not-installed", pack=pack_id)}, "verbs": []}
        verbs = []
        for cmd in pack.surface["commands"]:
            verb_key = cmd["verb_key"]
            row = pack.policy["verbs"][verb_key]
            reasons = {}
            activated = pack_id in self.activated
            connected = self.connected(pack)
            if not activated:
                reasons["activated"] = self.say("flag-not-activated", pack=pack_id)
            if not connected:
                flag = "flag-not-connected" if pack.binding is not None else "flag-public-not-connected"
                reasons["connected"] = self.say(flag, pack=pack_id)
            # Executable: would an exec pass every check that does not depend on its args?
            try:
                self.authorize(pack, verb_key)
                self.check_activated(pack)
                if self.reading.mint_in_exec:
                    self.check_elevation(pack)  # the exec would mint: only elevation can stop it here
                else:
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

    # -- 3. The grants held: exactly the ones create gave, nothing implicit ------------------

    def grants(self) -> list[dict]:
        held = []
        for g in self.config.grants:
            entry = {"capability": g.capability, "pack_id": g.pack_id}
            if g.verb_keys is not None:
                entry["verb_keys"] = list(g.verb_keys)
            if g.tenant_id is not None:
                entry["tenant_id"] = g.tenant_id
            held.append(entry)
        return held

    # -- 10. Sense ----------------------------------------------------------------------------

    def set_sense(self, enabled: bool) -> None:
        """`sense.enable` switched after create: routing reads the config on every event."""
        self.config.sense_enabled = enabled

    def sense_on(self) -> bool:
        if self.reading.sense_on_unless_disabled:
            return self.config.sense_enabled is not False
        return self.config.sense_enabled is True

    def sense(self, pack_id: str, trigger: str, payload) -> dict:
        pack = self.packs.get(pack_id)
        if self.reading.sense_after_connect and pack is not None and pack.binding is not None and pack_id not in self.bindings:
            # before every other check: a Binding pack's events wait for its Binding
            return {"accepted": False, "reason": self.say("sense-not-connected", pack=pack_id)}
        if not self.sense_on():
            return {"accepted": False, "reason": self.say("sense-disabled")}
        pack = self.packs.get(pack_id)
        if pack is None:
            return {"accepted": False, "reason": self.say("sense-unknown-pack", pack=pack_id)}
        if self.reading.sense_on_unless_disabled and pack_id not in self.activated:
            return {"accepted": False, "reason": self.say("sense-not-activated", pack=pack_id)}
        if trigger not in pack.triggers or trigger not in pack.policy.get("triggers", {}):
            return {"accepted": False, "reason": self.say("undeclared-trigger", pack=pack_id, trigger=trigger)}
        self.sink.append({"pack_id": pack_id, "trigger": trigger, "payload": payload})
        return {"accepted": True}

    def sense_sink(self) -> list[dict]:
        return list(self.sink)

    def audit(self) -> list[dict]:
        return list(self.audit_log)
