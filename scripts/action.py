#!/usr/bin/env python3
"""The GitHub Action's one step (action.yml): install hcpspec, run it, tell GitHub what it found.

    scripts/action.py

Everything comes from the environment, as action.yml passes its inputs (a run outside GitHub
sets them by hand; CI does, with files of its own as GITHUB_STEP_SUMMARY and GITHUB_OUTPUT):

  INPUT_HCPSPEC_VERSION  what to install, under RUNNER_TEMP (else the temp dir):
                         `action`: the Action's own version: at a tag vX.Y.Z (GITHUB_ACTION_REF)
                           hcpspec==X.Y.Z from PyPI, else (not published, or a branch or commit)
                           `cargo install --locked --path` of the Action's checkout
                           (GITHUB_ACTION_PATH, else the folder holding scripts/);
                         `latest`, a version (`0.1.0`), a wheel file or an http(s) URL of one:
                           pip installs it into a fresh venv; `source`: the cargo build.
                         Empty: use HCPSPEC.
  HCPSPEC                the binary when nothing is installed (default: `hcpspec` on PATH)
  INPUT_RUNTIME          one --runtime per line (empty: the suites' embedded targets)
  INPUT_NAME             one --name per line, in the runtimes' order
  INPUT_SUITE            one --suite per line
  INPUT_SHARD, INPUT_SHARDS   run shard k of n (--partition k/n)
  INPUT_SNAPSHOTS        --snapshots DIR;  INPUT_EXPECTATIONS  --expectations FILE
  INPUT_OUT              the output folder (default hcpspec-report)
  INPUT_ARGS             more arguments, shell words (`--jobs 4 --strict-expectations`)
  INPUT_BASE_RESULT      compare mode: a result.json (or a folder holding one) of the base
                         branch; after the run, `hcpspec diff BASE OUT` goes to the log and the
                         step summary, and the step fails only when a case regressed (newly
                         fails the run), not on failures the base had too
  GITHUB_STEP_SUMMARY, GITHUB_OUTPUT   the files GitHub gives a step (unset: not written)

It appends the run's summary.md to the step summary, prints a `::error` annotation per case
that fails the run (junit.xml's failures and errors, which agree with the exit code, summary.md
and the terminal), titled by the case and pointing at no file (hcpspec's case files are not in
the caller's repository; a stale expectation points at the expectations file), the cases that
fail only for want of a snapshot in one annotation with the command that records them; sets the
outputs `out`, `result-json`, `exit-code`, `failed` (the count of such cases) and `version`
(`hcpspec --version`'s first line), and exits with hcpspec's code (in compare mode, `regressed`
too, and the diff's code once the run finished). It uploads nothing: the output folder is the
caller's to keep. An install that fails is one `::error` line saying why (pip's and cargo's
output stay in a file it names), a step-summary line and the outputs (exit-code 2, nothing
run), and exit 2.

What an implementation says is text, never a workflow command (docs/security.md, "The GitHub
Action"): hcpspec's output goes to the log under `::stop-commands::` with a token no
implementation can know; annotations escape what they quote; hcpspec runs without the step's
files (GITHUB_OUTPUT, GITHUB_ENV, ...); links in the step summary are broken.
"""

import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET

MAX_ANNOTATIONS = 50
MAX_SUMMARY = 1_000_000  # GitHub refuses a step summary past 1 MiB
# After hcpspec exits, how long its output pipe may still be drained (a process it left behind
# could hold it open) before the rest is dropped and commands resume.
DRAIN_SECONDS = 5
# The step's files: an implementation run under hcpspec inherits its environment, and one of
# these would let it set outputs, environment or PATH of later steps, or write the summary.
STEP_FILES = ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")


def lines(name):
    return [l.strip() for l in os.environ.get(name, "").splitlines() if l.strip()]


class InstallFailed(Exception):
    """Why hcpspec could not be installed, in one line: the step's `::error` says it."""


# A version as `hcpspec-version` gives it: `0.1.0`, `v0.1.0`, `0.2.0rc1`.
VERSION = re.compile(r"v?(\d+\.\d+\.\d+(?:[-.+]?[0-9A-Za-z.]+)?)")
CARGO_MISSING = ("cargo is not on PATH (add dtolnay/rust-toolchain before this step, "
                 "or use a released version)")


