#!/usr/bin/env python3
"""Lint the contract cases' arrangement (issue 22, pattern 1): every step that is arrangement,
not the point of its case, takes the most permissive arrangement the spec allows, so that no
runtime fails a case for a precondition the spec lets it demand.

Checks, over every case of vectors/contract/** (MUST and PROFILE alike):

- typed-args: every exec arg a command declares with a `type` in surface.json is of that type
  (a runtime may refuse args that are not; allowed variant `typed-args`).
- declared-args: an exec of a command the wrap names an argv for sends only the args the
  command declares, `confirm` and `apply` aside (a runtime may refuse others; allowed variant
  `declared-args-only`); pass-through takes any args.
- sense-after-connect: every sense step of an installed Binding pack (not public) comes after
  a connect of that pack (a runtime may deliver only once connected; `sense-after-connect`).
- sense-after-activate: every sense step of an installed pack comes after its activation
  (a runtime may drop events of packs not activated; `sense-on-after-activation`).
- activate-grant: every activation a case expects to succeed has a `pack.activate` or
  `verb.exec.*` grant on the pack (a runtime may not read pack.connect or binding.elevate as
  implying activation; allowed variant `narrow-activation`).
- sense-enable: every case with a sense step sets `sense.enable` (the spec gives no default;
  off-by-default is PROFILE), except cases whose point is the default (`"sense-default"` below).

A case whose point is one of these preconditions names it in `EXEMPT` with why. Prints each
finding as `file: check: detail`, exits 1 if there is any.
"""
import copy
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The vectors folder to check (default: this checkout's); argv[1] names another.
VECTORS = pathlib.Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "vectors"

# case id -> {check: why it is the point of the case}
EXEMPT = {
    "sense-off-by-default": {"sense-enable": "its point is the default (PROFILE)"},
}

TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
}


GATE_ARGS = {"confirm", "apply"}
ACTIVATING = {"pack.activate", "verb.exec.read", "verb.exec.write"}


def expects_ok(expect):
    """The default expectation of a step (every result ok), or one that asks only ok: true."""
    if expect is None:
        return True
    found = []

    def walk(v):
        if isinstance(v, dict):
            if "ok" in v:
                found.append(v["ok"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(expect)
    return bool(found) and all(x is True for x in found)


def pointer_set(doc, pointer, value):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    last = parts[-1]
    if isinstance(node, list):
        if value is None:
            del node[int(last)]
        elif last == "-":
            node.append(value)
        else:
            node[int(last)] = value
    elif value is None:
        node.pop(last, None)
    else:
        node[last] = value


def surface_of(ref):
    """The surface.json a setup pack entry installs, or None if it is not JSON."""
    if isinstance(ref, str):
        ref = {"from": ref}
    surface = None
    if ref.get("from"):
        surface = json.loads((VECTORS / "packs" / ref["from"] / "surface.json").read_text())
    files = ref.get("files", {})
    if "surface.json" in files:
        content = files["surface.json"]
        if content is None:
            return None
        if isinstance(content, str):
            try:
                surface = json.loads(content)
            except ValueError:
                return None
        else:
            surface = copy.deepcopy(content)
    for pointer, value in ref.get("patch", {}).get("surface.json", {}).items():
        if surface is not None:
            pointer_set(surface, pointer, value)
    return surface if isinstance(surface, dict) else None


def packs_of(refs):
    out = {}
    for ref in refs:
        s = surface_of(ref)
        if s and isinstance(s.get("pack_id"), str):
            out.setdefault(s["pack_id"], s)
    return out


def command(surface, verb_key):
    for c in surface.get("commands") or []:
        if isinstance(c, dict) and c.get("verb_key") == verb_key:
            return c
    return None


def check(path):
    case = json.loads(path.read_text())
    exempt = EXEMPT.get(case["id"], {})
    found = []

    def report(name, detail):
        if name not in exempt:
            found.append(f"{path.relative_to(VECTORS.parent)}: {name}: {detail}")

    setup = case.get("setup", {})
    grants = setup.get("grants") or []
    packs = packs_of(setup.get("packs", []))
    activated, connected = set(), set()
    sense_steps = 0
    for i, step in enumerate(case.get("steps", [])):
        if "install" in step:
            # runtime.create of the setup's packs: a fresh runtime, nothing activated yet.
            activated, connected = set(), set()
        elif "activate" in step:
            ids = step["activate"]
            ids = [ids] if isinstance(ids, str) else ids
            activated.update(ids)
            if expects_ok(step.get("expect")):
                for pid in ids:
                    caps = {g.get("capability") for g in grants if g.get("pack_id") == pid}
                    if not caps & ACTIVATING:
                        report("activate-grant", f"step {i}: {pid} activated with only {sorted(caps)}")
        elif "connect" in step:
            connected.add(step["connect"])
        elif "exec" in step:
            ex = step["exec"]
            s = packs.get(ex.get("pack_id"))
            c = s and command(s, ex.get("verb_key"))
            if not c:
                continue
            args = ex.get("args") or {}
            named = ((s.get("wrap") or {}).get("commands") or {}).get(ex.get("verb_key"))
            if named is not None:
                for name in args:
                    if name not in (c.get("args") or {}) and name not in GATE_ARGS:
                        report("declared-args", f"step {i}: {ex['pack_id']}.{ex['verb_key']} does not declare arg {name}")
            for name, spec in (c.get("args") or {}).items():
                want = spec.get("type")
                if want in TYPES and name in args and not TYPES[want](args[name]):
                    report(
                        "typed-args",
                        f"step {i}: {ex['pack_id']}.{ex['verb_key']} arg {name} is declared "
                        f"{want}, sent {json.dumps(args[name])}",
                    )
        elif "sense" in step:
            sense_steps += 1
            pid = step["sense"].get("pack_id")
            s = packs.get(pid)
            if s is None:
                continue
            if pid not in activated:
                report("sense-after-activate", f"step {i}: sense of {pid} before it is activated")
            if not s.get("public") and pid not in connected:
                report("sense-after-connect", f"step {i}: sense of Binding pack {pid} before connect")
    if sense_steps and "enable" not in (setup.get("sense") or {}):
        report("sense-enable", "sense steps without sense.enable in setup")
    return found


def main():
    findings = []
    for path in sorted((VECTORS / "contract").rglob("*.json")):
        if path.name == "suite.json":
            continue
        findings += check(path)
    for f in findings:
        print(f)
    print(f"{len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