def action_path():
    """The Action's own checkout: where GitHub put it, else the folder holding scripts/."""
    return os.environ.get("GITHUB_ACTION_PATH") or os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))


def action_ref(path):
    """The ref the Action is used at (a tag, a branch, a commit). GitHub leaves
    GITHUB_ACTION_REF empty in a composite action's steps (actions/runner#2473), so the folder
    it checked the Action out to (`_actions/OWNER/REPO/REF`) names it too."""
    ref = os.environ.get("GITHUB_ACTION_REF", "").strip()
    if not ref and "/_actions/" in path.replace(os.sep, "/"):
        ref = os.path.basename(os.path.normpath(path))
    return ref


def release_of(ref, path):
    """The release a ref is (`0.1.0` for a tag `v0.1.0`, or `v` and the checkout's own
    version), None for a branch or a commit, which may differ from every release."""
    try:
        with open(os.path.join(path, "Cargo.toml"), encoding="utf-8") as f:
            own = re.search(r'(?m)^version\s*=\s*"([^"]+)"', f.read())
    except OSError:
        own = None
    if re.fullmatch(r"v\d+\.\d+\.\d+", ref) or (own and ref == "v" + own.group(1)):
        return ref[1:]
    return None


def logged(cmd, log):
    """Run cmd, its output appended to the file log (a whole pip or cargo run in the step log
    would bury the one line that matters); its exit code."""
    with open(log, "ab") as f:
        f.write(f"$ {shlex.join(cmd)}\n".encode())
        f.flush()
        try:
            return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT).returncode
        except OSError as e:
            f.write(f"{e}\n".encode())
            return 127


def last_error(log):
    """The last line of log that says `error` (pip's `ERROR: …`, cargo's `error: …`), else its
    last line."""
    with open(log, encoding="utf-8", errors="replace") as f:
        found = [l.strip() for l in f if l.strip()]
    errors = [l for l in found if l.lower().startswith("error")]
    return (errors or found or ["no output"])[-1]


def pip_for_others():
    """Whether this Python's pip can install into another environment (`--python`: pip 22.3)."""
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "--version"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    m = re.match(r"pip (\d+)\.(\d+)", out)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (22, 3)


def from_pypi(spec, what, work, log):
    """pip installs spec (a requirement, a wheel file or URL) into a fresh venv; its binary."""
    venv = os.path.join(work, "venv")
    bindir = os.path.join(venv, "Scripts" if os.name == "nt" else "bin")
    # With a pip of 22.3 or newer here, the venv gets no pip of its own (ensurepip installing one
    # into every fresh venv took most of an install's time) and this pip installs into it.
    outer = pip_for_others()
    if logged([sys.executable, "-m", "venv", *(["--without-pip"] if outer else []), venv], log):
        raise InstallFailed(f"no venv: {last_error(log)} (output: {log})")
    python = os.path.join(bindir, "python.exe" if os.name == "nt" else "python")
    pip = [sys.executable, "-m", "pip", "--python", python] if outer else [os.path.join(bindir, "pip")]
    if logged([*pip, "install", "--disable-pip-version-check", spec], log) == 0:
        return os.path.join(bindir, "hcpspec")
    with open(log, encoding="utf-8", errors="replace") as f:
        if "No matching distribution found" in f.read():
            raise InstallFailed(f"no {what} on PyPI (pip's output: {log})")
    raise InstallFailed(f"pip failed: {last_error(log)} (output: {log})")


def from_source(work, log, why=None):
    """cargo builds the Action's checkout into work; its binary. `why` says why it is built
    (when it was not asked for)."""
    why = f"{why}; " if why else ""
    cargo = shutil.which("cargo")
    if not cargo:
        raise InstallFailed(f"{why}building from source: {CARGO_MISSING}")
    path, root = action_path(), os.path.join(work, "hcpspec-build")
    print(f"hcpspec action: {why}building hcpspec from source ({path}) with cargo, which takes "
          f"minutes (its output: {log})", flush=True)
    if logged([cargo, "install", "--locked", "--path", path, "--root", root], log):
        raise InstallFailed(f"{why}cargo install failed: {last_error(log)} (output: {log})")
    return os.path.join(root, "bin", "hcpspec")


def install(value, work):
    """The hcpspec binary `hcpspec-version` names, installed under work (see the module's
    text); InstallFailed says why not."""
    log = os.path.join(work, "install.log")
    if value == "action":
        ref = action_ref(action_path())
        release = release_of(ref, action_path())
        if release is None:
            return from_source(work, log, f"the Action is used at {ref or 'a checkout'}, not a release tag")
        try:
            return from_pypi(f"hcpspec=={release}", f"hcpspec {release}", work, log)
        except InstallFailed as e:
            return from_source(work, log, str(e))
    if value == "source":
        return from_source(work, log)
    if value == "latest":
        return from_pypi("hcpspec", "hcpspec", work, log)
    if value.endswith(".whl") and re.match(r"(?i)https?://", value):
        return from_pypi(value, value, work, log)
    if value.endswith(".whl") or os.sep in value:
        if not os.path.isfile(value):
            raise InstallFailed(f"the wheel file {os.path.abspath(value)} does not exist")
        return from_pypi(os.path.abspath(value), value, work, log)
    if VERSION.fullmatch(value):
        version = VERSION.fullmatch(value).group(1)
        return from_pypi(f"hcpspec=={version}", f"hcpspec {version}", work, log)
    raise InstallFailed("not `action`, `latest`, `source`, a version, a wheel file or a URL of one")


def version_of(binary):
    """The first line of `hcpspec --version` (`hcpspec 0.1.0`): the binary runs, and the log
    and the `version` output say what certified the run."""
    try:
        p = subprocess.run([binary, "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                           env=step_env())
    except OSError as e:
        raise InstallFailed(f"{binary} does not run: {e.strerror}")
    said = p.stdout.decode("utf-8", "replace").strip().splitlines()
    if p.returncode or not said:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InstallFailed(f"`{binary} --version` failed: {(err or [f'exit {p.returncode}'])[-1]}")
    return said[0].strip()


def install_failed(value, why, out):
    """The one line of a failed install, its step-summary line and the outputs (nothing ran:
    no result, no failures); exit 2, as for bad input."""
    asked = f"hcpspec-version `{value}`" if value else "hcpspec-version empty (HCPSPEC, else hcpspec on PATH)"
    line = f"{asked}: {why}"
    print(f"::error title=hcpspec install::{escape(line)}", flush=True)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(inert(f"**hcpspec could not be installed**: {line}") + "\n")
    write_outputs(out, "", 2, 0, "")
    return 2


def command(binary, out):
    cmd = [binary, "run", "--out", out]
    for r in lines("INPUT_RUNTIME"):
        cmd += ["--runtime", r]
    for n in lines("INPUT_NAME"):
        cmd += ["--name", n]
    for s in lines("INPUT_SUITE"):
        cmd += ["--suite", s]
    shard, shards = os.environ.get("INPUT_SHARD", "").strip(), os.environ.get("INPUT_SHARDS", "").strip()
    if shard or shards:
        if not (shard and shards):
            raise SystemExit("hcpspec action: shard and shards go together (shard 2 of shards 4)")
        cmd += ["--partition", f"{shard}/{shards}"]
    if os.environ.get("INPUT_SNAPSHOTS", "").strip():
        cmd += ["--snapshots", os.environ["INPUT_SNAPSHOTS"].strip()]
    if os.environ.get("INPUT_EXPECTATIONS", "").strip():
        cmd += ["--expectations", os.environ["INPUT_EXPECTATIONS"].strip()]
    return cmd + shlex.split(os.environ.get("INPUT_ARGS", ""))


def escape(text, prop=False):
    """A workflow command's escaping: data escapes %, CR, LF; a property also : and ,."""
    text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def step_env(quiet_inputs=False):
    """The environment hcpspec runs in: without the step's files; for `hcpspec diff`, also
    without the Action's inputs (INPUT_*), whose values hcpspec would otherwise redact from the
    cases and runtimes it names (`contract` as `[redacted: $INPUT_SUITE]`)."""
    return {k: v for k, v in os.environ.items()
            if k not in STEP_FILES and not (quiet_inputs and k.startswith("INPUT_"))}


def relay(cmd, quiet_inputs=False):
    """Run cmd, its stdout and stderr copied to ours under `::stop-commands::` with a random
    token: nothing it prints is a workflow command (GitHub's runner obeys only the token while
    stopped, so a `::stop-commands::` of the implementation's own cannot outlast ours). Returns
    the exit code. Commands resume on a line of their own, after the pipe is drained."""
    token = secrets.token_hex(16)
    out = sys.stdout.buffer
    print(f"::stop-commands::{token}", flush=True)
    env = step_env(quiet_inputs)
    lock, state = threading.Lock(), {"open": True, "last": b"\n"}

    def copy(pipe):
        while chunk := pipe.read1(65536):
            with lock:
                if not state["open"]:
                    return
                out.write(chunk)
                out.flush()
                state["last"] = chunk[-1:]

    try:
        print("hcpspec action:", shlex.join(cmd), flush=True)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        reader = threading.Thread(target=copy, args=(proc.stdout,), daemon=True)
        reader.start()
        code = proc.wait()
        reader.join(DRAIN_SECONDS)
    finally:
        with lock:
            state["open"] = False
            if state["last"] not in (b"\n", b"\r"):
                out.write(b"\n")
            out.write(f"::{token}::\n".encode())
            out.flush()
    return code


# Autolinked in a step summary: a scheme's `://`, `www.`, an address's `@`. A zero-width space
# after the `:`, the `www` or the `@` shows the same text and matches none of them.
LINKS = re.compile(r"(?i)(?<=[a-z0-9+.-]:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)(?=\w)")


def inert(markdown):
    """summary.md with its links broken, for the step summary (the file keeps them)."""
    return LINKS.sub("\u200b", markdown)


def failures(out):
    """(case, testsuite, message) of each testcase junit.xml marks <failure> or <error>: what
    fails the run, one definition in every rendering (summary.md and the terminal count them)."""
    path = os.path.join(out, "junit.xml")
    if not os.path.exists(path):
        return []
    found = []
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            for kind in ("failure", "error"):
                el = case.find(kind)
                if el is not None:
                    text = (el.get("message") or "") + ("\n" + el.text.strip() if el.text and el.text.strip() else "")
                    found.append((case.get("name", ""), suite.get("name", ""), text.strip()))
    return found


# junit.xml's messages of a case failing the run for want of a snapshot, and of a stale
# expectation (src/report/junit.rs).
NO_SNAPSHOT = "no snapshot yet"
STALE = "expected to fail, but passes"


def record_command(cmd):
    """The run again, recording its snapshots: `hcpspec run … --accept`, without --out and the
    shard (every case's snapshot is recorded at once)."""
    args, skip = [], False
    for a in cmd[1:]:
        if skip:
            skip = False
        elif a in ("--out", "--partition"):
            skip = True
        elif a != "--ci":
            args.append(a)
    return shlex.join(["hcpspec"] + args + ["--accept"])


def annotate(failed, cmd, regressed=None):
    """An `::error` per case that fails the run, titled by its case; none points at a file of
    hcpspec's (not in the user's repository), a stale expectation at the user's expectations
    file. The cases failing only for want of a snapshot are one annotation saying how to record
    them, with their count. In compare mode (`regressed`: the (testsuite, case) that regressed)
    a failure the base had too is a `::warning`: only a regression fails the step."""
    expectations = os.environ.get("INPUT_EXPECTATIONS", "").strip()
    new = [f for f in failed if f[2].startswith(NO_SNAPSHOT)]
    rest = [f for f in failed if not f[2].startswith(NO_SNAPSHOT)]
    if new:
        folder = os.environ.get("INPUT_SNAPSHOTS", "").strip() or "the --snapshots folder"
        print(f"::error title={escape(f'hcpspec: {len(new)} case(s) have no snapshot yet', True)}::"
              + escape(f"Under CI a missing snapshot fails the run. Record them: {record_command(cmd)}, "
                       f"then commit {folder}."))
    for name, suite, message in rest[:MAX_ANNOTATIONS]:
        # The testsuite is `SUITE RUNTIME`: the title names the case and the runtime.
        runtime = suite.partition(" ")[2]
        title = f"{name}: {runtime}" if runtime == "transport parity" else f"{name} on {runtime}" if runtime else name
        props = f"title={escape(title, True)}"
        if message.startswith(STALE) and expectations:
            props = f"file={escape(expectations, True)}," + props
        level = "error" if regressed is None or (suite, name) in regressed else "warning"
        print(f"::{level} {props}::{escape(message or 'fails the run')}")
    if len(rest) > MAX_ANNOTATIONS:
        print(f"::error title=hcpspec::{len(rest) - MAX_ANNOTATIONS} more cases fail the run (see junit.xml)")


def compare(binary, base, out, summary):
    """Compare mode: `hcpspec diff BASE OUT`, its text in the log (commands stopped, as the
    run's), its Markdown appended to the step summary (links broken); returns (its exit code:
    1 when a case regressed, 2 on a bad base; the count of regressions)."""
    cmd = [binary, "diff", base, out]
    code = relay(cmd, quiet_inputs=True)
    env = step_env(quiet_inputs=True)
    md = subprocess.run(cmd + ["--format", "markdown"], capture_output=True, env=env)
    js = subprocess.run(cmd + ["--format", "json"], capture_output=True, env=env)
    regressed = set()
    try:
        for r in json.loads(js.stdout)["runtimes"]:
            for c in r["changes"]:
                if c["kind"] == "regressed":
                    # junit.xml's testsuite is `SUITE RUNTIME`, its testcase the case.
                    regressed.add((f"{r['suite']} {r['runtime']}", c["case"]))
    except (ValueError, KeyError, TypeError):
        pass
    if summary and md.stdout:
        text = inert(md.stdout.decode("utf-8", "replace"))
        if len(text.encode()) > MAX_SUMMARY:
            text = text.encode()[:MAX_SUMMARY].decode("utf-8", "ignore") + "\n\n… (cut)\n"
        with open(summary, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    return code, regressed


def write_outputs(out, result_json, code, failed, version, regressed=None):
    outputs = os.environ.get("GITHUB_OUTPUT")
    if outputs:
        with open(outputs, "a", encoding="utf-8") as f:
            f.write(f"out={out}\nresult-json={result_json}\n")
            f.write(f"exit-code={code}\nfailed={failed}\nversion={version}\n")
            if regressed is not None:
                f.write(f"regressed={regressed}\n")


def hcpspec(value):
    """The binary to run and what its `--version` says; InstallFailed says why there is none."""
    if not value:
        binary = os.environ.get("HCPSPEC", "hcpspec")
    else:
        base = os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()
        binary = install(value, tempfile.mkdtemp(prefix="hcpspec-", dir=base))
    return binary, version_of(binary)


def main():
    value = os.environ.get("INPUT_HCPSPEC_VERSION", "").strip()
    out = os.environ.get("INPUT_OUT", "").strip() or "hcpspec-report"
    try:
        binary, version = hcpspec(value)
    except InstallFailed as e:
        return install_failed(value, e, out)
    print(f"hcpspec action: {version} ({binary})", flush=True)
    cmd = command(binary, out)
    code = relay(cmd)

    failed = failures(out)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    base = os.environ.get("INPUT_BASE_RESULT", "").strip()
    step_code, regressed = code, None
    # Only a finished run (0 or 1) is compared: one that did not finish fails the step as it is.
    if base and code in (0, 1):
        step_code, regressed = compare(binary, base, out, summary)
    annotate(failed, cmd, regressed)
    if step_code == 1 and regressed is not None:
        print(f"::error title=hcpspec diff::{len(regressed)} case(s) regressed against {escape(base)}")

    md = os.path.join(out, "summary.md")
    if summary and os.path.exists(md):
        text = inert(open(md, encoding="utf-8").read())
        if len(text.encode()) > MAX_SUMMARY:
            text = text.encode()[:MAX_SUMMARY].decode("utf-8", "ignore") + "\n\n… (cut: see summary.md)\n"
        with open(summary, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    write_outputs(out, os.path.join(out, "result.json"), code, len(failed), version,
                  None if regressed is None else len(regressed))
    return step_code


if __name__ == "__main__":
    sys.exit(main())
